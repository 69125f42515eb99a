#include "telemetry/cgroup/cgroup.h"

#include <cmath>
#include <cstdlib>

#include "telemetry/cgroup/hierarchy.h"
#include "telemetry/cgroup/psi.h"

namespace reveal::telemetry {
namespace {
namespace fs = std::filesystem;
constexpr std::string_view kSource = "cgroup";

struct FieldDef {
  std::string_view file;  // interface file
  std::string_view key;   // key inside it; empty for single-value files
  std::string_view unit;
  Kind kind;
  std::string_view help;
};

constexpr FieldDef kFields[] = {
    {"cpu.stat", "usage_usec", "us", Kind::counter, "CPU time used by the cgroup's tasks"},
    {"cpu.stat", "user_usec", "us", Kind::counter, "user-mode CPU time"},
    {"cpu.stat", "system_usec", "us", Kind::counter, "kernel-mode CPU time"},
    {"cpu.stat", "nr_periods", "count", Kind::counter, "cpu.max enforcement periods elapsed"},
    {"cpu.stat", "nr_throttled", "count", Kind::counter,
     "periods in which the cgroup was throttled by its cpu.max quota"},
    {"cpu.stat", "throttled_usec", "us", Kind::counter, "time throttled by the cpu.max quota"},
    {"cpu.max", "", "cores", Kind::gauge, "CPU limit: quota / period in cores (NaN when unlimited: \"max\")"},
    {"memory.current", "", "bytes", Kind::gauge, "memory charged to the cgroup and descendants"},
    {"memory.max", "", "bytes", Kind::gauge, "hard memory limit (NaN when unlimited: \"max\")"},
    {"memory.events", "low", "count", Kind::counter, "reclaims despite usage under memory.low"},
    {"memory.events", "high", "count", Kind::counter, "times throttled above memory.high"},
    {"memory.events", "max", "count", Kind::counter, "times usage was about to exceed memory.max"},
    {"memory.events", "oom", "count", Kind::counter, "times usage hit the limit and OOM ran"},
    {"memory.events", "oom_kill", "count", Kind::counter, "processes killed by the OOM killer"},
    {"memory.stat", "anon", "bytes", Kind::gauge, "anonymous memory (heap, stacks, anon mmap)"},
    {"memory.stat", "file", "bytes", Kind::gauge, "page cache (file-backed memory)"},
    {"memory.stat", "kernel_stack", "bytes", Kind::gauge, "kernel stacks"},
    {"memory.stat", "shmem", "bytes", Kind::gauge, "shared memory and tmpfs"},
    {"memory.stat", "sock", "bytes", Kind::gauge, "network socket buffers"},
    {"memory.stat", "file_dirty", "bytes", Kind::gauge, "page cache modified, not yet written"},
    {"memory.stat", "file_writeback", "bytes", Kind::gauge, "page cache being written back"},
    {"memory.stat", "pgfault", "count", Kind::counter, "page faults"},
    {"memory.stat", "pgmajfault", "count", Kind::counter, "major page faults (read from disk)"},
    {"memory.stat", "workingset_refault_anon", "count", Kind::counter,
     "refaults of evicted anonymous pages (thrashing)"},
    {"memory.stat", "workingset_refault_file", "count", Kind::counter,
     "refaults of evicted page-cache pages (thrashing)"},
    {"memory.stat", "workingset_refault", "count", Kind::counter,
     "refaults of evicted pages (kernels before 5.9)"},
    {"io.stat", "rbytes", "bytes", Kind::counter, "bytes read, summed over devices"},
    {"io.stat", "wbytes", "bytes", Kind::counter, "bytes written, summed over devices"},
    {"io.stat", "rios", "count", Kind::counter, "read I/Os, summed over devices"},
    {"io.stat", "wios", "count", Kind::counter, "write I/Os, summed over devices"},
    {"io.stat", "dbytes", "bytes", Kind::counter, "bytes discarded, summed over devices"},
    {"io.stat", "dios", "count", Kind::counter, "discard I/Os, summed over devices"},
};

const FieldDef* find_field(std::string_view file, std::string_view key) {
  for (const auto& f : kFields)
    if (f.file == file && f.key == key) return &f;
  return nullptr;
}

Subsystem subsystem_of(std::string_view file) {
  if (file.starts_with("cpu")) return Subsystem::cpu;
  if (file.starts_with("memory")) return Subsystem::memory;
  return Subsystem::storage;  // io.*
}

// "cpu.stat" + "usage_usec" -> "cpu_stat_usage_usec"; "memory.current" -> "memory_current".
std::string field_name(std::string_view file, std::string_view key) {
  std::string f(file);
  for (char& c : f)
    if (c == '.') c = '_';
  if (!key.empty()) f.append("_").append(key);
  return f;
}

// Channel index for a cgroup path: whitespace and control characters become '_'.
std::string index_of(std::string_view rel) {
  std::string s(rel);
  for (char& c : s)
    if (static_cast<unsigned char>(c) <= ' ' || c == '\x7f') c = '_';
  return s;
}

// cpu.max, "<quota> <period>" in µs: the limit in cores; NaN for "max <period>" (no limit) and
// anything else.
double cpu_max_cores(std::string_view text) {
  const auto quota = parse_u64(next_token(text));
  const auto period = parse_u64(next_token(text));
  return quota && period && *period > 0 ? static_cast<double>(*quota) / static_cast<double>(*period) : std::nan("");
}

// Value of a single-value file: a number, or NaN for "max" (no limit) and anything else.
double single_value(std::string_view text) {
  auto v = parse_u64(trim(text));
  return v ? static_cast<double>(*v) : std::nan("");
}
}  // namespace

void CgroupProbe::add_file(const fs::path& dir, std::string_view file, Format format,
                           const std::string& index) {
  Reader r;
  r.format = format;
  // Fixed-key files start at 1 KiB (twice the size seen): their key sets are fixed per kernel.
  // io.stat grows a line per device (95-200 bytes with iocost/iolatency fields), so it keeps
  // the default 4 KiB and its one 4x growth (~100 devices).
  const std::size_t min_capacity = format == Format::io_stat ? FileReader::kMinCapacity : 1024;
  if (!r.file.open(dir / file, nullptr, min_capacity)) return;  // controller not enabled here, or PSI disabled
  // Every file read here is one seq_file record (one ->seq_show), returned whole by one pread
  // when it fits. Never for cgroup.procs or tasks, which the kernel hands out a page at a time.
  r.file.set_single_record(true);
  auto text = r.file.read();
  if (!text) return;
  const std::size_t before = channels_.size();
  const Subsystem sub = subsystem_of(file);
  auto add = [&](std::string field, std::string_view unit, Kind kind, std::string help) {
    channels_.push_back({channel_name(kSource, field, index), std::string(unit), kind, sub, 64,
                         std::move(help)});
  };
  switch (format) {
    case Format::cpu_max:
    case Format::single: {
      std::string_view t = trim(*text);
      if (format == Format::cpu_max) t = next_token(t);  // "max" or the quota, then the period
      if (t != "max" && !parse_u64(t)) return;
      const FieldDef* f = find_field(file, "");
      r.first = channels_.size();
      add(field_name(file, ""), f->unit, f->kind, std::string(f->help));
      break;
    }
    case Format::keyed: {  // "key value" lines, channels in the kernel's line order
      std::string_view rest = *text;
      while (!rest.empty()) {
        std::string_view line = next_line(rest);
        const std::string_view key = next_token(line);
        const FieldDef* f = find_field(file, key);
        if (!f || r.keys.find(key) != KeyIndex::npos) continue;
        r.keys.add(std::string(key), channels_.size());
        add(field_name(file, key), f->unit, f->kind, std::string(f->help));
      }
      break;
    }
    case Format::io_stat: {  // all six, whatever the devices listed now
      r.first = channels_.size();
      for (const auto& f : kFields) {
        if (f.file != file) continue;
        r.keys.add(std::string(f.key), channels_.size());
        add(field_name(file, f.key), f.unit, f.kind, std::string(f.help));
      }
      break;
    }
    case Format::psi: {
      const std::string_view resource = file.substr(0, file.find('.'));
      std::string_view rest = *text;
      while (!rest.empty()) {
        std::string_view line = next_line(rest);
        const std::string_view kind = next_token(line);
        if (psi::line_kind(kind) < 0 || r.keys.find(kind) != KeyIndex::npos) continue;
        r.keys.add(std::string(kind), channels_.size(), 2);
        const std::string who = kind == "some" ? "some" : "all";
        add(field_name(file, kind) + "_avg10", "%", Kind::gauge,
            "% of the last 10 s " + who + " of the cgroup's tasks stalled on " +
                std::string(resource));
        add(field_name(file, kind) + "_total", "us", Kind::counter,
            "time " + who + " of the cgroup's tasks stalled on " + std::string(resource));
      }
      break;
    }
  }
  if (channels_.size() > before) readers_.push_back(std::move(r));
}

ProbeStatus CgroupProbe::open(const fs::path& root) {
  channels_.clear();
  readers_.clear();
  std::string reason;
  const auto h = cgroup::find_hierarchy(root, reason);
  if (!h) return {false, reason};

  std::optional<std::string> parent = parent_;
  if (!parent) {
    if (const char* env = std::getenv("REVEAL_CGROUP_PARENT"); env && *env) parent = env;
  }
  std::vector<std::string> cgroups;
  std::string where = h->dir.string();
  if (parent) {
    const auto p = cgroup::normalize_parent(*parent);
    if (!p) return {false, "cgroup parent '" + *parent + "' must stay inside the cgroup root"};
    std::error_code ec;
    if (!p->empty()) where = (h->dir / *p).string();
    if (!fs::is_directory(where, ec)) return {false, "cgroup parent not found (" + where + ")"};
    cgroups = cgroup::child_cgroups(h->dir, *p);
  } else {
    cgroups = cgroup::default_cgroups(h->dir);
  }
  if (cgroups.empty())
    return {false, "no cgroups to watch under " + where +
                       (h->hybrid ? " (hybrid v1/v2 host: the v2 tree has no child cgroups)" : "")};

  for (const auto& rel : cgroups) {
    const fs::path dir = rel.empty() ? h->dir : h->dir / rel;
    const std::string index = index_of(rel);
    add_file(dir, "cpu.stat", Format::keyed, index);
    add_file(dir, "cpu.max", Format::cpu_max, index);
    add_file(dir, "memory.current", Format::single, index);
    add_file(dir, "memory.max", Format::single, index);
    add_file(dir, "memory.events", Format::keyed, index);
    add_file(dir, "memory.stat", Format::keyed, index);
    add_file(dir, "io.stat", Format::io_stat, index);
    add_file(dir, "cpu.pressure", Format::psi, index);
    add_file(dir, "memory.pressure", Format::psi, index);
    add_file(dir, "io.pressure", Format::psi, index);
  }
  if (channels_.empty()) return {false, "no readable cgroup files under " + where};
  return {true, {}};
}

void CgroupProbe::sample(std::span<double> out) {
  for (double& v : out) v = std::nan("");
  for (auto& r : readers_) {
    auto text = r.file.read();
    if (!text) continue;  // e.g. the cgroup was removed: its channels stay NaN
    std::string_view rest = *text;
    switch (r.format) {
      case Format::single:
        out[r.first] = single_value(rest);
        break;
      case Format::cpu_max:
        out[r.first] = cpu_max_cores(rest);
        break;
      case Format::keyed:
        while (!rest.empty()) {
          std::string_view line = next_line(rest);
          const std::size_t k = r.keys.find(next_token(line));
          if (k != KeyIndex::npos) out[r.keys[k].slot] = next_u64_as_double(line);
        }
        break;
      case Format::io_stat:  // "MAJ:MIN rbytes=N wbytes=N rios=N wios=N dbytes=N dios=N ..."
        for (std::size_t i = 0; i < r.keys.size(); ++i) out[r.first + i] = 0;
        while (!rest.empty()) {
          std::string_view line = next_line(rest);
          if (next_token(line).empty()) continue;  // device, or a blank line
          for (auto tok = next_token(line); !tok.empty(); tok = next_token(line)) {
            const auto eq = tok.find('=');
            if (eq == std::string_view::npos) continue;
            const std::size_t k = r.keys.find(tok.substr(0, eq));
            if (k == KeyIndex::npos) continue;  // cost.*, latency fields of io controllers
            auto v = parse_u64(tok.substr(eq + 1));
            out[r.keys[k].slot] += v ? static_cast<double>(*v) : std::nan("");
          }
        }
        break;
      case Format::psi:
        while (!rest.empty()) {
          std::string_view line = next_line(rest);
          const std::size_t k = r.keys.find(next_token(line));
          if (k == KeyIndex::npos) continue;
          const auto s = psi::parse_avg10_total(line);
          out[r.keys[k].slot] = s.avg10;
          out[r.keys[k].slot + 1] = s.total;
        }
        break;
    }
  }
}

}  // namespace reveal::telemetry
