// Peers reference (include/reveal/peers.h) on synthetic hosts of one job.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "reveal/peers.h"

namespace reveal {
namespace {

constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kT0 = std::int64_t(1'700'000'000) * kS;

// A 1 Hz host running the job: noisy gauges in three subsystems and a byte counter. From
// `fault_from` to `fault_to` its CPU gauge shifts up by `shift` noise SDs.
Recording host(const std::string& name, std::uint64_t seed, std::int64_t t0, std::size_t n = 120,
               std::size_t fault_from = 0, std::size_t fault_to = 0, double shift = 0) {
  Recording r;
  r.meta.hostname = name;
  r.meta.interval_s = 1.0;
  r.channels = {{"t:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                {"t:mem_used", "%", Kind::gauge, Subsystem::memory},
                {"t:rx_bytes", "bytes", Kind::counter, Subsystem::network},
                {"t:disk_util", "%", Kind::gauge, Subsystem::storage}};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  double rx = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool fault = i >= fault_from && i < fault_to;
    rx += 5e6 + 2e5 * noise(rng);
    const double row[] = {50 + 3 * noise(rng) + (fault ? shift * 3 : 0), 40 + 2 * noise(rng), rx,
                          10 + 2 * noise(rng)};
    r.values.append_row(row);
    r.t_unix_ns.push_back(t0 + std::int64_t(i) * kS);
  }
  r.meta.start_unix_ns = r.t_unix_ns.front();
  r.meta.end_unix_ns = r.t_unix_ns.back();
  return r;
}

TEST(Peers, TheHostWithALevelShiftIsNamed) {
  const std::vector<Recording> hosts = {host("a", 1, kT0), host("b", 2, kT0, 120, 40, 80, 12.0), host("c", 3, kT0)};
  const PeersResult pr = compare_peers(hosts, {}, {});
  EXPECT_EQ(pr.alignment, "same time");
  EXPECT_EQ(pr.start_unix_ns, kT0);
  EXPECT_EQ(pr.end_unix_ns, kT0 + 119 * kS);
  ASSERT_EQ(pr.hosts.size(), 3u);
  ASSERT_TRUE(pr.odd.has_value());
  EXPECT_EQ(*pr.odd, 0u);
  const PeerHost& odd = pr.hosts[0];
  EXPECT_EQ(odd.name, "b");
  EXPECT_GT(odd.score, 0.0);
  ASSERT_FALSE(odd.result.incidents.empty());
  const Incident& inc = odd.result.incidents.front();
  EXPECT_EQ(inc.subsystem, Subsystem::cpu);
  EXPECT_NEAR(inc.start_s, 40, 3);
  EXPECT_NEAR(inc.end_s, 80, 3);
  EXPECT_EQ(odd.result.mode, "baseline");
  EXPECT_EQ(odd.result.baseline_hosts, (std::vector<std::string>{"a", "c"}));
  ASSERT_FALSE(pr.odd_channels.empty());
  EXPECT_EQ(pr.odd_channels.front().name, "t:cpu_busy");
  EXPECT_GT(pr.odd_channels.front().z, 3.0);
  EXPECT_EQ(pr.flagged.front(), "b");
  // Its incident covers a third of the run well past the threshold; the others score little.
  EXPECT_GE(odd.incident_windows, 35u);
  EXPECT_GE(odd.score, kOddMargin * pr.hosts[1].score);
  // Names given by the caller replace hostnames.
  const PeersResult named = compare_peers(hosts, {"x.db", "y.db", "z.db"}, {});
  ASSERT_TRUE(named.odd.has_value());
  EXPECT_EQ(named.hosts[*named.odd].name, "y.db");
}

// Issue #19: each host is handed over once, scored, and may drop its per-window traces; the
// ranking, the odd host and its channels stay the same.
TEST(Peers, EachScoredHostIsHandedOverOnceAndMayDropItsTraces) {
  const std::vector<Recording> hosts = {host("a", 1, kT0), host("b", 2, kT0, 120, 40, 80, 12.0), host("c", 3, kT0)};
  const PeerReader read = [&](const std::function<void(std::size_t, const Recording&)>& use) {
    for (std::size_t i = 0; i < hosts.size(); ++i) use(i, hosts[i]);
  };
  const PeersResult full = compare_peers(hosts.size(), {}, read, {});
  std::vector<std::string> seen;
  const PeersResult lean = compare_peers(hosts.size(), {}, read, {}, [&](PeerHost& h) {
    EXPECT_GT(h.windows, 0u);
    EXPECT_EQ(h.windows, h.result.fused.size()) << "handed over once scored, traces still there";
    seen.push_back(h.name);
    drop_window_traces(h.result);
  });
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(lean.hosts.size(), full.hosts.size());
  for (std::size_t i = 0; i < full.hosts.size(); ++i) {
    EXPECT_EQ(lean.hosts[i].name, full.hosts[i].name);
    EXPECT_DOUBLE_EQ(lean.hosts[i].score, full.hosts[i].score);
    EXPECT_EQ(lean.hosts[i].result.incidents.size(), full.hosts[i].result.incidents.size());
    EXPECT_TRUE(lean.hosts[i].result.fused.empty());
    EXPECT_TRUE(lean.hosts[i].result.window_top_channel.empty());
    for (const auto& d : lean.hosts[i].result.detectors) EXPECT_TRUE(d.level.empty() && d.raw.empty());
  }
  ASSERT_TRUE(lean.odd.has_value() && full.odd.has_value());
  EXPECT_EQ(lean.hosts[*lean.odd].name, "b");
  ASSERT_EQ(lean.odd_channels.size(), full.odd_channels.size());
  EXPECT_EQ(lean.odd_channels.front().name, full.odd_channels.front().name);
}

TEST(Peers, NoHostStandsOutWhenAllAreAlike) {
  const std::vector<Recording> hosts = {host("a", 11, kT0), host("b", 12, kT0), host("c", 13, kT0)};
  const PeersResult pr = compare_peers(hosts, {}, {});
  EXPECT_FALSE(pr.odd.has_value());
  EXPECT_TRUE(pr.flagged.empty());
  for (const auto& h : pr.hosts) {
    EXPECT_EQ(h.score, 0.0) << h.name;
    EXPECT_TRUE(h.result.incidents.empty()) << h.name;
  }
}

TEST(Peers, TwoFaultyHostsOfThreeLeaveNoSingleOddHost) {
  const std::vector<Recording> hosts = {host("a", 21, kT0, 120, 40, 80, 12.0), host("b", 22, kT0),
                                        host("c", 23, kT0, 120, 40, 80, 12.0)};
  const PeersResult pr = compare_peers(hosts, {}, {});
  // a and c each look odd against a baseline that holds the other's fault half the time; neither
  // leads the other by kOddMargin, so no single host is named.
  EXPECT_FALSE(pr.odd.has_value());
  EXPECT_TRUE(pr.odd_channels.empty());
}

TEST(Peers, RunsRecordedAtDifferentTimesAreAlignedByOffset) {
  // Recorded one after another (no overlap), of different lengths: compared over the shortest.
  const std::vector<Recording> hosts = {host("a", 31, kT0, 130), host("b", 32, kT0 + 200 * kS, 120, 40, 80, 12.0),
                                        host("c", 33, kT0 + 400 * kS, 125)};
  const PeersResult pr = compare_peers(hosts, {}, {});
  EXPECT_EQ(pr.alignment, "offset");
  EXPECT_NEAR(pr.span_s, 119.0, 1e-6);
  ASSERT_FALSE(pr.notes.empty());
  ASSERT_TRUE(pr.odd.has_value());
  EXPECT_EQ(pr.hosts[*pr.odd].name, "b");
  for (const auto& h : pr.hosts) EXPECT_EQ(h.result.n_samples, 120u) << h.name;
}

TEST(Peers, PartialOverlapIsCutToTheCommonSpan) {
  const std::vector<Recording> hosts = {host("a", 41, kT0), host("b", 42, kT0 + 10 * kS, 120, 40, 80, 12.0),
                                        host("c", 43, kT0 + 20 * kS)};
  const PeersResult pr = compare_peers(hosts, {}, {});
  EXPECT_EQ(pr.alignment, "same time");
  EXPECT_EQ(pr.start_unix_ns, kT0 + 20 * kS);
  EXPECT_EQ(pr.end_unix_ns, kT0 + 119 * kS);
  for (const auto& h : pr.hosts) EXPECT_EQ(h.result.n_samples, 100u) << h.name;
  ASSERT_TRUE(pr.odd.has_value());
  EXPECT_EQ(pr.hosts[*pr.odd].name, "b");
}

TEST(Peers, Errors) {
  EXPECT_THROW(compare_peers({host("a", 1, kT0)}, {}, {}), PeersError);
  EXPECT_THROW(compare_peers({host("a", 1, kT0), host("b", 2, kT0)}, {"only-one"}, {}), PeersError);
  try {
    compare_peers({host("a", 1, kT0), host("tiny", 2, kT0, 3)}, {}, {});
    ADD_FAILURE() << "no error";
  } catch (const PeersError& e) {
    EXPECT_NE(std::string(e.what()).find("host tiny"), std::string::npos) << e.what();
  }
}

TEST(Peers, HostsWithoutAWindowOfSamplesAreLeftOutWithANote) {
  Recording gone;  // a fleet's host listed without a sample in the range
  gone.meta.hostname = "gone";
  const std::vector<Recording> hosts = {host("a", 1, kT0), gone, host("b", 2, kT0, 120, 40, 80, 12.0),
                                        host("tiny", 4, kT0, 3), host("c", 3, kT0)};
  const PeersResult pr = compare_peers(hosts, {}, {});
  ASSERT_EQ(pr.hosts.size(), 3u);
  ASSERT_TRUE(pr.odd.has_value());
  EXPECT_EQ(pr.hosts[*pr.odd].name, "b");
  EXPECT_EQ(pr.hosts[*pr.odd].result.baseline_hosts, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(pr.end_unix_ns, kT0 + 119 * kS);  // the common span of the hosts compared
  ASSERT_FALSE(pr.notes.empty());
  EXPECT_NE(pr.notes.front().find("left out"), std::string::npos) << pr.notes.front();
  EXPECT_NE(pr.notes.front().find("gone (0 samples), tiny (3 samples)"), std::string::npos) << pr.notes.front();
  // The same as without them.
  const PeersResult three = compare_peers({hosts[0], hosts[2], hosts[4]}, {}, {});
  EXPECT_EQ(three.hosts[0].score, pr.hosts[0].score);
  // Fewer than two left: the first short host is named.
  try {
    compare_peers({host("a", 1, kT0), gone}, {}, {});
    ADD_FAILURE() << "no error";
  } catch (const PeersError& e) {
    EXPECT_NE(std::string(e.what()).find("host gone: 0 samples"), std::string::npos) << e.what();
  }
}

// Hosts left out give the others their share of the reference: two long hosts of ten listed
// are read once more, each then with the budget of two hosts.
TEST(Peers, HostsLeftOutGiveTheOthersTheirReference) {
  std::vector<Recording> hosts(8);
  for (std::size_t i = 0; i < hosts.size(); ++i) hosts[i].meta.hostname = "gone" + std::to_string(i);
  hosts.push_back(host("a", 71, kT0, 3000));
  hosts.push_back(host("b", 72, kT0, 3000, 1000, 2000, 12.0));
  int reads = 0;
  const PeersResult pr = compare_peers(
      hosts.size(), {}, [&](const auto& use) {
        ++reads;
        for (std::size_t i = 0; i < hosts.size(); ++i) use(i, hosts[i]);
      },
      {});
  EXPECT_EQ(reads, 3);
  ASSERT_EQ(pr.hosts.size(), 2u);
  for (const auto& h : pr.hosts) EXPECT_GE(h.result.reference_windows, 1500u) << h.name;  // 2000 samples of the other
  ASSERT_TRUE(pr.odd.has_value());
  EXPECT_EQ(pr.hosts[*pr.odd].name, "b");
}

TEST(Peers, SliceRecording) {
  Recording r = host("a", 5, kT0, 20);
  r.events.push_back({kT0 + 2 * kS, "nvml", "xid", 79, "early"});
  r.events.push_back({kT0 + 12 * kS, "nvml", "xid", 79, "inside"});
  r.config_changes.push_back({kT0 + 11 * kS, "net.eth0.mtu", "1500", "9000"});
  const Recording s = slice_recording(r, 10, 5);
  ASSERT_EQ(s.t_unix_ns.size(), 5u);
  EXPECT_EQ(s.t_unix_ns.front(), kT0 + 10 * kS);
  EXPECT_EQ(s.meta.start_unix_ns, kT0 + 10 * kS);
  EXPECT_EQ(s.meta.end_unix_ns, kT0 + 14 * kS);
  EXPECT_EQ(s.values.rows(), 5u);
  EXPECT_EQ(s.values(0, 1), r.values(10, 1));
  EXPECT_EQ(s.values(4, 3), r.values(14, 3));
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0].detail, "inside");
  EXPECT_EQ(s.config_changes.size(), 1u);
  EXPECT_EQ(slice_recording(r, 18, 10).t_unix_ns.size(), 2u);  // clamped to the end
}

// A fleet too big for whole references (issue #19): 20 hosts of 900 samples. Each contributes
// slices (R = max(120, 4000/20) = 200 samples each, 3 slices of 60) and the hosts fall into 8
// folds; the reader is asked twice, from several threads at once here, and the host with a level
// shift is still named.
TEST(Peers, AFleetIsComparedWithSlicedReferencesInFolds) {
  constexpr std::size_t kHosts = 20;
  std::vector<Recording> hosts;
  for (std::size_t i = 0; i < kHosts; ++i)
    hosts.push_back(i == 13 ? host("h13", 100 + i, kT0, 900, 300, 600, 12.0)
                            : host("h" + std::to_string(i), 100 + i, kT0, 900));
  std::atomic<int> reads{0}, most_at_once{0}, at_once{0};
  const PeerReader reader = [&](const std::function<void(std::size_t, const Recording&)>& use) {
    ++reads;
    std::atomic<std::size_t> next{0};
    const auto work = [&] {
      for (std::size_t i; (i = next++) < hosts.size();) {
        const int now = ++at_once;
        for (int m = most_at_once; now > m && !most_at_once.compare_exchange_weak(m, now);) {
        }
        use(i, hosts[i]);
        --at_once;
      }
    };
    std::thread a(work), b(work);
    work();
    a.join();
    b.join();
  };
  const PeersResult pr = compare_peers(kHosts, {}, reader, {});
  EXPECT_EQ(reads.load(), 2);
  EXPECT_GE(most_at_once.load(), 2);
  ASSERT_EQ(pr.hosts.size(), kHosts);
  ASSERT_TRUE(pr.odd.has_value());
  EXPECT_EQ(pr.hosts[*pr.odd].name, "h13");
  const PeerHost& odd = pr.hosts[*pr.odd];
  ASSERT_FALSE(odd.result.incidents.empty());
  EXPECT_EQ(odd.result.incidents.front().subsystem, Subsystem::cpu);
  EXPECT_NEAR(odd.result.incidents.front().start_s, 300, 5);
  // Its reference: the 18 hosts of the other 7 folds (h13 is in fold 13 mod 8 = 5 with h5 only),
  // each named once; the note says the references were sampled.
  EXPECT_EQ(odd.result.baseline_hosts.size(), 18u);
  EXPECT_EQ(std::count(odd.result.baseline_hosts.begin(), odd.result.baseline_hosts.end(), "h5"), 0);
  EXPECT_EQ(std::count(odd.result.baseline_hosts.begin(), odd.result.baseline_hosts.end(), "h0"), 1);
  ASSERT_FALSE(odd.result.notes.empty());
  EXPECT_NE(odd.result.notes.front().find("8 reference models for 20 hosts"), std::string::npos)
      << odd.result.notes.front();
  EXPECT_LE(odd.result.reference_windows, kPeersReferenceSamples);
  // No other host is flagged for long: alike hosts against samples of alike hosts.
  for (std::size_t k = 1; k < pr.hosts.size(); ++k) EXPECT_LT(pr.hosts[k].score, 0.5 * odd.score) << pr.hosts[k].name;
}

// A fleet larger than the references hold in slices of one a host (80 hosts × one slice of 60
// samples is more than kPeersReferenceSamples): each fold's model is trained on a part of the
// other hosts' slices, taken evenly; the hosts' slices lie at different times (their phases),
// so the model still knows the whole span, and the odd host is named.
TEST(Peers, ALargeFleetTrainsEachModelOnABoundedShareOfOneSliceAHost) {
  constexpr std::size_t kHosts = 80;
  std::vector<Recording> hosts;
  for (std::size_t i = 0; i < kHosts; ++i)
    hosts.push_back(i == 37 ? host("h37", 200 + i, kT0, 600, 200, 400, 12.0)
                            : host("h" + std::to_string(i), 200 + i, kT0, 600));
  const PeersResult pr = compare_peers(hosts, {}, {});
  ASSERT_TRUE(pr.odd.has_value());
  const PeerHost& odd = pr.hosts[*pr.odd];
  EXPECT_EQ(odd.name, "h37");
  ASSERT_FALSE(odd.result.incidents.empty());
  EXPECT_NEAR(odd.result.incidents.front().start_s, 200, 5);
  // 70 hosts in the other 7 folds, 60 samples each: 66 slices (3960 samples) taken.
  EXPECT_EQ(odd.result.baseline_hosts.size(), 66u);
  EXPECT_LE(odd.result.reference_windows, kPeersReferenceSamples);
  for (std::size_t k = 1; k < pr.hosts.size(); ++k) EXPECT_LT(pr.hosts[k].score, 0.5 * odd.score) << pr.hosts[k].name;
}

// A long host compared over a small part of it (a short host inside its last minutes): its
// reference is spread over that part, not over its whole recording (where no slice might land),
// and a --window longer than the default slices still finds windows in them.
TEST(Peers, ALongHostComparedOverPartOfItGivesItsSpanAsReference) {
  const std::vector<Recording> hosts = {host("long", 51, kT0, 20000), host("short", 52, kT0 + 19700 * kS, 250)};
  int reads = 0;
  const PeersResult pr = compare_peers(
      2, {}, [&](const auto& use) {
        ++reads;
        for (std::size_t i = 0; i < hosts.size(); ++i) use(i, hosts[i]);
      },
      {});
  EXPECT_EQ(pr.alignment, "same time");
  EXPECT_EQ(reads, 3);  // times and references, the long host's span again, scoring
  for (const auto& h : pr.hosts) {
    EXPECT_EQ(h.result.n_samples, 250u) << h.name;
    if (h.name == "short") {
      EXPECT_GE(h.result.reference_windows, 200u);  // the long host's 250 samples
    }
  }
  DetectOptions wide;
  wide.window.length = 80;
  const std::vector<Recording> three = {host("a", 61, kT0, 3000), host("b", 62, kT0, 3000), host("c", 63, kT0, 3000)};
  EXPECT_NO_THROW(compare_peers(three, {}, wide));
}

// A reader that skips a host, or gives one twice, is an error, not a silent gap.
TEST(Peers, AReaderThatMissesAHostIsAnError) {
  const std::vector<Recording> hosts = {host("a", 1, kT0), host("b", 2, kT0), host("c", 3, kT0)};
  EXPECT_THROW(compare_peers(3, {}, [&](const auto& use) { use(0, hosts[0]); use(1, hosts[1]); }, {}), PeersError);
  EXPECT_THROW(compare_peers(3, {}, [&](const auto& use) { for (int i : {0, 1, 1, 2}) use(std::size_t(i), hosts[std::size_t(i)]); }, {}),
               PeersError);
}

}  // namespace
}  // namespace reveal
