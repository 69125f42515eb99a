// Memory headroom under the process's limits; contract in memory_headroom.h.
#include "util/memory_headroom.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

namespace reveal {
namespace fs = std::filesystem;
namespace {

constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();

// The first token of a small file as a byte count; nullopt when absent, "max" or not a number.
std::optional<std::uint64_t> bytes_in(const fs::path& p) {
  std::ifstream f(p);
  std::string tok;
  if (!(f >> tok)) return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (ec != std::errc() || end != tok.data() + tok.size()) return std::nullopt;  // "max", garbage, too large
  return v;
}

// A memory.stat field ("inactive_file 123"); 0 when absent.
std::uint64_t stat_field(const fs::path& p, const std::string& key) {
  std::ifstream f(p);
  std::string k, v;
  for (int n = 0; n < 256 && f >> k >> v; ++n)
    if (k == key) {
      std::uint64_t x = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      return ec == std::errc() && end == v.data() + v.size() ? x : 0;
    }
  return 0;
}

// Headroom of the cgroup at `dir` and its ancestors up to `top`, both included (the real
// root has no limit file; a namespace's or a bind-mounted root may). Used memory is the
// usage less the inactive page cache, which the kernel reclaims first (kubelet's working set).
std::uint64_t headroom_up(fs::path dir, const fs::path& top, const char* limit_file, const char* usage_file,
                          const char* inactive_key) {
  std::uint64_t best = kNone;
  for (int depth = 0; depth < 64; ++depth) {
    const auto limit = bytes_in(dir / limit_file);
    if (limit && *limit < (std::uint64_t{1} << 62)) {  // v1's "unlimited" is 2^63 rounded to a page
      std::uint64_t used = bytes_in(dir / usage_file).value_or(0);
      used -= std::min(used, stat_field(dir / "memory.stat", inactive_key));
      best = std::min(best, *limit > used ? *limit - used : 0);
    }
    if (dir == top || !dir.has_parent_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
  return best;
}

}  // namespace

std::uint64_t cgroup_memory_headroom(const fs::path& root) {
  std::ifstream f(root / "proc/self/cgroup");
  std::uint64_t best = kNone;
  std::string line;
  for (int n = 0; n < 64 && std::getline(f, line); ++n) {
    // "hierarchy-id:controllers:path"
    const auto a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    if (path.empty() || path[0] != '/' || path.find("..") != std::string::npos) continue;
    path.erase(0, 1);
    if (id == "0" && controllers.empty()) {  // cgroup v2
      for (const char* mount : {"sys/fs/cgroup", "sys/fs/cgroup/unified"}) {
        const fs::path top = root / mount;
        std::error_code ec;
        if (!fs::exists(top / "cgroup.controllers", ec)) continue;
        best = std::min(best, headroom_up(path.empty() ? top : top / path, top, "memory.max", "memory.current",
                                          "inactive_file"));
        break;
      }
    } else {  // cgroup v1: the memory controller's hierarchy
      std::stringstream cs(controllers);
      std::string c;
      bool memory = false;
      while (std::getline(cs, c, ',')) memory |= c == "memory";
      if (!memory) continue;
      const fs::path top = root / "sys/fs/cgroup/memory";
      best = std::min(best, headroom_up(path.empty() ? top : top / path, top, "memory.limit_in_bytes",
                                        "memory.usage_in_bytes", "total_inactive_file"));
    }
  }
  return best;
}

std::uint64_t memory_headroom() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  std::uint64_t best = pages > 0 && page > 0 ? std::uint64_t(pages) * std::uint64_t(page) : std::uint64_t{1} << 33;
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    unsigned long long size_pages = 0;  // the process's address space now
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%llu", &size_pages) != 1) size_pages = 0;
      std::fclose(f);
    }
    const std::uint64_t now = std::uint64_t(size_pages) * std::uint64_t(page > 0 ? page : 4096);
    best = std::min<std::uint64_t>(best, as.rlim_cur > now ? as.rlim_cur - now : 0);
  }
  return std::min(best, cgroup_memory_headroom("/"));
}

}  // namespace reveal
