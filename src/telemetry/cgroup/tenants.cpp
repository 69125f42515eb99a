// Walking the cgroup v2 tree for tenant scans; contract in tenants.h.
#include "telemetry/cgroup/tenants.h"
#include "util/utf8.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "telemetry/cgroup/hierarchy.h"
#include "telemetry/cgroup/psi.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry {
namespace fs = std::filesystem;

namespace {

// Reads a small kernel file whole into `buf` (one open, one read, one close): a cgroup
// interface file is one seq_file record. Empty on any failure or when it does not fit.
std::string_view read_small(const fs::path& path, char* buf, std::size_t cap) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO reads as empty
  if (fd < 0) return {};
  const ssize_t n = ::read(fd, buf, cap);
  ::close(fd);
  if (n <= 0 || std::size_t(n) >= cap) return {};
  return {buf, std::size_t(n)};
}

// cpu.stat's usage_usec, NaN when absent.
double usage_usec(std::string_view text) {
  while (!text.empty()) {
    std::string_view line = next_line(text);
    const std::string_view key = next_token(line);
    if (key != "usage_usec") continue;
    if (auto v = parse_u64(next_token(line))) return double(*v);
    return std::nan("");
  }
  return std::nan("");
}

// The "some" line's total (us) of a pressure file, NaN when absent.
double some_total(std::string_view text) {
  while (!text.empty()) {
    std::string_view line = next_line(text);
    if (psi::line_kind(next_token(line)) == 0) return psi::parse_avg10_total(line).total;
  }
  return std::nan("");
}

std::string sanitized(std::string_view name) {
  std::string s(name);
  for (char& c : s)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) c = '_';
  return s;
}

}  // namespace

bool TenantScanner::open(const fs::path& root, std::string& reason) {
  auto h = cgroup::find_hierarchy(root, reason);
  if (!h) {
    dir_.clear();
    return false;
  }
  dir_ = h->dir;
  // /proc/stat is the host's: it stands for the hierarchy's processes only when the hierarchy
  // is the host's (its root has no cgroup.type; inside a cgroup namespace the root seen is a
  // container's cgroup, and the rest of the host would count as its outsiders).
  proc_stat_.clear();
  if (::access((dir_ / "cgroup.type").c_str(), F_OK) != 0) proc_stat_ = root / "proc" / "stat";
  const long hz = ::sysconf(_SC_CLK_TCK);
  clock_ticks_ = hz > 0 ? hz : 100;
  return true;
}

void TenantScanner::scan(std::int64_t t_unix_ns, TenantScan& out) {
  out.t_unix_ns = t_unix_ns;
  out.ids.clear();
  out.counters.clear();
  if (dir_.empty()) return;
  dirs_seen_ = 0;
  const std::uint64_t skipped = skipped_;
  const double before = host_process_us();
  walk(dir_, "", 0, out);
  const double after = host_process_us();
  // The leaves were read between the two: their mean time is about the walk's middle.
  const double host = std::isfinite(before) && std::isfinite(after) ? 0.5 * (before + after)
                      : std::isfinite(before)                       ? before
                                                                    : after;
  add_outside(out, host, skipped_ != skipped);
}

double TenantScanner::host_process_us() const {
  if (proc_stat_.empty()) return std::nan("");
  // The first line of /proc/stat: "cpu  user nice system idle iowait irq softirq steal ...", in
  // USER_HZ ticks. Only its start is read: the file runs to hundreds of kB on big hosts.
  char buf[512];
  const int fd = ::open(proc_stat_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nan("");
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0) return std::nan("");
  std::string_view text(buf, std::size_t(n));
  std::string_view line = next_line(text);
  if (next_token(line) != "cpu") return std::nan("");
  double ticks = 0;
  for (int f = 0; f < 3; ++f) {  // user (guest time included), nice, system
    const auto v = parse_u64(next_token(line));
    if (!v) return std::nan("");
    ticks += double(*v);
  }
  return ticks * 1e6 / double(clock_ticks_);
}

