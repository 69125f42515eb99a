#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "reveal/streaming.h"
#include "reveal/tenants.h"

namespace reveal {
namespace {

constexpr std::int64_t kT0 = std::int64_t(1'700'000'000) * 1'000'000'000;
constexpr std::int64_t kS = 1'000'000'000;

// Tenant scans every 5 s: "job" uses 1 core throughout; "hog" idles, then uses 2 cores over
// [hog_from, hog_to) seconds.
TenantTimeline scans(double hog_from, double hog_to, int seconds) {
  TenantTimeline tl;
  tl.paths = {"job", "hog"};
  double job_us = 0, hog_us = 0;
  for (int t = 0; t <= seconds; t += 5) {
    TenantScan s;
    s.t_unix_ns = kT0 + std::int64_t(t) * kS;
    s.ids = {0, 1};
    s.counters.resize(2);
    s.counters[0].cpu_usage_us = job_us;
    s.counters[1].cpu_usage_us = hog_us;
    for (auto& c : s.counters) c.cpu_some_us = c.memory_some_us = c.io_some_us = 0;
    tl.scans.push_back(s);
    for (int k = t; k < t + 5; ++k) {
      job_us += 1e6;
      if (k >= hog_from && k < hog_to) hog_us += 2e6;
    }
  }
  return tl;
}

// The tenants a closed incident names are those of its final start and end, as `reveal
// detect` judges them on the same scans (judge_tenants), fed one sample at a time as the agent
// does. (The case where the open incident's end had run past onset + kTenantAfterS before the
// close took it back is checked on real cgroups by tests/cli/e2e_tenants_test.sh: live and the
// replay name the same CPU use.)
TEST(TenantFeed, AClosedIncidentsTenantsAreThoseOfItsFinalSpan) {
  std::vector<ChannelInfo> ch = {{"test:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                                 {"test:mem_used", "%", Kind::gauge, Subsystem::memory}};
  RunMetadata meta;
  meta.cores = 4;
  StreamingOptions o;
  o.warmup_samples = 60;
  o.refit_samples = 30;
  o.history_samples = 300;
  o.workload_changes = false;
  StreamingDetector d(meta, ch, o);
  TenantFeed feed;
  const std::size_t onset = 150, end = 178;  // the shift; the hog runs over the same seconds
  const TenantTimeline tl = scans(double(onset), double(end), 260);
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0.0, 1.0);
  for (std::size_t i = 0; i < 260; ++i) {
    const bool fault = i >= onset && i < end;
    const std::vector<double> row = {50 + 3 * noise(rng), 40 + 2 * noise(rng) + (fault ? 30 : 0)};
    const std::int64_t t = kT0 + std::int64_t(i) * kS;
    const StreamUpdate& u = d.push(t, row);
    feed.after_push(d, u, tl, t);
  }
  ASSERT_EQ(d.closed().size(), 1u);
  const Incident& inc = d.closed()[0];
  ASSERT_LT(inc.end_unix_ns, inc.start_unix_ns + 30 * kS) << "the test needs an end inside the after span";
  const TenantFinding want = judge_tenants(tl, inc.start_unix_ns, inc.end_unix_ns);
  ASSERT_EQ(want.aggressors.size(), 1u);
  ASSERT_EQ(inc.aggressors.size(), 1u);
  EXPECT_EQ(inc.aggressors[0].cgroup, "hog");
  EXPECT_DOUBLE_EQ(inc.aggressors[0].after, want.aggressors[0].after);
  EXPECT_EQ(inc.aggressors[0].text, want.aggressors[0].text);
}

}  // namespace
}  // namespace reveal
