// Sampler health accounting: per-probe duration, missing values and errors; a probe that
// throws or loses its source costs its own channels only.
#include "reveal/sampler.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "reveal/registry.h"
#include "telemetry/file_reader.h"
#include "telemetry/self/sampler_probe.h"

namespace reveal {
namespace {

// A probe whose behaviour the test switches: ok, half missing, all missing, throwing.
class ScriptedProbe : public Probe {
 public:
  enum class Mode { ok, half, none, throws, failed_read };
  ScriptedProbe(std::string name, Mode* mode) : name_(std::move(name)), mode_(mode) {
    for (int i = 0; i < 4; ++i) chans_.push_back({name_ + ":v.c" + std::to_string(i), "count", Kind::gauge, Subsystem::system});
  }
  std::string_view name() const override { return name_; }
  std::string_view description() const override { return "test"; }
  ProbeStatus open(const std::filesystem::path&) override { return {true, ""}; }
  const std::vector<ChannelInfo>& channels() const override { return chans_; }
  void sample(std::span<double> out) override {
    switch (*mode_) {
      case Mode::ok: for (double& v : out) v = 1; break;
      case Mode::half: for (std::size_t i = 0; i < out.size(); ++i) out[i] = i % 2 ? std::nan("") : 2.0; break;
      case Mode::none: for (double& v : out) v = std::nan(""); break;
      case Mode::throws: out[0] = 9; throw std::runtime_error("device vanished");
      case Mode::failed_read:  // one of its files failed (EIO), its other values came
        for (double& v : out) v = 3;
        telemetry::note_read_failure();
        break;
    }
  }

