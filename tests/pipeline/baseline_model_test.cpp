// Baseline models (include/reveal/baseline_model.h): training, the model file round trip (a
// loaded model scores every window bit-identically), damaged files, channels missing from the
// run, and a persistent fault that only a baseline model can see.
#include <zstd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "pipeline/window_model.h"
#include "reveal/baseline_model.h"
#include "reveal/peers.h"  // slice_recording
#include "reveal/binary_io.h"
#include "reveal/store.h"

namespace reveal {
namespace {

constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kT0 = std::int64_t(1'700'000'000) * kS;

// A 1 Hz host: noisy gauges of CPU, memory and storage, and the kernel's TCP counters (segments
// sent and retransmitted, as proc.net.snmp names them, so tcp_retrans_pct is derived). The
// retransmit rate is `retrans_per_s` on average; from `shift_from` to `shift_to` the CPU gauge
// rises by `cpu_shift` noise SDs.
Recording host(const std::string& name, std::uint64_t seed, std::size_t n, double retrans_per_s,
               std::size_t shift_from = 0, std::size_t shift_to = 0, double cpu_shift = 0) {
  Recording r;
  r.meta.hostname = name;
  r.meta.interval_s = 1.0;
  r.meta.cores = 4;
  r.channels = {{"t:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                {"t:mem_used", "%", Kind::gauge, Subsystem::memory},
                {"proc.net.snmp:Tcp_OutSegs", "count", Kind::counter, Subsystem::network},
                {"proc.net.snmp:Tcp_RetransSegs", "count", Kind::counter, Subsystem::network},
                {"t:disk_util", "%", Kind::gauge, Subsystem::storage}};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  double out = 1e6, re = 1e3;
  for (std::size_t i = 0; i < n; ++i) {
    const bool shifted = i >= shift_from && i < shift_to;
    out += std::round(10000 + 300 * noise(rng));
    re += std::max(0.0, std::round(retrans_per_s + std::sqrt(retrans_per_s) * noise(rng)));
    const double row[] = {50 + 3 * noise(rng) + (shifted ? 3 * cpu_shift : 0), 40 + 2 * noise(rng), out, re,
                          10 + 2 * noise(rng)};
    r.values.append_row(row);
    r.t_unix_ns.push_back(kT0 + std::int64_t(seed) * 1000 * kS + std::int64_t(i) * kS);
  }
  r.meta.start_unix_ns = r.t_unix_ns.front();
  r.meta.end_unix_ns = r.t_unix_ns.back();
  return r;
}

Recording drop_channel(const Recording& r, const std::string& name) {
  Recording out = r;
  out.channels.clear();
  std::vector<std::size_t> keep;
  for (std::size_t c = 0; c < r.channels.size(); ++c)
    if (r.channels[c].name != name) {
      keep.push_back(c);
      out.channels.push_back(r.channels[c]);
    }
  out.values = Matrix(0, keep.size());
  std::vector<double> row(keep.size());
  for (std::size_t i = 0; i < r.values.rows(); ++i) {
    for (std::size_t j = 0; j < keep.size(); ++j) row[j] = r.values(i, keep[j]);
    out.values.append_row(row);
  }
  return out;
}

// Same bits (NaN equal to NaN).
bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
void expect_same(const std::vector<double>& a, const std::vector<double>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t k = 0; k < a.size(); ++k) ASSERT_TRUE(same(a[k], b[k])) << what << " [" << k << "]: " << a[k] << " vs " << b[k];
}

void expect_identical(const DetectResult& a, const DetectResult& b) {
  expect_same(a.fused, b.fused, "fused");
  ASSERT_EQ(a.detectors.size(), b.detectors.size());
  for (std::size_t d = 0; d < a.detectors.size(); ++d) {
    expect_same(a.detectors[d].raw, b.detectors[d].raw, a.detectors[d].name + " raw");
    expect_same(a.detectors[d].calibrated, b.detectors[d].calibrated, a.detectors[d].name + " calibrated");
    expect_same(a.detectors[d].tail_p, b.detectors[d].tail_p, a.detectors[d].name + " tail_p");
  }
  expect_same(a.window_z.data(), b.window_z.data(), "window_z");
  EXPECT_EQ(a.window_top_channel, b.window_top_channel);
  ASSERT_EQ(a.incidents.size(), b.incidents.size());
  for (std::size_t i = 0; i < a.incidents.size(); ++i) {
    EXPECT_EQ(a.incidents[i].start_s, b.incidents[i].start_s);
    EXPECT_EQ(a.incidents[i].end_s, b.incidents[i].end_s);
    EXPECT_TRUE(same(a.incidents[i].peak_score, b.incidents[i].peak_score));
    EXPECT_EQ(a.incidents[i].subsystem, b.incidents[i].subsystem);
    EXPECT_TRUE(same(a.incidents[i].confidence, b.incidents[i].confidence));
  }
  EXPECT_EQ(a.notes, b.notes);
  EXPECT_EQ(a.n_channels_used, b.n_channels_used);
  EXPECT_EQ(a.n_channels_model, b.n_channels_model);
}

// Every field of every window's WindowScore, and each channel's z, from two window models.
void expect_same_scores(const pipeline::WindowModel& a, const pipeline::WindowModel& b, const Recording& run,
                        const BaselineModel& m) {
  const Series s = prepare_series(run);
  std::vector<int> cols;
  for (const auto& ch : m.channels()) cols.push_back(s.find(ch.name));
  for (int c : cols) ASSERT_GE(c, 0);
  const Windows w = make_windows(s, m.options().window);
  std::vector<double> za(a.n_channels()), zb(b.n_channels());
  for (std::size_t k = 0; k < w.first_row.size(); ++k) {
    const pipeline::WindowScore x = a.score(w, k, cols, za), y = b.score(w, k, cols, zb);
    for (auto [p, q] : {std::pair{x.z_raw, y.z_raw}, {x.if_raw, y.if_raw}, {x.spe_raw, y.spe_raw}, {x.t2_raw, y.t2_raw},
                        {x.z_cal, y.z_cal}, {x.if_cal, y.if_cal}, {x.spe_cal, y.spe_cal}, {x.t2_cal, y.t2_cal},
                        {x.fused, y.fused}})
      ASSERT_TRUE(same(p, q)) << "window " << k;
    EXPECT_EQ(x.sustained, y.sustained);
    for (std::size_t d = 0; d < x.tail_p.size(); ++d) ASSERT_TRUE(same(x.tail_p[d], y.tail_p[d])) << "window " << k;
    for (std::size_t i = 0; i < x.subsystem.size(); ++i) ASSERT_TRUE(same(x.subsystem[i], y.subsystem[i]));
    expect_same(za, zb, "z of window " + std::to_string(k));
  }
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("reveal-model-test-" + std::to_string(::getpid()) + "-" + name)).string();
}

TEST(BaselineModel, TrainsOnTheKnownGoodStores) {
  const BaselineModel m = BaselineModel::train({host("a", 1, 200, 5), host("b", 2, 150, 5)}, {}, {"a.db", "b.db"});
  ASSERT_EQ(m.training().size(), 2u);
  EXPECT_EQ(m.training()[0].path, "a.db");
  EXPECT_EQ(m.training()[1].hostname, "b");
  EXPECT_EQ(m.training()[0].samples, 200u);
  EXPECT_EQ(m.training()[0].windows, 198u);  // 3-sample windows at stride 1
  // Each store's start-up windows (ending within the 10 s settle: the first 8) stay out.
  EXPECT_EQ(m.reference_windows(), 198u + 148u - 2 * 8u);
  EXPECT_EQ(m.training_hosts(), (std::vector<std::string>{"a", "b"}));
  std::vector<std::string> names;
  for (const auto& c : m.channels()) names.push_back(c.name);
  EXPECT_NE(std::find(names.begin(), names.end(), "derived:tcp_retrans_pct"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "proc.net.snmp:Tcp_RetransSegs"), names.end());
  EXPECT_EQ(m.floors().size(), m.channels().size());
  EXPECT_GE(m.model_channels(), 1u);
  EXPECT_TRUE(m.source().empty());
}

// The slices of one long store (consecutive recordings of one path) are one training store in
// the metadata, with a note; the windows of every slice are in the reference.
TEST(BaselineModel, SlicesOfOneStoreAreOneTrainingStore) {
  const Recording a = host("a", 1, 200, 0.0), b = host("b", 2, 200, 0.0);
  std::vector<Recording> parts;
  for (std::size_t first : {0, 100}) parts.push_back(slice_recording(a, first, 60));
  parts.push_back(b);
  const BaselineModel m = BaselineModel::train(parts, {}, {"a.db", "a.db", "b.db"});
  ASSERT_EQ(m.training().size(), 2u);
  EXPECT_EQ(m.training()[0].path, "a.db");
  EXPECT_EQ(m.training()[0].samples, 120u);
  EXPECT_EQ(m.training()[0].start_unix_ns, a.t_unix_ns[0]);
  EXPECT_EQ(m.training()[0].end_unix_ns, a.t_unix_ns[159]);
  EXPECT_EQ(m.training()[1].path, "b.db");
  EXPECT_EQ(m.training()[1].samples, 200u);
  ASSERT_FALSE(m.notes().empty());
  EXPECT_NE(m.notes().back().find("a.db: a long store: 120 samples of it, in 2 slices"), std::string::npos)
      << m.notes().back();
  EXPECT_EQ(m.training_hosts(), (std::vector<std::string>{"a", "b"}));
}

TEST(BaselineModel, ShortStoresAreSkippedAndNoneLeftIsAnError) {
  const BaselineModel m = BaselineModel::train({host("a", 1, 200, 5), host("tiny", 2, 3, 5)}, {}, {"a.db", "t.db"});
  EXPECT_EQ(m.training().size(), 1u);
  ASSERT_EQ(m.notes().size(), 1u);
  EXPECT_NE(m.notes()[0].find("t.db"), std::string::npos);
  EXPECT_THROW(BaselineModel::train({host("tiny", 2, 3, 5)}, {}), DetectError);
}

TEST(BaselineModel, RoundTripScoresEveryWindowBitIdentically) {
  const Recording good = host("good", 3, 240, 5);
  const Recording run = host("run", 4, 150, 5, 60, 90, 10);
  for (PcaUse pca : {PcaUse::report, PcaUse::fuse, PcaUse::off}) {
    DetectOptions o;
    o.pca = pca;
    o.window_z = true;
    const BaselineModel trained = BaselineModel::train({good}, o, {"good.db"});
    const std::string bytes = trained.encode();
    ASSERT_EQ(bytes.substr(0, 8), "REVEALMD");
    const BaselineModel loaded = BaselineModel::decode(bytes, "mem");
    EXPECT_EQ(loaded.encode().substr(12), bytes.substr(12)) << "re-encoding changes the payload";
    expect_same_scores(trained.window_model(), loaded.window_model(), run, trained);
    const DetectResult a = detect(run, trained, o), b = detect(run, loaded, o);
    expect_identical(a, b);
    // A store given as a baseline is the same model trained in memory.
    expect_identical(detect(run, {good}, o), a);
    EXPECT_EQ(b.mode, "baseline");
    EXPECT_EQ(b.baseline_model, "mem");
    EXPECT_EQ(b.baseline_hosts, (std::vector<std::string>{"good"}));
    EXPECT_EQ(loaded.options().pca, pca);
    EXPECT_EQ(loaded.channels().size(), trained.channels().size());
    EXPECT_EQ(loaded.metadata_json(), trained.metadata_json());
  }
}

TEST(BaselineModel, SavesAndLoadsAFile) {
  const BaselineModel m = BaselineModel::train({host("good", 3, 200, 5)}, {}, {"good.db"});
  const std::string path = temp_path("save.model");
  m.save(path);
  EXPECT_TRUE(is_model_file(path));
  const BaselineModel l = BaselineModel::load(path);
  EXPECT_EQ(l.source(), path);
  EXPECT_EQ(l.training()[0].path, "good.db");
  EXPECT_EQ(l.format_version(), kModelFormatVersion);
  EXPECT_EQ(l.created_unix_ns(), m.created_unix_ns());
  expect_identical(detect(host("run", 9, 100, 5), m, {}), detect(host("run", 9, 100, 5), l, {}));
  std::filesystem::remove(path);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

// A damaged file is one ModelError line naming it, never a crash.
void expect_model_error(const std::string& bytes, const std::string& needle) {
  try {
    (void)BaselineModel::decode(bytes, "bad.model");
    ADD_FAILURE() << "decoded a damaged model (" << needle << ")";
  } catch (const ModelError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("bad.model: ", 0), 0u) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  }
}

TEST(BaselineModel, DamagedFilesAreOneLineErrors) {
  const std::string good = BaselineModel::train({host("good", 3, 200, 5)}, {}).encode();
  std::string b = good;
  b[0] = 'X';
  expect_model_error(b, "not a Reveal model file");
  expect_model_error("", "not a Reveal model file");
  b = good;
  b[8] = char(kModelFormatVersion + 1);  // a later format
  expect_model_error(b, "version " + std::to_string(kModelFormatVersion + 1) + " is not supported");
  b = good;
  b[8] = 1;  // version 1: no trailing-mean stream
  expect_model_error(b, "version 1 is not supported");
  b = good;
  b[11] = char(0x80);
  expect_model_error(b, "is not supported");
  for (std::size_t cut : {std::size_t(8), std::size_t(10), std::size_t(12), std::size_t(13), std::size_t(40),
                          good.size() / 3, good.size() / 2, good.size() - 1})
    expect_model_error(good.substr(0, cut), cut < 12 ? "truncated" : "");
  expect_model_error(good + "x", "unexpected bytes");
  for (std::size_t at : {std::size_t(20), good.size() / 2, good.size() - 2}) {
    b = good;
    b[at] = char(b[at] ^ 0x5a);
    expect_model_error(b, "");
  }
}

// The payload of a model file, decompressed; and a file around a payload.
std::string payload_of(const std::string& file) {
  const std::string_view frame = std::string_view(file).substr(12);
  std::string body(ZSTD_getFrameContentSize(frame.data(), frame.size()), '\0');
  EXPECT_EQ(ZSTD_decompress(body.data(), body.size(), frame.data(), frame.size()), body.size());
  return body;
}
std::string file_of(const std::string& payload) {
  std::string out = "REVEALMD";
  for (int i = 0; i < 4; ++i) out += char((kModelFormatVersion >> (8 * i)) & 0xff);
  std::string frame(ZSTD_compressBound(payload.size()), '\0');
  frame.resize(ZSTD_compress(frame.data(), frame.size(), payload.data(), payload.size(), 1));
  return out + frame;
}

TEST(BaselineModel, CorruptPayloadsThatDecompressAreRejectedOrHarmless) {
  // Valid zstd around a damaged payload: the checksum cannot help, the decoder's checks must.
  const Recording run = host("run", 5, 60, 5);
  const std::string payload = payload_of(BaselineModel::train({host("good", 3, 120, 5)}, {}).encode());
  EXPECT_NO_THROW((void)BaselineModel::decode(file_of(payload), "bad.model"));
  expect_model_error(file_of(payload.substr(0, payload.size() - 1)), "runs past the end");
  expect_model_error(file_of(payload + "WMOD"), "truncated");
  expect_model_error(file_of("META" + std::string(8, '\0')), "required section is missing");
  std::mt19937_64 rng(11);
  std::size_t rejected = 0;
  for (int trial = 0; trial < 150; ++trial) {
    std::string p = payload;
    // Mostly in the first 40 kB: the metadata, the window model's arrays and the first trees.
    const std::size_t at = std::size_t(rng() % std::min<std::size_t>(p.size(), trial % 3 ? 40000 : p.size()));
    p[at] = char(rng() & 0xff);
    try {
      const BaselineModel m = BaselineModel::decode(file_of(p), "bad.model");
      (void)detect(run, m, {});  // whatever was accepted scores without crashing
    } catch (const ModelError&) {
      ++rejected;
    } catch (const DetectError&) {  // e.g. a channel renamed away from the run
    }
  }
  EXPECT_GT(rejected, 0u);
}

TEST(BaselineModel, LoadErrorsNameTheFile) {
  EXPECT_THROW(BaselineModel::load(temp_path("missing.model")), ModelError);
  try {
    (void)BaselineModel::load(temp_path("missing.model"));
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos);
  }
  const std::string empty = temp_path("empty.model");
  std::ofstream(empty).close();
  EXPECT_THROW(BaselineModel::load(empty), ModelError);
  EXPECT_FALSE(is_model_file(empty));
  std::filesystem::remove(empty);
  EXPECT_THROW(BaselineModel::load(std::filesystem::temp_directory_path().string()), ModelError);
  const std::string store = std::string(REVEAL_FIXTURES_DIR) + "/recordings/fleet-a.db";
  EXPECT_FALSE(is_model_file(store));
  EXPECT_THROW(BaselineModel::load(store), ModelError);
}

TEST(BaselineModel, ModelChannelsMissingFromTheRunAreScoredAsMissing) {
  const BaselineModel m = BaselineModel::train({host("good", 3, 240, 5)}, {});
  // The run lacks the memory gauge and has one channel the model does not know.
  Recording run = drop_channel(host("run", 4, 150, 5, 60, 90, 12), "t:mem_used");
  run.channels.push_back({"t:new_gauge", "%", Kind::gauge, Subsystem::system});
  Matrix v(0, run.channels.size());
  std::vector<double> row(run.channels.size());
  for (std::size_t i = 0; i < run.values.rows(); ++i) {
    for (std::size_t c = 0; c + 1 < row.size(); ++c) row[c] = run.values(i, c);
    row.back() = double(i % 7);
    v.append_row(row);
  }
  run.values = v;
  DetectOptions o;
  o.window_z = true;
  o.workload_changes = false;  // the shift moves a load channel only
  const DetectResult r = detect(run, m, o);
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_NE(r.notes[0].find("1 channels of the run are not in the baseline model"), std::string::npos) << r.notes[0];
  EXPECT_NE(r.notes[1].find("1 of the baseline model's"), std::string::npos) << r.notes[1];
  EXPECT_EQ(r.n_channels_used, m.channels().size() - 1);
  std::size_t mem = r.scored_channels.size();
  for (std::size_t j = 0; j < r.scored_channels.size(); ++j)
    if (r.scored_channels[j] == "t:mem_used") mem = j;
  ASSERT_LT(mem, r.scored_channels.size());
  for (std::size_t k = 0; k < r.fused.size(); ++k) {
    EXPECT_TRUE(std::isfinite(r.fused[k]));
    EXPECT_EQ(r.window_z(k, mem), 0.0);
  }
  ASSERT_EQ(r.incidents.size(), 1u);
  EXPECT_EQ(r.incidents[0].subsystem, Subsystem::cpu);
  EXPECT_GE(r.incidents[0].start_s, 55.0);
  EXPECT_LE(r.incidents[0].end_s, 95.0);
  // No model channel in the run at all.
  Recording alien = run;
  for (auto& c : alien.channels) c.name = "other:" + c.name;
  EXPECT_THROW(detect(alien, m, {}), DetectError);
}

TEST(BaselineModel, TheModelFixesTheWindowAndTheCallTheIncidentRule) {
  DetectOptions train_opts;
  train_opts.window = {5, 2};
  const BaselineModel m = BaselineModel::train({host("good", 3, 240, 5)}, train_opts);
  DetectOptions call;  // window 3, stride 1: ignored, the model's apply
  call.top_channels = 2;
  call.workload_changes = false;  // the call's too: the shift moves a load channel only
  const DetectResult r = detect(host("run", 4, 150, 5, 60, 90, 12), m, call);
  ASSERT_GE(r.window_start_s.size(), 2u);
  EXPECT_EQ(r.window_end_s[0] - r.window_start_s[0], 4.0);
  EXPECT_EQ(r.window_start_s[1] - r.window_start_s[0], 2.0);
  ASSERT_FALSE(r.incidents.empty());
  EXPECT_LE(r.incidents[0].top.size(), 2u);
  call.workload_changes = true;
  const DetectResult changes = detect(host("run", 4, 150, 5, 60, 90, 12), m, call);
  EXPECT_TRUE(changes.incidents.empty());
  EXPECT_EQ(changes.workload_changes.size(), r.incidents.size());
}

// The case: a fault present for the whole run (TCP retransmits at 40× the good rate,
// e.g. a wrong MTU) is the run's normal to itself, and an anomaly against a good run's model.
TEST(BaselineModel, PersistentFaultIsFoundAgainstAModelButNotInSelfMode) {
  const Recording good = host("good", 21, 300, 5);
  const Recording run = host("faulty", 22, 180, 200);  // 40 × 5 retransmits/s, all run long
  const DetectResult self = detect(run, {}, {});
  EXPECT_EQ(self.mode, "self");
  EXPECT_TRUE(self.incidents.empty()) << self.incidents.size() << " incidents, first at +" << self.incidents[0].start_s;

  const std::string path = temp_path("persistent.model");
  BaselineModel::train({good}, {}, {"good.db"}).save(path);
  const DetectResult base = detect(run, BaselineModel::load(path), {});
  std::filesystem::remove(path);
  EXPECT_EQ(base.mode, "baseline");
  EXPECT_EQ(base.baseline_model, path);
  ASSERT_FALSE(base.incidents.empty());
  const Incident* longest = &base.incidents[0];
  for (const auto& inc : base.incidents)
    if (inc.end_s - inc.start_s > longest->end_s - longest->start_s) longest = &inc;
  EXPECT_EQ(longest->subsystem, Subsystem::network) << to_string(longest->subsystem);
  const double span = base.window_end_s.back() - base.window_start_s.front();
  EXPECT_GT(longest->end_s - longest->start_s, 0.8 * span) << longest->start_s << ".." << longest->end_s;
  ASSERT_FALSE(longest->top.empty());
  EXPECT_EQ(longest->top[0].subsystem, Subsystem::network) << longest->top[0].name;
  EXPECT_GT(longest->top[0].value, 10 * longest->top[0].reference) << longest->top[0].name;
}

// A real recording: the H200 model trained on the clean run scores the contention run
// identically after a round trip through a file.
TEST(BaselineModel, RealRecordingRoundTrip) {
  const std::string dir = std::string(REVEAL_FIXTURES_DIR) + "/recordings/";
  const Recording clean = load_recording(dir + "h200-clean.db");
  const Recording run = load_recording(dir + "h200-gpu-contention.db");
  DetectOptions o;
  o.window_z = true;
  const BaselineModel m = BaselineModel::train({clean}, o, {"h200-clean.db"});
  const BaselineModel l = BaselineModel::decode(m.encode(), "h200.model");
  expect_identical(detect(run, m, o), detect(run, l, o));
  expect_same_scores(m.window_model(), l.window_model(), clean, m);
}

}  // namespace
}  // namespace reveal

namespace reveal {
namespace {

// The false-alarm knob belongs to the detect call, not to the model: the same model scores a
// run at the rate each call asks for.
TEST(BaselineModel, FalsePerDayIsTheCallsKnob) {
  const BaselineModel m = BaselineModel::train({host("a", 1, 200, 5)}, {}, {"a.db"});
  const Recording run = host("r", 3, 200, 5);
  DetectOptions o;
  const DetectResult strict = detect(run, m, o);
  o.false_per_day = 8640;
  const DetectResult loose = detect(run, m, o);
  EXPECT_NEAR(loose.window_false_rate / strict.window_false_rate, 8640.0, 1e-6);
  EXPECT_EQ(loose.false_per_day, 8640.0);
  ASSERT_FALSE(strict.detectors.empty());
  EXPECT_LT(loose.detectors[0].threshold, strict.detectors[0].threshold);
  o.false_per_day = 1;
  const DetectResult again = detect(run, m, o);
  EXPECT_EQ(again.fused, strict.fused);
}

}  // namespace
}  // namespace reveal
