// Derived metrics computed per sample from rate-converted channels (see features.h).
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "memory_fill.h"
#include "recent_count.h"
#include "reveal/features.h"

namespace reveal {
namespace {

constexpr std::array<const char*, 8> kCpuStates = {"user", "nice", "system", "idle",
                                                    "iowait", "irq", "softirq", "steal"};
const double kNaN = std::nan("");

double ratio(double num, double den, double scale) {
  if (!std::isfinite(num) || !std::isfinite(den) || den <= 0) return kNaN;
  return scale * num / den;
}

// Collects new columns, then appends them (and drops superseded raw channels) in one pass.
class Builder {
 public:
  // plan_only: add() records each derived channel and its formula without evaluating it
  // (DerivedRow evaluates them one row at a time).
  Builder(Series& s, bool keep_empty, bool plan_only = false)
      : s_(s), keep_empty_(keep_empty), plan_only_(plan_only) {}
  double v(int col, std::size_t row) const { return col < 0 ? kNaN : s_.values(row, col); }
  double t(std::size_t row) const { return s_.t_s[row]; }
  int col(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? -1 : it->second;
  }
  void index() { for (std::size_t i = 0; i < s_.channels.size(); ++i) index_[s_.channels[i].name] = int(i); }
  void add(std::string name, std::string unit, Subsystem sub, std::string help,
           const std::function<double(std::size_t)>& f) {
    ChannelInfo c;
    c.name = "derived:" + std::move(name);
    c.unit = std::move(unit);
    c.kind = Kind::gauge;
    c.subsystem = sub;
    c.help = std::move(help);
    if (plan_only_) {
      new_channels_.push_back(std::move(c));
      formulas_.push_back(f);
      return;
    }
    std::vector<double> col(s_.t_s.size());
    bool any = false;
    for (std::size_t r = 0; r < col.size(); ++r) {
      col[r] = f(r);
      any = any || std::isfinite(col[r]);
    }
    if (!any && !keep_empty_) return;  // inputs absent on this host: no channel
    new_channels_.push_back(std::move(c));
    new_columns_.push_back(std::move(col));
  }
  void drop(int col) { if (col >= 0) drop_.insert(col); }
  void commit() {
    const std::size_t n = s_.t_s.size();
    std::vector<std::size_t> keep;
    for (std::size_t c = 0; c < s_.channels.size(); ++c) if (!drop_.count(c)) keep.push_back(c);
    Matrix m(n, keep.size() + new_columns_.size());
    std::vector<ChannelInfo> chans;
    for (std::size_t j = 0; j < keep.size(); ++j) {
      chans.push_back(s_.channels[keep[j]]);
      for (std::size_t r = 0; r < n; ++r) m(r, j) = s_.values(r, keep[j]);
    }
    for (std::size_t k = 0; k < new_columns_.size(); ++k) {
      chans.push_back(new_channels_[k]);
      for (std::size_t r = 0; r < n; ++r) m(r, keep.size() + k) = new_columns_[k][r];
    }
    s_.channels = std::move(chans);
    s_.values = std::move(m);
  }

 private:
  // DerivedRow's view of the plan.
 public:
  const std::vector<ChannelInfo>& planned_channels() const { return new_channels_; }
  const std::vector<std::function<double(std::size_t)>>& formulas() const { return formulas_; }
  std::vector<std::size_t> kept_columns() const {
    std::vector<std::size_t> keep;
    for (std::size_t c = 0; c < s_.channels.size(); ++c) if (!drop_.count(c)) keep.push_back(c);
    return keep;
  }

