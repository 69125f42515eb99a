// Read speed of a store: values decoded per second by load_recording, whole and partial.
//
// usage: reveal_store_decode STORE [REPEATS=5]
// Loads STORE REPEATS times (all channels, all samples) and prints the median wall time and
// values (samples × channels) per second; then the same for one channel group's worth of
// channels (the first 64) and for the last tenth of the time range, which decode only the
// chunks and channel groups they need. Issue #4's goal: ≥ 50 M values/s on the development VM.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "reveal/store.h"

namespace {
double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}
void measure(const char* what, const char* path, const reveal::LoadOptions& o, int repeats) {
  std::vector<double> s;
  std::size_t values = 0;
  for (int i = 0; i < repeats; ++i) {
    const double t0 = now_s();
    const auto rec = reveal::load_recording(path, o);
    s.push_back(now_s() - t0);
    values = rec.t_unix_ns.size() * rec.channels.size();
  }
  std::sort(s.begin(), s.end());
  const double med = s[s.size() / 2];
  std::printf("%-34s %12zu values %9.1f ms %8.1f M values/s\n", what, values, med * 1e3, double(values) / med * 1e-6);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: reveal_store_decode STORE [REPEATS]\n");
    return 2;
  }
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  try {
    const auto all = reveal::load_recording(argv[1]);
    std::printf("%s: %zu samples × %zu channels\n", argv[1], all.t_unix_ns.size(), all.channels.size());
    measure("all channels, all samples", argv[1], {}, repeats);
    reveal::LoadOptions group;
    std::vector<std::string> names;
    for (std::size_t c = 0; c < std::min<std::size_t>(64, all.channels.size()); ++c) names.push_back(all.channels[c].name);
    group.keep_channel = [&names](const reveal::ChannelInfo& ch) {
      return std::find(names.begin(), names.end(), ch.name) != names.end();
    };
    measure("first 64 channels, all samples", argv[1], group, repeats);
    if (all.t_unix_ns.size() >= 10) {
      reveal::LoadOptions tail;
      tail.start_unix_ns = all.t_unix_ns[all.t_unix_ns.size() * 9 / 10];
      measure("all channels, last tenth of time", argv[1], tail, repeats);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reveal_store_decode: %s\n", e.what());
    return 3;
  }
  return 0;
}
