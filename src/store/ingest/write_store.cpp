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
#include "store/ingest/atomic_store.h"
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

namespace importer {

AtomicStore::AtomicStore(const std::filesystem::path& out_arg) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // A symbolic link stays a link: the store it leads to is replaced (created, when dangling).
  out_ = out_arg;
  try {
    out_ = replace_target(out_arg).value_or(out_arg);
  } catch (const fs::filesystem_error& e) {
    throw ImportError(out_arg.string() + ": " + e.code().message());
  }
  // Replace only a previous store (as StoreWriter does): never a device, a directory, someone's
  // other file or a store a recorder is still writing.
  try {
    check_replaceable_store(out_);
  } catch (const StoreError& e) {
    throw ImportError(e.what());
  }
  const auto st = fs::symlink_status(out_, ec);
  keep_mode_ = !ec && fs::exists(st) ? mode_t(st.permissions()) & 07777 : 0;  // the replaced store's
  // Short, so that a 255-byte file name still has room for a temporary one beside it.
  tmp_ = out_.parent_path() / (".reveal-import-" + std::to_string(::getpid()));
  remove_store_files(tmp_);
  guards_.push_back(std::make_unique<RemoveOnSignal>(tmp_.string()));  // Ctrl-C leaves no temporary behind
  for (const auto& side : store_side_files())
    guards_.push_back(std::make_unique<RemoveOnSignal>(tmp_.string() + side.suffix));
}

AtomicStore::~AtomicStore() {
  if (!committed_) remove_store_files(tmp_);
}

void AtomicStore::commit() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (keep_mode_ && ::chmod(tmp_.c_str(), keep_mode_) != 0)
    throw ImportError(out_.string() + ": cannot set the permissions of the new store: " + std::strerror(errno));
  // A previous store at `out` may have left a head log or WAL that would be read with the new file.
  for (const auto& side : store_side_files()) {
    fs::remove(out_.string() + side.suffix, ec);
    if (ec == std::errc::filename_too_long) continue;  // a name that long cannot exist
    if (ec) throw ImportError(out_.string() + side.suffix + ": cannot remove: " + ec.message());
  }
  fs::rename(tmp_, out_, ec);
  if (ec) throw ImportError(out_.string() + ": cannot rename " + tmp_.string() + " to it: " + ec.message());
  committed_ = true;
}

}  // namespace importer

void write_store(const std::filesystem::path& out, const Recording& rec) {
  importer::AtomicStore store(out);
  {
    StoreWriter w(store.temp(), rec.meta, rec.channels);
    for (std::size_t r = 0; r < rec.t_unix_ns.size(); ++r) w.append(rec.t_unix_ns[r], rec.values.row(r));
    for (const auto& e : rec.events) w.append_event(e);
    w.finish(rec.meta.end_unix_ns, rec.meta.exit_code);
  }
  store.commit();
}

}  // namespace reveal