 private:
  Series& s_;
  bool keep_empty_ = false, plan_only_ = false;
  std::vector<std::function<double(std::size_t)>> formulas_;
  std::map<std::string, int> index_;
  std::vector<ChannelInfo> new_channels_;
  std::vector<std::vector<double>> new_columns_;
  std::set<std::size_t> drop_;
};

// Labels ("cpu0", "eth0", ...) seen for a "<source>:<field>.<label>" family.
std::vector<std::string> labels_of(const Series& s, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& c : s.channels)
    if (c.name.compare(0, prefix.size(), prefix) == 0 && c.name.size() > prefix.size() &&
        c.name[prefix.size()] == '.')
      out.push_back(c.name.substr(prefix.size() + 1));
  return out;
}

void derive_cpu(Builder& b, const Series& s) {
  std::vector<std::string> suffixes = {""};
  for (auto& l : labels_of(s, "proc.stat:user")) suffixes.push_back("." + l);
  for (const auto& sfx : suffixes) {
    std::array<int, kCpuStates.size()> cols;
    for (std::size_t k = 0; k < kCpuStates.size(); ++k)
      cols[k] = b.col(std::string("proc.stat:") + kCpuStates[k] + sfx);
    if (cols[0] < 0 || cols[3] < 0) continue;
    auto total = [&b, cols](std::size_t r) {
      double t = 0;
      bool any = false;
      for (int c : cols) {
        double x = b.v(c, r);
        if (std::isfinite(x)) { t += x; any = true; }
      }
      return any ? t : kNaN;
    };
    const std::string where = sfx.empty() ? "host" : sfx.substr(1);
    for (std::size_t k = 0; k < kCpuStates.size(); ++k) {
      if (cols[k] < 0) continue;
      const int c = cols[k];
      b.add(std::string("cpu_") + kCpuStates[k] + "_pct" + sfx, "%", Subsystem::cpu,
            std::string("share of CPU time in ") + kCpuStates[k] + " (" + where + ")",
            [&b, c, total](std::size_t r) { return ratio(b.v(c, r), total(r), 100.0); });
    }
    const int idle = cols[3], iowait = cols[4];
    b.add("cpu_busy_pct" + sfx, "%", Subsystem::cpu, "share of CPU time not idle (" + where + ")",
          [&b, idle, iowait, total](std::size_t r) {
            double t = total(r), id = b.v(idle, r), io = iowait >= 0 ? b.v(iowait, r) : 0.0;
            if (!std::isfinite(io)) io = 0;
            return ratio(t - id - io, t, 100.0);
          });
    for (int c : cols) b.drop(c);
  }
}

void derive_memory(Builder& b) {
  const int total = b.col("proc.meminfo:MemTotal"), avail = b.col("proc.meminfo:MemAvailable");
  b.add("mem_used_pct", "%", Subsystem::memory, "memory in use: 1 − MemAvailable/MemTotal",
        [&b, total, avail](std::size_t r) { return ratio(b.v(total, r) - b.v(avail, r), b.v(total, r), 100.0); });
  // The pace at which what is available is used up (features/memory_fill.h). Stateful: the
  // formula sees the rows in time order, offline (Builder::add) and streaming (one per compute).
  if (avail >= 0) {
    auto pace = std::make_shared<features::MemoryFillPace>();
    b.add("mem_fill_pct_per_min", "%/min", Subsystem::memory,
          "share of available memory used up per minute, at the pace MemAvailable fell steadily over the last 15 s "
          "(0: none, or slower than empty within 5 minutes)",
          [&b, avail, pace](std::size_t r) { return pace->push(b.t(r), b.v(avail, r)); });
  }
  // Drops of the page cache or slab through /proc/sys/vm/drop_caches, counted over the last
  // 20 s, per minute (features/recent_count.h): a level that holds while someone keeps dropping
  // them and falls 20 s after they stop. Stateful, like the fill pace.
  const int pc = b.col("proc.vmstat:drop_pagecache"), slab = b.col("proc.vmstat:drop_slab");
  if (pc >= 0 || slab >= 0) {
    auto recent = std::make_shared<features::RecentCount>(20.0);
    b.add("drop_caches_per_min", "count/min", Subsystem::memory,
          "drops of the page cache or slab through /proc/sys/vm/drop_caches per minute, counted over the last 20 s "
          "(/proc/vmstat drop_pagecache + drop_slab: writing 3 counts twice; one drop reads 3 for 20 s)",
          [&b, pc, slab, recent](std::size_t r) {
            const double a = b.v(pc, r), c = b.v(slab, r);
            const double n = recent->push(b.t(r), (std::isfinite(a) ? a : 0.0) + (std::isfinite(c) ? c : 0.0));
            return n * (60.0 / recent->window_s());
          });
  }
  const int st = b.col("proc.meminfo:SwapTotal"), sf = b.col("proc.meminfo:SwapFree");
  b.add("swap_used_pct", "%", Subsystem::memory, "swap in use: 1 − SwapFree/SwapTotal",
        [&b, st, sf](std::size_t r) { return ratio(b.v(st, r) - b.v(sf, r), b.v(st, r), 100.0); });
}

void derive_network(Builder& b, const Series& s) {
  for (const char* dir : {"rx", "tx"}) {
    std::vector<int> cols;
    for (auto& l : labels_of(s, std::string("proc.net.dev:") + dir + "_bytes"))
      cols.push_back(b.col(std::string("proc.net.dev:") + dir + "_bytes." + l));
    if (cols.empty()) continue;
    b.add(std::string("net_") + dir + "_bytes_per_s", "bytes/s", Subsystem::network,
          std::string(dir) + " throughput summed over all interfaces", [&b, cols](std::size_t r) {
            double t = 0;
            for (int c : cols) {
              double x = b.v(c, r);
              if (!std::isfinite(x)) return kNaN;
              t += x;
            }
            return t;
          });
  }
  // Retransmissions for loss: segments retransmitted, less those the receiver reported it already
  // had (D-SACK, RFC 2883: the retransmission was spurious, RFC 3708). Delay alone (a busy CPU,
  // reordering) makes TCP retransmit segments that were not lost, and the receiver says so; a
  // lost segment is never reported. On a healthy busy host 98 % of the retransmissions were
  // spurious, under 3 % packet loss 4 % (docs/BENCHMARKS.md). D-SACK'd segments are counted by
  // TCPDSACKRecvSegs (Linux 5.10+), else approximated by TCPDSACKRecv (D-SACK blocks); without
  // either, every retransmission counts.
  const int re = b.col("proc.net.snmp:Tcp_RetransSegs"), out = b.col("proc.net.snmp:Tcp_OutSegs");
  const int dsack_segs = b.col("proc.net.snmp:TcpExt_TCPDSACKRecvSegs"), dsack = b.col("proc.net.snmp:TcpExt_TCPDSACKRecv");
  const int spurious = dsack_segs >= 0 ? dsack_segs : dsack;
  const auto lost = [&b, re, spurious](std::size_t r) {
    const double x = b.v(re, r);
    if (spurious < 0) return x;
    const double d = b.v(spurious, r);
    return std::isfinite(x) && std::isfinite(d) ? std::max(0.0, x - d) : kNaN;
  };
  b.add("tcp_loss_retrans_per_s", "segments/s", Subsystem::network,
        "TCP segments retransmitted that the receiver did not report as received already (D-SACK): "
        "retransmissions for loss",
        lost);
  b.add("tcp_retrans_pct", "%", Subsystem::network, "TCP segments retransmitted for loss per segment sent",
        [&b, lost, out](std::size_t r) { return ratio(lost(r), b.v(out, r), 100.0); });
}

void derive_disk(Builder& b, const Series& s) {
  for (auto& dev : labels_of(s, "proc.diskstats:reads_completed")) {
    const std::string sfx = "." + dev;
    const int sr = b.col("proc.diskstats:sectors_read" + sfx), sw = b.col("proc.diskstats:sectors_written" + sfx);
    const int rc = b.col("proc.diskstats:reads_completed" + sfx), wc = b.col("proc.diskstats:writes_completed" + sfx);
    const int io = b.col("proc.diskstats:io_time_ms" + sfx);
    b.add("disk_read_bytes_per_s" + sfx, "bytes/s", Subsystem::storage, "bytes read from " + dev,
          [&b, sr](std::size_t r) { return b.v(sr, r) * 512.0; });
    b.add("disk_write_bytes_per_s" + sfx, "bytes/s", Subsystem::storage, "bytes written to " + dev,
          [&b, sw](std::size_t r) { return b.v(sw, r) * 512.0; });
    b.add("disk_iops" + sfx, "ops/s", Subsystem::storage, "reads + writes completed on " + dev,
          [&b, rc, wc](std::size_t r) { return b.v(rc, r) + b.v(wc, r); });
    b.add("disk_util_pct" + sfx, "%", Subsystem::storage, "share of time " + dev + " had I/O in flight",
          [&b, io](std::size_t r) { double x = b.v(io, r) / 10.0; return std::isfinite(x) ? std::min(x, 100.0) : kNaN; });
    b.drop(sr);
    b.drop(sw);
  }
}

void derive_psi(Builder& b) {
  for (const char* res : {"cpu", "memory", "io"})
    for (const char* level : {"some", "full"}) {
      const int c = b.col(std::string("proc.pressure:") + res + "_" + level + "_total");
      const Subsystem sub = res[0] == 'c' ? Subsystem::cpu : res[0] == 'm' ? Subsystem::memory : Subsystem::storage;
      b.add(std::string("psi_") + res + "_" + level + "_pct", "%", sub,
            std::string("share of wall time ") + (level[0] == 's' ? "some" : "all") + " tasks stalled on " + res,
            [&b, c](std::size_t r) { return b.v(c, r) / 1e4; });  // µs stalled per s → %
      b.drop(c);
    }
}

// Run-queue wait from /proc/schedstat (telemetry/procfs/schedstat.h): seconds runnable tasks
// waited per second, per online CPU — the average number of tasks waiting for each CPU. PSI's
// cpu "some" stops at 100 % once one task always waits; this keeps rising with every extra
// runnable task, so contention on an already saturated host still shows. Its role is
// saturation (channel_role): a symptom for the workload-change gate (one more task waiting
// per CPU), load in attribution — as a full symptom, its instantaneous view (procs_running
// beyond the CPUs) named the labelled suite's network and disk faults cpu (their traffic and
// I/O workers are runnable tasks too; subsystem top-1 0.94 → 0.62).
void derive_sched(Builder& b, const Series& s) {
  const int delay = b.col("proc.schedstat:run_delay");
  const std::size_t ncpu = labels_of(s, "proc.schedstat:run_delay").size();
  if (delay < 0 || ncpu == 0) return;
  const double per_cpu = 1e-9 / double(ncpu);
  b.add("runqueue_wait_per_cpu", "s/s", Subsystem::cpu,
        "time runnable tasks waited for a CPU, per second and online CPU (run_delay / CPUs)",
        [&b, delay, per_cpu](std::size_t r) { return b.v(delay, r) * per_cpu; });
  b.drop(delay);
}

// perf(1) event ratios from perf.hardware / perf.uncore (telemetry/perf/*.h). Each is a
// ratio of two rates, i.e. of the counts in one interval; a ratio whose inputs are absent on
// this host (event not defined by the PMU) yields no channel.
void derive_perf(Builder& b, const Series& s) {
  struct PerfRatio {
    const char* name;
    const char* num;
    const char* den;
    double scale;
    const char* unit;
    Subsystem sub;
    const char* help;
  };
  static constexpr PerfRatio kRatios[] = {
      {"ipc", "instructions", "cycles", 1.0, "instructions/cycle", Subsystem::cpu, "instructions per cycle"},
      {"branch_miss_pct", "branch-misses", "branches", 100.0, "%", Subsystem::cpu, "branch misses per branch"},
      {"cache_miss_pct", "cache-misses", "cache-references", 100.0, "%", Subsystem::memory,
       "cache misses per cache reference"},
      {"l1d_load_miss_pct", "L1-dcache-load-misses", "L1-dcache-loads", 100.0, "%", Subsystem::memory,
       "L1 data cache load misses per load"},
      {"llc_load_miss_pct", "LLC-load-misses", "LLC-loads", 100.0, "%", Subsystem::memory,
       "last-level cache load misses per LLC load"},
      {"dtlb_load_miss_pct", "dTLB-load-misses", "dTLB-loads", 100.0, "%", Subsystem::memory,
       "data TLB load misses per dTLB load"},
      {"l3_stall_pct", "cycle_activity.stalls_l3_miss", "cycles", 100.0, "%", Subsystem::memory,
       "share of cycles stalled on an outstanding L3 miss"},
      {"frontend_stall_pct", "stalled-cycles-frontend", "cycles", 100.0, "%", Subsystem::cpu,
       "share of cycles the frontend delivered nothing"},
      {"backend_stall_pct", "stalled-cycles-backend", "cycles", 100.0, "%", Subsystem::cpu,
       "share of cycles the backend accepted nothing"},
  };
  for (const auto& r : kRatios) {
    const int num = b.col(std::string("perf:") + r.num), den = b.col(std::string("perf:") + r.den);
    const double k = r.scale;
    b.add(r.name, r.unit, r.sub, r.help,
          [&b, num, den, k](std::size_t row) { return ratio(b.v(num, row), b.v(den, row), k); });
  }
  // Per-core IPC from the per-CPU cycles/instructions channels.
  for (const auto& l : labels_of(s, "perf:cycles")) {
    const int ins = b.col("perf:instructions." + l), cyc = b.col("perf:cycles." + l);
    b.add("ipc." + l, "instructions/cycle", Subsystem::cpu, "instructions per cycle (" + l + ")",
          [&b, ins, cyc](std::size_t row) { return ratio(b.v(ins, row), b.v(cyc, row), 1.0); });
  }
  // DRAM bandwidth: Intel uncore IMC reads + writes, or AMD data fabric.
  const int rd = b.col("perf:uncore_imc_read_bytes"), wr = b.col("perf:uncore_imc_write_bytes");
  const int df = b.col("perf:amd_df_dram_bytes");
  b.add("mem_bandwidth_bytes_per_s", "bytes/s", Subsystem::memory, "DRAM traffic, reads + writes, all sockets",
        [&b, rd, wr, df](std::size_t row) { return df >= 0 ? b.v(df, row) : b.v(rd, row) + b.v(wr, row); });
}

void derive_all(Builder& b, const Series& s) {
  b.index();
  derive_cpu(b, s);
  derive_memory(b);
  derive_network(b, s);
  derive_disk(b, s);
  derive_psi(b);
  derive_sched(b, s);
  derive_perf(b, s);
}

}  // namespace

