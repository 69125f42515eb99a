// The atomic store write and channel-info adoption of reveal/ingest.h.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <system_error>
#include <vector>

#include "reveal/ingest.h"
#include "reveal/store.h"
#include "util/remove_on_signal.h"
#include "util/replace_target.h"

namespace reveal {

std::size_t adopt_channel_info(Recording& rec, const std::vector<ChannelInfo>& known) {
  std::map<std::string_view, const ChannelInfo*> by_name;
  for (const auto& ch : known) by_name.emplace(ch.name, &ch);
  std::size_t matched = 0;
  for (auto& ch : rec.channels) {
    const auto it = by_name.find(ch.name);
    if (it == by_name.end()) continue;
    ch = *it->second;
    ++matched;
  }
  return matched;
}

void write_store(const std::filesystem::path& out_arg, const Recording& rec) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // A symbolic link stays a link: the store it leads to is replaced (created, when dangling).
  fs::path out = out_arg;
  try {
    out = replace_target(out_arg).value_or(out_arg);
  } catch (const fs::filesystem_error& e) {
    throw ImportError(out_arg.string() + ": " + e.code().message());
  }
  // Replace only a previous store (as StoreWriter does): never a device, a directory, someone's
  // other file or a store a recorder is still writing.
  try {
    check_replaceable_store(out);
  } catch (const StoreError& e) {
    throw ImportError(e.what());
  }
  const auto st = fs::symlink_status(out, ec);
  const mode_t keep_mode = !ec && fs::exists(st) ? mode_t(st.permissions()) & 07777 : 0;  // the replaced store's
  // Short, so that a 255-byte file name still has room for a temporary one beside it.
  const fs::path tmp = out.parent_path() / (".reveal-import-" + std::to_string(::getpid()));
  remove_store_files(tmp);
  std::vector<std::unique_ptr<RemoveOnSignal>> guards;  // Ctrl-C leaves no temporary behind
  guards.push_back(std::make_unique<RemoveOnSignal>(tmp.string()));
  for (const auto& side : store_side_files())
    guards.push_back(std::make_unique<RemoveOnSignal>(tmp.string() + side.suffix));
  try {
    {
      StoreWriter w(tmp, rec.meta, rec.channels);
      for (std::size_t r = 0; r < rec.t_unix_ns.size(); ++r) w.append(rec.t_unix_ns[r], rec.values.row(r));
      for (const auto& e : rec.events) w.append_event(e);
      w.finish(rec.meta.end_unix_ns, rec.meta.exit_code);
    }
    if (keep_mode && ::chmod(tmp.c_str(), keep_mode) != 0)
      throw ImportError(out.string() + ": cannot set the permissions of the new store: " + std::strerror(errno));
    // A previous store at `out` may have left a head log or WAL that would be read with the new file.
    for (const auto& side : store_side_files()) {
      fs::remove(out.string() + side.suffix, ec);
      if (ec == std::errc::filename_too_long) continue;  // a name that long cannot exist
      if (ec) throw ImportError(out.string() + side.suffix + ": cannot remove: " + ec.message());
    }
    fs::rename(tmp, out, ec);
    if (ec) throw ImportError(out.string() + ": cannot rename " + tmp.string() + " to it: " + ec.message());
  } catch (...) {
    remove_store_files(tmp);
    throw;
  }
}

}  // namespace reveal