void TenantScanner::add_outside(TenantScan& out, double host, bool skipped) {
  if (!std::isfinite(host)) return;  // no /proc/stat here: no "/" pseudo-tenant
  const std::uint32_t id = id_of(std::string(kOutsideTenants));
  if (id == kNoId) return;
  // Skipped tenants' use would land outside: nothing is added over such a scan's interval.
  const bool counted = std::isfinite(last_host_us_) && host >= last_host_us_ && !skipped;
  if (counted) {
    const double rise = host - last_host_us_;
    double tenants = 0.0;
    for (std::size_t k = 0; k < out.ids.size(); ++k) {
      const double now = out.counters[k].cpu_usage_us;
      if (!std::isfinite(now)) continue;
      const std::uint32_t t = out.ids[k];
      const double was = t < last_usage_.size() ? last_usage_[t] : std::nan("");
      tenants += std::isfinite(was) && now >= was ? now - was : now;  // new or restarted: all of it
    }
    // Signed, so that a scan whose tenants were read late (they rose more than the host) takes
    // back what the previous one gave too much; at most one interval's rise either way.
    // Never more than one interval's rise below the peak: a cgroup that was a parent in the
    // previous scan and is a leaf now (its children gone) counts with its whole usage, and must
    // not keep "/" flat for long after.
    signed_us_ = std::max(signed_us_ + std::clamp(rise - tenants, -rise, rise), outside_us_ - rise);
    outside_us_ = std::max(outside_us_, signed_us_);
  }
  // After a skipped scan the next one only takes its baseline: the tenants left out now would
  // come back with their whole usage.
  last_host_us_ = skipped ? std::nan("") : host;
  for (const std::uint32_t t : last_ids_) last_usage_[t] = std::nan("");
  last_ids_.assign(out.ids.begin(), out.ids.end());
  if (last_usage_.size() < paths_.size()) last_usage_.resize(paths_.size(), std::nan(""));
  for (std::size_t k = 0; k < out.ids.size(); ++k) last_usage_[out.ids[k]] = out.counters[k].cpu_usage_us;
  if (skipped) return;
  TenantCounters c;
  c.cpu_usage_us = outside_us_;
  out.ids.push_back(id);
  out.counters.push_back(c);
}

std::uint32_t TenantScanner::id_of(const std::string& rel) {
  if (auto it = ids_.find(rel); it != ids_.end()) return it->second;
  if (paths_.size() >= kMaxPaths) return kNoId;
  const auto id = std::uint32_t(paths_.size());
  // The name reports and JSON show: bytes that are not UTF-8 as \xNN, as in channel names
  // (reveal's cgroup channels name the same cgroup alike; util/utf8.h).
  paths_.push_back(escape_invalid_utf8(rel));
  ids_.emplace(rel, id);
  return id;
}

void TenantScanner::walk(const fs::path& dir, const std::string& rel, int depth, TenantScan& out) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;  // removed while walking, or unreadable: not in this scan
  std::vector<std::string> children;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) continue;
    const std::string_view name(e->d_name);
    if (name == "." || name == "..") continue;
    if (e->d_type == DT_UNKNOWN) {  // fixture trees on filesystems without d_type
      struct stat st {};
      if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) continue;
    }
    children.emplace_back(name);
  }
  ::closedir(d);
  std::sort(children.begin(), children.end());
  bool has_child_cgroup = false;
  for (const auto& name : children) {
    const fs::path sub = dir / name;
    if (::access((sub / "cgroup.procs").c_str(), F_OK) != 0) continue;  // not a cgroup
    if (depth + 1 > kMaxDepth || ++dirs_seen_ > kMaxDirs) {  // this cgroup stands for it
      ++skipped_;
      continue;
    }
    has_child_cgroup = true;
    const std::string sub_rel = rel.empty() ? sanitized(name) : rel + "/" + sanitized(name);
    walk(sub, sub_rel, depth + 1, out);
  }
  if (!has_child_cgroup && depth > 0) read_tenant(dir, rel, out);
}

void TenantScanner::read_tenant(const fs::path& dir, const std::string& rel, TenantScan& out) {
  if (out.ids.size() >= kMaxTenants) {
    ++skipped_;
    return;
  }
  const std::uint32_t id = id_of(rel);
  if (id == kNoId) {
    ++skipped_;
    return;
  }
  char buf[1024];
  TenantCounters c;
  c.cpu_usage_us = usage_usec(read_small(dir / "cpu.stat", buf, sizeof buf));
  c.cpu_some_us = some_total(read_small(dir / "cpu.pressure", buf, sizeof buf));
  c.memory_some_us = some_total(read_small(dir / "memory.pressure", buf, sizeof buf));
  c.io_some_us = some_total(read_small(dir / "io.pressure", buf, sizeof buf));
  out.ids.push_back(id);
  out.counters.push_back(c);
}

}  // namespace reveal::telemetry
