// CPU cost of one sampling tick, broken down by probe and by the store append.
//
// usage: reveal_sample_cost [SAMPLES=300] [ROOT=/] [GAP_MS=2]
// Opens every probe enabled by default (as `reveal record` does), takes SAMPLES samples GAP_MS
// apart (1000 reproduces what a 1 Hz recorder finds: caches gone cold between ticks) and prints,
// per probe, the median and mean CPU time of its sample() call (this thread's user + system
// time, CLOCK_THREAD_CPUTIME_ID), then the same for StoreWriter::append of the whole row into a
// temporary store, and the total. This is how the recorder's per-sample cost is broken down
// (docs/BENCHMARKS.md); timer overhead (one clock_gettime pair per probe, ≈0.3 µs here) is
// included in each row. Last, the cost of one re-read of the host configuration, which
// `reveal record` does every --config-interval.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "reveal/host_config.h"
#include "reveal/sampler.h"
#include "reveal/store.h"

namespace {
double cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) * 1e-3;
}
struct Stat {
  std::string name;
  std::vector<double> us;
  double median() {
    std::sort(us.begin(), us.end());
    return us.empty() ? 0 : us[us.size() / 2];
  }
  double mean() const {
    double s = 0;
    for (double v : us) s += v;
    return us.empty() ? 0 : s / double(us.size());
  }
};
}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::max(1, std::atoi(argv[1])) : 300;
  const std::filesystem::path root = argc > 2 ? argv[2] : "/";
  const int gap_us = (argc > 3 ? std::max(0, std::atoi(argv[3])) : 2) * 1000;
  auto probes = reveal::make_probes({}, {});
  std::vector<reveal::Probe*> raw;
  for (auto& p : probes) raw.push_back(p.get());
  // Open each probe ourselves so each can be timed alone; the Sampler does the same in one loop.
  std::vector<Stat> stats;
  std::vector<std::size_t> offsets;
  std::size_t width = 0;
  std::vector<reveal::Probe*> live;
  std::vector<reveal::ChannelInfo> channels;
  for (auto* p : raw) {
    auto st = p->open(root);
    if (!st.available || p->channels().empty()) continue;
    live.push_back(p);
    offsets.push_back(width);
    width += p->channels().size();
    channels.insert(channels.end(), p->channels().begin(), p->channels().end());
    stats.push_back({std::string(p->name()) + " (" + std::to_string(p->channels().size()) + ")", {}});
  }
  std::vector<double> row(width);
  const auto dir = std::filesystem::temp_directory_path() / ("reveal_sample_cost." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  Stat store{"store append", {}}, total{"total", {}};
  {
    reveal::RunMetadata meta;
    meta.interval_s = 1;
    reveal::StoreWriter w(dir / "cost.db", meta, channels);
    std::vector<reveal::Event> events;
    for (int i = 0; i < n; ++i) {
      const double t0 = cpu_us();
      for (std::size_t k = 0; k < live.size(); ++k) {
        const double a = cpu_us();
        live[k]->sample(std::span<double>(row).subspan(offsets[k], live[k]->channels().size()));
        events.clear();
        live[k]->poll_events(0, events);
        stats[k].us.push_back(cpu_us() - a);
      }
      const double a = cpu_us();
      w.append(reveal::realtime_ns(), row);
      store.us.push_back(cpu_us() - a);
      total.us.push_back(cpu_us() - t0);
      usleep(gap_us);  // other work runs meanwhile: caches go cold, as between real ticks
    }
    w.finish(reveal::realtime_ns(), 0);
  }
  std::filesystem::remove_all(dir);
  // The recorder also re-reads the host configuration every --config-interval (default 60 s).
  Stat config{"config re-read (each)", {}};
  for (int i = 0; i < std::min(n, 50); ++i) {
    const double a = cpu_us();
    const auto snap = reveal::read_config(root);
    config.us.push_back(cpu_us() - a);
    usleep(2000);
  }
  std::printf("%-28s %10s %10s\n", "part (channels)", "median_us", "mean_us");
  stats.push_back(std::move(store));
  stats.push_back(std::move(total));
  stats.push_back(std::move(config));
  for (auto& s : stats) {
    const double mean = s.mean();
    std::printf("%-28s %10.1f %10.1f\n", s.name.c_str(), s.median(), mean);
  }
  return 0;
}
