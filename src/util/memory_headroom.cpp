// Memory headroom under the process's limits; contract in memory_headroom.h.
#include "util/memory_headroom.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
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
  if (!(f >> tok) || tok.empty() || tok.size() > 20) return std::nullopt;
  for (char c : tok)
    if (c < '0' || c > '9') return std::nullopt;  // "max", garbage
  return std::stoull(tok);
}

// Headroom of the cgroup at `dir` and its ancestors up to `top` (inclusive of dir, exclusive of
// top: the hierarchy's root has no limit file).
std::uint64_t headroom_up(fs::path dir, const fs::path& top, const char* limit_file, const char* usage_file) {
  std::uint64_t best = kNone;
  for (int depth = 0; depth < 64; ++depth) {
    const auto limit = bytes_in(dir / limit_file);
    if (limit && *limit < (std::uint64_t{1} << 62)) {  // v1's "unlimited" is 2^63 rounded to a page
      const std::uint64_t used = bytes_in(dir / usage_file).value_or(0);
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
        if (!fs::exists(top / "cgroup.controllers")) continue;
        best = std::min(best, headroom_up(path.empty() ? top : top / path, top, "memory.max", "memory.current"));
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
                                        "memory.usage_in_bytes"));
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