void add_derived(Series& s, bool keep_empty) {
  Builder b(s, keep_empty);
  derive_all(b, s);
  b.commit();
}

struct DerivedRow::Plan {
  Series row;  // one row: the rates the formulas read
  std::unique_ptr<Builder> builder;
  std::vector<std::size_t> kept;
};

DerivedRow::DerivedRow(const std::vector<ChannelInfo>& rate_channels) : plan_(std::make_unique<Plan>()) {
  plan_->row.channels = rate_channels;
  plan_->row.t_s.assign(1, 0.0);
  plan_->row.values = Matrix(1, rate_channels.size(), kNaN);
  plan_->builder = std::make_unique<Builder>(plan_->row, /*keep_empty=*/true, /*plan_only=*/true);
  derive_all(*plan_->builder, plan_->row);
  plan_->kept = plan_->builder->kept_columns();
  for (std::size_t c : plan_->kept) channels_.push_back(rate_channels[c]);
  for (const auto& c : plan_->builder->planned_channels()) channels_.push_back(c);
}

DerivedRow::~DerivedRow() = default;

void DerivedRow::compute(double t_s, std::span<const double> rates, std::span<double> out) {
  plan_->row.t_s[0] = t_s;
  auto in = plan_->row.values.row(0);
  std::copy(rates.begin(), rates.end(), in.begin());
  std::size_t j = 0;
  for (std::size_t c : plan_->kept) out[j++] = in[c];
  for (const auto& f : plan_->builder->formulas()) out[j++] = f(0);
}

}  // namespace reveal