 private:
  std::string name_;
  Mode* mode_;
  std::vector<ChannelInfo> chans_;
};

TEST(Sampler, ProbeFaultsAreCountedAndCostOnlyTheirOwnChannels) {
  ScriptedProbe::Mode a = ScriptedProbe::Mode::ok, b = ScriptedProbe::Mode::ok;
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(std::make_unique<ScriptedProbe>("pa", &a));
  probes.push_back(std::make_unique<ScriptedProbe>("pb", &b));
  Sampler s(std::move(probes), "/");
  ASSERT_EQ(s.probe_stats().size(), 2u);
  EXPECT_EQ(s.probe_stats()[0].name, "pa");
  EXPECT_EQ(s.probe_stats()[1].channels, 4u);

  s.sample_once();
  EXPECT_EQ(s.probe_stats()[1].missing, 0u);
  EXPECT_EQ(s.probe_stats()[1].errors, 0u);
  EXPECT_GE(s.probe_stats()[1].last_duration_ns, 0);

  b = ScriptedProbe::Mode::half;
  s.sample_once();
  EXPECT_EQ(s.probe_stats()[1].missing, 2u);
  EXPECT_EQ(s.probe_stats()[1].errors, 0u);

  b = ScriptedProbe::Mode::none;
  s.sample_once();
  EXPECT_EQ(s.probe_stats()[1].missing, 4u);
  EXPECT_EQ(s.probe_stats()[1].errors, 1u);

  b = ScriptedProbe::Mode::throws;
  auto row = s.sample_once();
  EXPECT_EQ(s.probe_stats()[1].errors, 2u);
  EXPECT_EQ(s.probe_stats()[1].missing, 4u);
  for (std::size_t i = 4; i < 8; ++i) EXPECT_TRUE(std::isnan(row[i])) << i;  // no half-written value
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(row[i], 1.0) << i;          // the sibling is untouched
  EXPECT_EQ(s.probe_stats()[0].errors, 0u);

  b = ScriptedProbe::Mode::ok;
  s.sample_once();
  EXPECT_EQ(s.probe_stats()[1].missing, 0u);
  EXPECT_EQ(s.probe_stats()[1].errors, 2u);  // a running total

  b = ScriptedProbe::Mode::failed_read;  // values, yet a read failed: counted, and only for pb
  s.sample_once();
  EXPECT_EQ(s.probe_stats()[1].missing, 0u);
  EXPECT_EQ(s.probe_stats()[1].errors, 3u);
  EXPECT_EQ(s.probe_stats()[0].errors, 0u);
}

// --- The sampler's own lateness (reveal.sampler) ------------------------------------------------

std::size_t index_of(const Sampler& s, const std::string& name) {
  for (std::size_t i = 0; i < s.channels().size(); ++i)
    if (s.channels()[i].name == name) return i;
  ADD_FAILURE() << name << " not found";
  return 0;
}

std::vector<std::unique_ptr<Probe>> scripted_and_self(ScriptedProbe::Mode* mode) {
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(std::make_unique<ScriptedProbe>("pa", mode));
  probes.push_back(std::make_unique<telemetry::SamplerProbe>());
  return probes;
}

TEST(SamplerLateness, TheProbeIsRegisteredAndDescribesItsChannels) {
  ASSERT_FALSE(probe_registry().empty());
  EXPECT_EQ(probe_registry().back().name, "reveal.sampler");  // last: after the host's channels
  telemetry::SamplerProbe p;
  ASSERT_TRUE(p.open("/nonexistent").available);  // reads no file
  ASSERT_EQ(p.channels().size(), 2u);
  EXPECT_EQ(p.channels()[0].name, "reveal.sampler:delay_seconds");
  EXPECT_EQ(p.channels()[0].unit, "s");
  EXPECT_EQ(p.channels()[0].kind, Kind::gauge);
  EXPECT_EQ(p.channels()[1].name, "reveal.sampler:ticks_missed");
  EXPECT_EQ(p.channels()[1].kind, Kind::counter);
  for (const auto& c : p.channels()) {
    EXPECT_EQ(c.subsystem, Subsystem::cpu) << c.name;
    EXPECT_EQ(channel_role(c.name), ChannelRole::symptom) << c.name;
  }
  std::vector<double> out(2, 0.0);
  p.sample(out);  // no Sampler attached: no values
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_TRUE(std::isnan(out[1]));
}

// Each sample of run() carries how late it began (≥ 0, finite) and the ticks skipped so far; a
// callback that overruns the interval skips ticks, and the samples after it say how many.
// Outside run() there is no tick to be late against.
TEST(SamplerLateness, EverySampleCarriesItsDelayAndTheTicksMissed) {
  ScriptedProbe::Mode mode = ScriptedProbe::Mode::ok;
  Sampler s(scripted_and_self(&mode), "/");
  const std::size_t delay = index_of(s, "reveal.sampler:delay_seconds"),
                    missed = index_of(s, "reveal.sampler:ticks_missed");
  auto row = s.sample_once();
  EXPECT_TRUE(std::isnan(row[delay]));
  EXPECT_EQ(row[missed], 0.0);

  std::vector<double> delays, misses;
  std::atomic<bool> stop{false};
  const auto interval = std::chrono::milliseconds(20);
  const std::size_t n = s.run(interval, 6, stop, [&](std::int64_t, std::span<const double> r) {
    delays.push_back(r[delay]);
    misses.push_back(r[missed]);
    if (delays.size() == 2) std::this_thread::sleep_for(std::chrono::milliseconds(110));  // ≥ 5 ticks
  });
  ASSERT_EQ(n, 6u);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_TRUE(std::isfinite(delays[i]) && delays[i] >= 0) << i << ": " << delays[i];
    EXPECT_LT(delays[i], 5.0) << i;
  }
  EXPECT_EQ(misses[0], 0.0);
  EXPECT_EQ(misses[1], 0.0);
  EXPECT_GE(misses[2], 4.0);  // the overrun: 110 ms at 20 ms a tick
  for (std::size_t i = 3; i < n; ++i) EXPECT_GE(misses[i], misses[i - 1]) << "a running total";
  EXPECT_EQ(double(s.skipped_ticks()), misses.back());
  row = s.sample_once();  // after run(): no schedule again
  EXPECT_TRUE(std::isnan(row[delay]));
  EXPECT_EQ(row[missed], double(s.skipped_ticks()));
}

// --- Priority -------------------------------------------------------------------------------

int policy_now() { return sched_getscheduler(0) & ~SCHED_RESET_ON_FORK; }

// Whether this process may use SCHED_RR 1 (root, CAP_SYS_NICE or RLIMIT_RTPRIO ≥ 1), tried on
// a scratch thread so that this one is untouched.
bool realtime_permitted() {
  bool ok = false;
  std::thread([&] {
    sched_param sp{};
    sp.sched_priority = 1;
    ok = sched_setscheduler(0, SCHED_RR, &sp) == 0;
  }).join();
  return ok;
}

void burn_cpu(std::chrono::milliseconds d) {
  timespec a, b;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  do clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  while ((b.tv_sec - a.tv_sec) * 1'000'000'000 + (b.tv_nsec - a.tv_nsec) < d.count() * 1'000'000);
}

TEST(SamplerPriority, ByDefaultTheThreadIsLeftAlone) {
  ScriptedProbe::Mode mode = ScriptedProbe::Mode::ok;
  Sampler s(scripted_and_self(&mode), "/");
  const int before = policy_now();
  std::atomic<bool> stop{false};
  s.run(std::chrono::milliseconds(5), 2, stop, [&](std::int64_t, std::span<const double>) {
    EXPECT_EQ(policy_now(), before);
    EXPECT_FALSE(s.realtime());
  });
}

TEST(SamplerPriority, BadBudgetsAreRefused) {
  ScriptedProbe::Mode mode = ScriptedProbe::Mode::ok;
  Sampler s(scripted_and_self(&mode), "/");
  SamplingPriority p;
  p.cpu_share = 0;
  EXPECT_THROW(s.set_priority(p), std::invalid_argument);
  p.cpu_share = 1.5;
  EXPECT_THROW(s.set_priority(p), std::invalid_argument);
  p.cpu_share = 0.1;
  p.burst = std::chrono::nanoseconds(0);
  EXPECT_THROW(s.set_priority(p), std::invalid_argument);
}

// Where permitted, run() samples at SCHED_RR 1 and gives the thread back as it found it;
// AtNormalPriority lowers it for a scope.
TEST(SamplerPriority, RealtimeWhileRunningThenBack) {
  if (!realtime_permitted()) GTEST_SKIP() << "real-time scheduling not permitted here";
  ScriptedProbe::Mode mode = ScriptedProbe::Mode::ok;
  Sampler s(scripted_and_self(&mode), "/");
  std::vector<std::string> notes;
  SamplingPriority p;
  p.realtime = true;
  p.note = [&](const std::string& line) { notes.push_back(line); };
  s.set_priority(p);
  const int before = policy_now();
  ASSERT_NE(before, SCHED_RR);
  std::atomic<bool> stop{false};
  std::vector<int> in_run, in_scope, after_scope;
  s.run(std::chrono::milliseconds(5), 3, stop, [&](std::int64_t, std::span<const double>) {
    in_run.push_back(policy_now());
    {
      Sampler::AtNormalPriority normal(s);
      in_scope.push_back(policy_now());
    }
    after_scope.push_back(policy_now());
  });
  EXPECT_EQ(in_run, std::vector<int>(3, SCHED_RR));
  EXPECT_EQ(in_scope, std::vector<int>(3, before));
  EXPECT_EQ(after_scope, std::vector<int>(3, SCHED_RR));
  EXPECT_EQ(policy_now(), before);
  EXPECT_FALSE(s.realtime());
  EXPECT_TRUE(notes.empty()) << notes.front();
}

// A thread that uses more CPU than its budget returns to normal priority for the rest of the
// run, with one line; CPU used inside AtNormalPriority is not charged.
TEST(SamplerPriority, ABudgetOverrunReturnsToNormalPriorityWithOneLine) {
  if (!realtime_permitted()) GTEST_SKIP() << "real-time scheduling not permitted here";
  ScriptedProbe::Mode mode = ScriptedProbe::Mode::ok;
  for (const bool at_normal : {true, false}) {
    SCOPED_TRACE(at_normal ? "burning at normal priority" : "burning at real-time priority");
    Sampler s(scripted_and_self(&mode), "/");
    std::vector<std::string> notes;
    SamplingPriority p;
    p.realtime = true;
    p.cpu_share = 0.01;
    // 10 ms: a 15-ms burn at real-time priority overruns it at the first tick, while the
    // sampler's own work over four ticks stays well inside it even under AddressSanitizer on a
    // loaded host (5 ms was overrun there once: its fourth tick demoted).
    p.burst = std::chrono::milliseconds(10);
    p.note = [&](const std::string& line) { notes.push_back(line); };
    s.set_priority(p);
    std::vector<int> policies;
    std::atomic<bool> stop{false};
    s.run(std::chrono::milliseconds(30), 4, stop, [&](std::int64_t, std::span<const double>) {
      policies.push_back(policy_now());
      if (at_normal) {
        Sampler::AtNormalPriority normal(s);
        burn_cpu(std::chrono::milliseconds(15));
      } else {
        burn_cpu(std::chrono::milliseconds(15));
      }
    });
    if (at_normal) {
      EXPECT_EQ(policies, std::vector<int>(4, SCHED_RR));
      EXPECT_TRUE(notes.empty()) << notes.front();
    } else {
      ASSERT_EQ(policies.size(), 4u);
      EXPECT_EQ(policies[0], SCHED_RR);
      for (std::size_t i = 1; i < 4; ++i) EXPECT_NE(policies[i], SCHED_RR) << i;
      ASSERT_EQ(notes.size(), 1u);
      EXPECT_NE(notes[0].find("real-time CPU budget"), std::string::npos) << notes[0];
      EXPECT_EQ(notes[0].find('\n'), std::string::npos);
    }
  }
}

// Without the privilege, run() samples at normal priority after one line that says why; never
// an error. Checked in a child that gives up root (and so CAP_SYS_NICE) with RLIMIT_RTPRIO 0.
TEST(SamplerPriority, WithoutPrivilegeOneLineAndNormalPriority) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit none{0, 0};
    if (setrlimit(RLIMIT_RTPRIO, &none) != 0) _exit(10);
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(11);
    ScriptedProbe::Mode mode = ScriptedProbe::Mode::ok;
    Sampler s(scripted_and_self(&mode), "/");
    std::vector<std::string> notes;
    SamplingPriority p;
    p.realtime = true;
    p.note = [&](const std::string& line) { notes.push_back(line); };
    s.set_priority(p);
    std::atomic<bool> stop{false};
    bool rt_seen = false;
    const std::size_t n = s.run(std::chrono::milliseconds(5), 3, stop, [&](std::int64_t, std::span<const double>) {
      rt_seen = rt_seen || policy_now() == SCHED_RR || s.realtime();
    });
    if (n != 3) _exit(12);
    if (rt_seen) _exit(13);
    if (notes.size() != 1) _exit(14);
    if (notes[0].find("sampling at normal priority: real-time scheduling refused (") != 0) _exit(15);
    if (notes[0].find('\n') != std::string::npos) _exit(16);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child check failed (see the _exit codes in the test)";
}

}  // namespace
}  // namespace reveal

