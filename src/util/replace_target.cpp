// replace_target: see replace_target.h.
#include "replace_target.h"

#include <cerrno>
#include <string>
#include <system_error>

namespace reveal {
namespace fs = std::filesystem;

std::optional<fs::path> replace_target(const fs::path& path) {
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    const fs::path dir = fs::canonical(p.parent_path().empty() ? fs::path(".") : p.parent_path());
    const fs::path full = dir / p.filename();
    const std::string s = full.string();
    if (s.rfind("/dev/", 0) == 0 || s.rfind("/proc/", 0) == 0) return std::nullopt;
    std::error_code ec;
    const auto ls = fs::symlink_status(full, ec);
    if (ls.type() == fs::file_type::not_found) return full;  // a new file, or where a dangling link leads
    if (ec) throw fs::filesystem_error("cannot resolve", full, ec);
    if (!fs::is_symlink(ls)) return full;
    const fs::path next = fs::read_symlink(full);
    p = next.is_absolute() ? next : dir / next;
  }
  throw fs::filesystem_error("cannot resolve", path, std::error_code(ELOOP, std::generic_category()));
}

}  // namespace reveal
