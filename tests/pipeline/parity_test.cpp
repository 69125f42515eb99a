// Offline and streaming tell the same story: every recording in tests/fixtures/recordings goes
// through detect() (`reveal detect --baseline MODEL`) and through StreamingDetector (`reveal
// agent`, one raw sample at a time) with the same fitted baseline model, and both must report
// the same incidents: start, end, peak, subsystem and shares, focus, each detector's view, top
// channels and action. Both share the model (src/pipeline/window_model.h), the incident rule
// (IncidentTracker), the evidence (src/explain/evidence.h) and attribution
// (src/explain/attribution.h); this test keeps the code around them honest.
//
// Where the two differ by design, and how the test sets them equal:
//  * Reference. In self mode the agent fits on the history it has seen (it cannot see the
//    future) and refits every refit_samples, while detect() fits on the whole run: their
//    models differ. With workload changes on, the agent's self fit also leaves the kernel's
//    smoothed averages (PSI avg*, loadavg) out. Both use one baseline model here (StreamingOptions::baseline). The agent's
//    self fit also takes the window period (which sets the false-alarm rate q) from the nominal
//    interval, detect() from the recorded timestamps.
//  * Missing channels. detect() scores a model channel the run lacks as missing (robust z 0);
//    the agent refuses a baseline model whose channels it does not stream.
//  * Start-up. detect() lets no incident open in windows ending within settle_s of the first
//    sample; the agent ignores its first settle_samples samples instead. Both are 0 here.
//  * Absences. detect() reports channels that stop (find_absences, kind "absence"); the agent
//    tracks them apart (AbsenceTracker, tests/pipeline/absence_tracker_test.cpp compares the
//    two). Only anomaly incidents are compared here.
//  * History. The agent averages an incident's values over the rows still in its history ring;
//    the ring here holds the whole run.
//  * Incidents open at the end. detect() ends them at their last anomalous window; the agent
//    keeps them active. The active one is compared as if closed.
//  * Arithmetic. detect() scores the forest in one batch (score_many) and the agent one window
//    at a time; both give the same values, so numbers are compared to 1e-9 relative.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reveal/baseline_model.h"
#include "reveal/offline.h"
#include "reveal/store.h"
#include "reveal/streaming.h"

namespace reveal {
namespace {

const std::filesystem::path kRecordings = std::filesystem::path(REVEAL_FIXTURES_DIR) / "recordings";

// Anomaly incidents, and the workload changes told apart from them.
struct Story {
  std::vector<Incident> incidents, changes;
};

Story offline(const Recording& run, const BaselineModel& model, const DetectOptions& call) {
  Story out;
  DetectResult r = detect(run, model, call);
  for (Incident& inc : r.incidents)
    if (inc.kind == "anomaly") out.incidents.push_back(std::move(inc));
  out.changes = std::move(r.workload_changes);
  return out;
}

Story streaming(const Recording& run, const std::shared_ptr<const BaselineModel>& model, const DetectOptions& call) {
  StreamingOptions o;
  o.detect = call;
  o.baseline = model;
  o.history_samples = std::max<std::size_t>(o.warmup_samples, run.t_unix_ns.size() + 1);
  StreamingDetector d(run.meta, run.channels, o);
  for (std::size_t i = 0; i < run.t_unix_ns.size(); ++i) d.push(run.t_unix_ns[i], run.values.row(i));
  Story out;
  out.incidents = d.closed();
  if (d.active()) out.incidents.push_back(*d.active());
  out.changes = d.workload_changes();
  if (d.active_change()) out.changes.push_back(*d.active_change());
  return out;
}

void expect_near(double a, double b, const std::string& what) {
  if (std::isnan(a) && std::isnan(b)) return;
  EXPECT_NEAR(a, b, 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)})) << what;
}

