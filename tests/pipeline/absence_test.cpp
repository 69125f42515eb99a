#include "reveal/absence.h"

#include <cmath>

#include <gtest/gtest.h>

#include "reveal/offline.h"

namespace reveal {
namespace {

constexpr double kNaN = __builtin_nan("");

// 1 Hz: two GPU channels of gpu0 (nvml), one cpu gauge, one channel that never reports and
// one that flaps (NaN every other sample).
Recording gpu_lost(std::size_t n, std::size_t lost_from, std::size_t lost_to) {
  Recording r;
  r.meta.hostname = "synthetic";
  r.meta.interval_s = 1.0;
  r.channels = {{"nvml:power_usage.gpu0", "W", Kind::gauge, Subsystem::gpu},
                {"nvml:util.gpu0", "%", Kind::gauge, Subsystem::gpu},
                {"test:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                {"nvml:nvlink_rx.gpu0", "bytes", Kind::counter, Subsystem::interconnect},
                {"test:flappy", "%", Kind::gauge, Subsystem::cpu}};
  for (std::size_t i = 0; i < n; ++i) {
    const bool lost = i >= lost_from && i < lost_to;
    const double row[] = {lost ? kNaN : 300.0 + double(i % 7), lost ? kNaN : 90.0 + double(i % 3),
                          50.0 + double(i % 5), kNaN, i % 2 ? kNaN : 10.0};
    r.values.append_row(row);
    r.t_unix_ns.push_back(std::int64_t(1'700'000'000) * 1'000'000'000 + std::int64_t(i) * 1'000'000'000);
  }
  r.meta.start_unix_ns = r.t_unix_ns.front();
  r.meta.end_unix_ns = r.t_unix_ns.back();
  return r;
}

TEST(Absence, AProbesChannelsStoppingIsOneSpan) {
  const Recording run = gpu_lost(120, 60, 90);
  const auto spans = find_absences(run, 3);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].source, "nvml");
  EXPECT_EQ(spans[0].first_row, 60u);
  EXPECT_EQ(spans[0].last_row, 89u);
  EXPECT_EQ(spans[0].channels, (std::vector<std::size_t>{0, 1}));  // never-reporting nvlink is not absent
  EXPECT_EQ(spans[0].source_channels, 3u);
  const Incident inc = absence_incident(run, spans[0], 5);
  EXPECT_EQ(inc.kind, "absence");
  EXPECT_EQ(inc.subsystem, Subsystem::gpu);
  EXPECT_DOUBLE_EQ(inc.confidence, 1.0);
  EXPECT_EQ(inc.focus, "gpu0");
  EXPECT_DOUBLE_EQ(inc.start_s, 60.0);
  EXPECT_DOUBLE_EQ(inc.end_s, 89.0);
  ASSERT_EQ(inc.top.size(), 2u);
  EXPECT_EQ(inc.top[0].name, "nvml:power_usage.gpu0");
  EXPECT_DOUBLE_EQ(inc.top[0].reference, 300.0 + 59 % 7);  // the last value before the gap
  EXPECT_NE(inc.action.find("2 of 3 channels of nvml"), std::string::npos) << inc.action;
}

TEST(Absence, ShortGapsAndAGapAtTheEndOfTheRun) {
  EXPECT_TRUE(find_absences(gpu_lost(120, 60, 62), 3).empty());  // 2 samples: shorter than a window
  const auto spans = find_absences(gpu_lost(120, 115, 120), 3);   // lost and never back
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].last_row, 119u);
  EXPECT_TRUE(find_absences(gpu_lost(120, 0, 0), 3).empty());     // flapping alone is no absence
}

TEST(Absence, DetectReportsItAsAnIncidentInTimeOrder) {
  const DetectResult res = detect(gpu_lost(120, 60, 90), {}, {});
  const auto it = std::find_if(res.incidents.begin(), res.incidents.end(),
                               [](const Incident& i) { return i.kind == "absence"; });
  ASSERT_NE(it, res.incidents.end());
  EXPECT_EQ(it->subsystem, Subsystem::gpu);
  for (std::size_t i = 1; i < res.incidents.size(); ++i)
    EXPECT_LE(res.incidents[i - 1].start_unix_ns, res.incidents[i].start_unix_ns);
}

}  // namespace
}  // namespace reveal
