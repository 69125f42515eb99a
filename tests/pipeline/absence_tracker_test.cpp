#include "reveal/absence_tracker.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../alloc_count.h"
#include "reveal/absence.h"

namespace reveal {
namespace {

constexpr double kNaN = __builtin_nan("");
constexpr std::int64_t kT0 = std::int64_t(1'700'000'000) * 1'000'000'000;
constexpr std::int64_t kSec = 1'000'000'000;

// The channels of absence_test.cpp's synthetic host: two GPU channels of gpu0 (nvml), a cpu
// gauge, an nvml channel that never reports and a flapping one (NaN every other sample).
std::vector<ChannelInfo> host_channels() {
  return {{"nvml:power_usage.gpu0", "W", Kind::gauge, Subsystem::gpu},
          {"nvml:util.gpu0", "%", Kind::gauge, Subsystem::gpu},
          {"test:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
          {"nvml:nvlink_rx.gpu0", "bytes", Kind::counter, Subsystem::interconnect},
          {"test:flappy", "%", Kind::gauge, Subsystem::cpu}};
}

// Sample i of a host whose GPU channels are NaN over [lost_from, lost_to).
std::vector<double> host_row(std::size_t i, std::size_t lost_from, std::size_t lost_to) {
  const bool lost = i >= lost_from && i < lost_to;
  return {lost ? kNaN : 300.0 + double(i % 7), lost ? kNaN : 90.0 + double(i % 3), 50.0 + double(i % 5), kNaN,
          i % 2 ? kNaN : 10.0};
}

struct Events {
  std::vector<std::size_t> opened_at, closed_at;
};

Events feed(AbsenceTracker& a, std::size_t n, std::size_t lost_from, std::size_t lost_to) {
  Events r;
  for (std::size_t i = 0; i < n; ++i) {
    const AbsenceUpdate& u = a.push(kT0 + std::int64_t(i) * kSec, host_row(i, lost_from, lost_to));
    for (std::size_t k = 0; k < u.opened; ++k) r.opened_at.push_back(i);
    for (std::size_t k = 0; k < u.closed; ++k) r.closed_at.push_back(i);
  }
  return r;
}

TEST(AbsenceTracker, AProbeGoingNaNOpensOneIncidentNamingTheSourceAndClosesWhenDataReturns) {
  AbsenceTracker a(host_channels(), 3, 1.0, 5);
  const Events r = feed(a, 62, 60, 90);  // lost at 60, still missing at 61: shorter than a window
  EXPECT_TRUE(r.opened_at.empty());
  EXPECT_TRUE(a.active().empty());
  Events r2;
  for (std::size_t i = 62; i < 120; ++i) {
    const AbsenceUpdate& u = a.push(kT0 + std::int64_t(i) * kSec, host_row(i, 60, 90));
    if (u.opened) r2.opened_at.push_back(i);
    if (u.closed) r2.closed_at.push_back(i);
    if (i < 90) {  // open while the GPU is missing, its end following the samples
      ASSERT_EQ(a.active().size(), 1u) << i;
      EXPECT_EQ(a.active_source(0), "nvml");
      EXPECT_EQ(a.active_channels(0), 2u);
      EXPECT_EQ(a.active()[0].end_unix_ns, kT0 + std::int64_t(i) * kSec);
      EXPECT_NE(a.active()[0].action.find("for " + std::to_string(i - 60 + 1) + " s"), std::string::npos)
          << a.active()[0].action;
    }
  }
  // One incident: opens at the third missing sample (62), closes at the first sample back (90).
  EXPECT_EQ(r2.opened_at, (std::vector<std::size_t>{62}));
  EXPECT_EQ(r2.closed_at, (std::vector<std::size_t>{90}));
  EXPECT_TRUE(a.active().empty());
  ASSERT_EQ(a.closed().size(), 1u);
  EXPECT_EQ(a.absent_channels(), 0u);
  EXPECT_EQ(a.sources(), (std::vector<std::string>{"nvml", "test"}));
  EXPECT_EQ(a.opened_total(), (std::vector<std::uint64_t>{1, 0}));

  // The same incident as `reveal detect` builds from the recording (absence_incident).
  Recording run;
  run.meta.interval_s = 1.0;
  run.channels = host_channels();
  for (std::size_t i = 0; i < 120; ++i) {
    run.values.append_row(host_row(i, 60, 90));
    run.t_unix_ns.push_back(kT0 + std::int64_t(i) * kSec);
  }
  const auto spans = find_absences(run, 3);
  ASSERT_EQ(spans.size(), 1u);
  const Incident want = absence_incident(run, spans[0], 5);
  const Incident& got = a.closed()[0];
  EXPECT_EQ(got.kind, "absence");
  EXPECT_EQ(got.start_unix_ns, want.start_unix_ns);
  EXPECT_EQ(got.end_unix_ns, want.end_unix_ns);
  EXPECT_DOUBLE_EQ(got.start_s, 60.0);
  EXPECT_DOUBLE_EQ(got.end_s, 89.0);
  EXPECT_EQ(got.subsystem, Subsystem::gpu);
  EXPECT_DOUBLE_EQ(got.confidence, 1.0);
  EXPECT_EQ(got.focus, "gpu0");
  ASSERT_EQ(got.top.size(), want.top.size());
  for (std::size_t k = 0; k < got.top.size(); ++k) {
    EXPECT_EQ(got.top[k].name, want.top[k].name);
    EXPECT_EQ(got.top[k].reference, want.top[k].reference);  // the last value before the gap
  }
  EXPECT_EQ(got.action, want.action);  // "2 of 3 channels of nvml stopped reporting for 30 s ..."
  EXPECT_NE(got.action.find("2 of 3 channels of nvml stopped reporting for 30 s"), std::string::npos) << got.action;
}

TEST(AbsenceTracker, NeverReportingAndFlappingChannelsAndShortGapsOpenNothing) {
  AbsenceTracker a(host_channels(), 3, 1.0, 5);
  // nvlink_rx never reports, test:flappy is NaN every other sample, and the GPU drops out
  // for two samples (60, 61) four times.
  for (std::size_t i = 0; i < 200; ++i) {
    const bool gap = i % 40 == 20 || i % 40 == 21;
    const AbsenceUpdate& u = a.push(kT0 + std::int64_t(i) * kSec, host_row(i, gap ? i : 0, gap ? i + 1 : 0));
    EXPECT_EQ(u.opened, 0u) << i;
  }
  EXPECT_TRUE(a.active().empty());
  EXPECT_TRUE(a.closed().empty());
}

TEST(AbsenceTracker, ChannelsOfOneSourceJoinOneIncidentAndSourcesStaySeparate) {
  const std::vector<ChannelInfo> ch = {{"nvml:power_usage.gpu0", "W", Kind::gauge, Subsystem::gpu},
                                       {"nvml:power_usage.gpu1", "W", Kind::gauge, Subsystem::gpu},
                                       {"sys.net:rx_bytes.eth0", "bytes", Kind::counter, Subsystem::network}};
  AbsenceTracker a(ch, 3, 1.0, 5);
  std::size_t opened = 0, closed = 0;
  for (std::size_t i = 0; i < 100; ++i) {
    // gpu0 lost over [20, 60), gpu1 over [30, 50): one nvml incident [20, 59]; eth0 over [40, 45).
    const double row[] = {i >= 20 && i < 60 ? kNaN : 1.0 + double(i % 2), i >= 30 && i < 50 ? kNaN : 2.0,
                          i >= 40 && i < 45 ? kNaN : 1e6 * double(i)};
    const AbsenceUpdate& u = a.push(kT0 + std::int64_t(i) * kSec, row);
    opened += u.opened;
    closed += u.closed;
    if (i == 35) {
      ASSERT_EQ(a.active().size(), 1u);
      EXPECT_EQ(a.active_channels(0), 2u);  // gpu1 joined the open nvml incident
      EXPECT_TRUE(a.active()[0].focus.empty());  // two GPUs: no single entity
    }
    if (i == 43) {
      ASSERT_EQ(a.active().size(), 2u);
      EXPECT_EQ(a.active_source(0), "nvml");
      EXPECT_EQ(a.active_source(1), "sys.net");
      EXPECT_EQ(a.active()[1].subsystem, Subsystem::network);
    }
  }
  EXPECT_EQ(opened, 2u);
  EXPECT_EQ(closed, 2u);
  ASSERT_EQ(a.closed().size(), 2u);
  EXPECT_EQ(a.closed()[0].top[0].name, "sys.net:rx_bytes.eth0");  // closed first, at 45
  EXPECT_EQ(a.closed()[0].end_unix_ns, kT0 + 44 * kSec);
  EXPECT_EQ(a.closed()[1].start_unix_ns, kT0 + 20 * kSec);
  EXPECT_EQ(a.closed()[1].end_unix_ns, kT0 + 59 * kSec);
  EXPECT_NE(a.closed()[1].action.find("all 2 channels of nvml stopped reporting for 40 s"), std::string::npos)
      << a.closed()[1].action;
  EXPECT_EQ(a.opened_total(), (std::vector<std::uint64_t>{1, 1}));
}

TEST(AbsenceTracker, SteadyStateAllocatesNothingEvenWithAnOpenIncident) {
  AbsenceTracker a(host_channels(), 3, 1.0, 5);
  std::vector<double> row;
  for (std::size_t i = 0; i < 50; ++i) a.push(kT0 + std::int64_t(i) * kSec, host_row(i, 1000, 1000));
  row = host_row(50, 1000, 1000);
  testing::start_counting_allocations();
  for (std::size_t i = 50; i < 60; ++i) a.push(kT0 + std::int64_t(i) * kSec, row);
  EXPECT_EQ(testing::stop_counting_allocations(), 0);
  // Opening an incident does allocate (the counter sees it); then its end and action move
  // every sample, in place.
  testing::start_counting_allocations();
  for (std::size_t i = 60; i < 63; ++i) a.push(kT0 + std::int64_t(i) * kSec, host_row(60, 60, 1000));
  EXPECT_GT(testing::stop_counting_allocations(), 0);
  for (std::size_t i = 63; i < 80; ++i) a.push(kT0 + std::int64_t(i) * kSec, host_row(i, 60, 1000));
  ASSERT_EQ(a.active().size(), 1u);
  row = host_row(80, 60, 1000);
  testing::start_counting_allocations();
  for (std::size_t i = 80; i < 95; ++i) a.push(kT0 + std::int64_t(i) * kSec, row);  // durations 21..35 s
  EXPECT_EQ(testing::stop_counting_allocations(), 0);
  EXPECT_EQ(a.active()[0].end_unix_ns, kT0 + 94 * kSec);
}

TEST(AbsenceTracker, IgnoresOldSamplesAndRejectsWrongWidth) {
  AbsenceTracker a(host_channels(), 3, 1.0, 5);
  a.push(kT0, host_row(0, 0, 0));
  EXPECT_EQ(a.push(kT0, host_row(1, 1, 2)).opened, 0u);  // not newer: ignored
  const std::vector<double> short_row{1.0};
  EXPECT_THROW(a.push(kT0 + kSec, short_row), std::invalid_argument);
}

}  // namespace
}  // namespace reveal