void expect_same(const Incident& off, const Incident& on, const std::string& where) {
  EXPECT_EQ(off.start_unix_ns, on.start_unix_ns) << where;
  EXPECT_EQ(off.end_unix_ns, on.end_unix_ns) << where;
  EXPECT_EQ(off.first_window, on.first_window) << where;
  EXPECT_EQ(off.last_window, on.last_window) << where;
  expect_near(off.start_s, on.start_s, where + " start_s");
  expect_near(off.end_s, on.end_s, where + " end_s");
  expect_near(off.peak_score, on.peak_score, where + " peak");
  EXPECT_EQ(to_string(off.subsystem), to_string(on.subsystem)) << where;
  expect_near(off.confidence, on.confidence, where + " confidence");
  ASSERT_EQ(off.subsystem_shares.size(), on.subsystem_shares.size()) << where;
  for (std::size_t i = 0; i < off.subsystem_shares.size(); ++i) {
    EXPECT_EQ(off.subsystem_shares[i].first, on.subsystem_shares[i].first) << where << " share " << i;
    expect_near(off.subsystem_shares[i].second, on.subsystem_shares[i].second, where + " share");
  }
  EXPECT_EQ(off.focus, on.focus) << where;
  expect_near(off.focus_share, on.focus_share, where + " focus share");
  ASSERT_EQ(off.detectors.size(), on.detectors.size()) << where;
  for (std::size_t d = 0; d < off.detectors.size(); ++d) {
    const auto &a = off.detectors[d], &b = on.detectors[d];
    EXPECT_EQ(a.detector, b.detector) << where;
    expect_near(a.peak_level, b.peak_level, where + " " + a.detector + " peak level");
    ASSERT_EQ(a.subsystem_shares.size(), b.subsystem_shares.size()) << where << " " << a.detector;
    for (std::size_t i = 0; i < a.subsystem_shares.size(); ++i) {
      EXPECT_EQ(a.subsystem_shares[i].first, b.subsystem_shares[i].first) << where << " " << a.detector;
      expect_near(a.subsystem_shares[i].second, b.subsystem_shares[i].second, where + " " + a.detector + " share");
    }
  }
  ASSERT_EQ(off.top.size(), on.top.size()) << where;
  for (std::size_t i = 0; i < off.top.size(); ++i) {
    EXPECT_EQ(off.top[i].name, on.top[i].name) << where << " top " << i;
    expect_near(off.top[i].z, on.top[i].z, where + " top z " + off.top[i].name);
    expect_near(off.top[i].value, on.top[i].value, where + " top value " + off.top[i].name);
    expect_near(off.top[i].reference, on.top[i].reference, where + " top reference " + off.top[i].name);
  }
  EXPECT_EQ(off.action, on.action) << where;
}

std::size_t changes_seen = 0;  // workload changes compared, over the whole test program
std::size_t ended_quiet = 0;   // incidents compared that ended when their symptoms were gone

// Runs one recording against one model both ways; returns the incidents compared.
std::size_t compare(const std::string& run_name, const std::string& model_from) {
  const Recording run = load_recording(kRecordings / (run_name + ".db"));
  DetectOptions train_opts;
  auto model = std::make_shared<const BaselineModel>(
      BaselineModel::train({load_recording(kRecordings / (model_from + ".db"))}, train_opts));
  DetectOptions call;
  call.settle_s = 0;
  const Story off_story = offline(run, *model, call), on_story = streaming(run, model, call);
  const std::vector<Incident>&off = off_story.incidents, &on = on_story.incidents;
  const std::string where = run_name + " against a model of " + model_from;
  EXPECT_EQ(off.size(), on.size()) << where;
  for (std::size_t i = 0; i < std::min(off.size(), on.size()); ++i)
    expect_same(off[i], on[i], where + ", incident " + std::to_string(i));
  // Workload changes (no symptom rose): the same intervals.
  EXPECT_EQ(off_story.changes.size(), on_story.changes.size()) << where;
  for (std::size_t i = 0; i < std::min(off_story.changes.size(), on_story.changes.size()); ++i) {
    EXPECT_EQ(off_story.changes[i].start_unix_ns, on_story.changes[i].start_unix_ns) << where << ", change " << i;
    EXPECT_EQ(off_story.changes[i].end_unix_ns, on_story.changes[i].end_unix_ns) << where << ", change " << i;
  }
  changes_seen += off_story.changes.size();
  for (const Incident& inc : off) ended_quiet += inc.action.find("(ended: its symptoms are gone") != std::string::npos;
  return off.size();
}

std::vector<std::string> fixture_recordings() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(kRecordings))
    if (e.path().extension() == ".db") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(OfflineStreamingParity, EveryFixtureRecordingAgainstAModelOfItself) {
  const std::vector<std::string> names = fixture_recordings();
  ASSERT_GE(names.size(), 5u);
  for (const std::string& n : names) compare(n, n);
}

// Faulty runs against a model of a clean run of the same host or job: these raise incidents,
// so attribution is compared on real evidence, not only on "nothing found".
TEST(OfflineStreamingParity, FaultyRunsAgainstACleanModel) {
  std::size_t incidents = 0;
  incidents += compare("h200-gpu-contention", "h200-clean");
  incidents += compare("fleet-b", "fleet-a");
  incidents += compare("fleet-c", "fleet-a");
  EXPECT_GE(incidents, 2u) << "the comparison must cover incidents";
  const std::size_t before = changes_seen;
  compare("h200-gpu-contention", "h200-clean");
  EXPECT_GE(changes_seen, before + 1) << "the comparison must cover a workload change cut short by symptoms";
  EXPECT_GE(ended_quiet, 1u) << "the comparison must cover an incident that ended when its symptoms were gone";
}

}  // namespace
}  // namespace reveal