namespace reveal {
namespace {

constexpr std::int64_t kSec = 1'000'000'000;

TEST(WallAnchor, StampsFollowTheMonotonicClockThroughWallClockWobbleAndBackSteps) {
  WallAnchor a;
  a.start(100 * kSec, 1'000'000 * kSec);
  EXPECT_EQ(a.stamp(101 * kSec, 1'000'001 * kSec), 1'000'001 * kSec);
  // NTP slews or steps the wall clock by a second either way: the stamps keep their pace.
  EXPECT_EQ(a.stamp(102 * kSec, 1'000'003 * kSec), 1'000'002 * kSec);
  // The wall clock stepped back an hour: stamps never go back.
  EXPECT_EQ(a.stamp(103 * kSec, 1'000'003 * kSec - 3600 * kSec), 1'000'003 * kSec);
  EXPECT_EQ(a.forward, 0u);
}

TEST(WallAnchor, APausedVmMovesTheStampsForwardToTheWallClock) {
  // The VM was paused 18 s between two ticks: the monotonic clock did not count them, the wall
  // clock did (as on the development VM, "crng reseeded due to virtual machine fork").
  WallAnchor a;
  a.start(0, 500 * kSec);
  EXPECT_EQ(a.stamp(10 * kSec, 510 * kSec), 510 * kSec);
  EXPECT_EQ(a.stamp(11 * kSec, 529 * kSec), 529 * kSec);  // one tick later, 18 s more of wall time
  EXPECT_EQ(a.forward, 1u);
  EXPECT_EQ(a.stamp(12 * kSec, 530 * kSec), 530 * kSec);  // and on from there
  EXPECT_EQ(a.forward, 1u);
}

}  // namespace
}  // namespace reveal
