#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "reveal/peers_report.h"
#include "reveal/report.h"

namespace reveal {
namespace {

DetectResult sample_result() {
  DetectResult r;
  r.mode = "self";
  r.meta.hostname = "h";
  r.meta.start_unix_ns = 1'764'504'000'000'000'000;
  r.n_samples = 10;
  r.window_start_s = {0, 1};
  r.window_end_s = {2, 3};
  r.fused = {0.5, 2.0};
  r.window_top_channel = {"a", "b"};
  r.window_top_z = {1, 9};
  Incident inc;
  inc.start_unix_ns = r.meta.start_unix_ns + 1'000'000'000;
  inc.end_unix_ns = inc.start_unix_ns + 2'000'000'000;
  inc.subsystem = Subsystem::cpu;
  inc.confidence = 0.8;
  inc.subsystem_shares = {{Subsystem::cpu, 0.8}, {Subsystem::memory, 0.2}};
  inc.top = {{"derived:cpu_steal_pct", "%", Subsystem::cpu, 41.0, 0.2, 30}};
  inc.action = "check";
  r.incidents.push_back(inc);
  return r;
}

TEST(Report, TextSummaryComesFirstAndNamesTheEvidence) {
  const std::string t = render_text(sample_result(), "run.db");
  const auto summary = t.find("SUMMARY: 1 incident");
  const auto detail = t.find("INCIDENT #1");
  ASSERT_NE(summary, std::string::npos);
  ASSERT_NE(detail, std::string::npos);
  EXPECT_LT(summary, detail);
  EXPECT_NE(t.find("41.0 % vs 0.2 %"), std::string::npos);
  EXPECT_NE(t.find("cpu (confidence 80 %; memory 20 %)"), std::string::npos);
}

// Impact (issue #22): nothing without tenant scans; the estimate with its basis; "unknown: why".
TEST(Report, TextImpactLineWithItsBasisOrWhyUnknown) {
  DetectResult r = sample_result();
  EXPECT_EQ(render_text(r, "run.db").find("  impact "), std::string::npos);
  IncidentImpact& m = r.incidents[0].impact;
  m.measured = true;
  m.tenants = {{"jobs/a", 1.6, 0.9, 0.9 / 1.6}};
  m.slowdown = m.slowdown_lo = m.slowdown_hi = 1 - 0.9 / 1.6;
  m.job_seconds_lost = 26.25;
  m.basis = "CPU time over the first 30 s";
  std::string t = render_text(r, "run.db");
  EXPECT_NE(t.find("  impact      jobs/a ran at 56 % of its speed (slowdown 44 %), about 26 job-seconds lost\n"
                   "              (CPU time over the first 30 s)\n"),
            std::string::npos)
      << t;
  m.slowdown = m.slowdown_lo = m.slowdown_hi = m.job_seconds_lost = std::nan("");
  m.basis = "unknown: an incident named gpu";
  t = render_text(r, "run.db");
  EXPECT_NE(t.find("  impact      unknown: an incident named gpu\n"), std::string::npos) << t;
  EXPECT_EQ(t.find("nan"), std::string::npos);
}

TEST(Report, TextOpensWithTheSummaryThenTheRunDetails) {
  DetectResult r = sample_result();
  r.meta.cpu_model = "EPYC";
  r.notes.push_back("a note");
  r.incidents[0].start_s = 1;
  r.incidents[0].end_s = 3;
  const std::string t = render_text(r, "run.db");
  // Line 1 the title, line 2 the count, line 3 the incident with its subsystem and times.
  const auto line = [&](int k) {
    std::size_t p = 0;
    for (int i = 0; i < k; ++i) p = t.find('\n', p) + 1;
    return t.substr(p, t.find('\n', p) - p);
  };
  EXPECT_EQ(line(0), "Reveal detect — run.db");
  EXPECT_EQ(line(1), "SUMMARY: 1 incident");
  EXPECT_NE(line(2).find("#1  2025-11-30T12:00:01Z  +1s..+3s"), std::string::npos) << line(2);
  EXPECT_NE(line(2).find("cpu"), std::string::npos) << line(2);
  EXPECT_EQ(line(3), "");
  EXPECT_EQ(line(4).rfind("host h (EPYC", 0), 0u) << line(4);
  const auto note = t.find("note: a note"), detail = t.find("INCIDENT #1");
  ASSERT_NE(note, std::string::npos);
  EXPECT_LT(note, detail);
}

TEST(Report, TextSummaryIsCappedToOneScreen) {
  DetectResult r = sample_result();
  for (int i = 0; i < 19; ++i) r.incidents.push_back(r.incidents.front());  // 20 incidents
  const std::string t = render_text(r, "run.db");
  const std::string summary = t.substr(0, t.find("\n\n"));
  EXPECT_NE(summary.find("SUMMARY: 20 incidents"), std::string::npos);
  EXPECT_NE(summary.find("  #14 "), std::string::npos);
  EXPECT_EQ(summary.find("  #15 "), std::string::npos);
  EXPECT_NE(summary.find("  … and 6 more (see below)"), std::string::npos);
  EXPECT_EQ(std::count(summary.begin(), summary.end(), '\n'), 16);  // title, count, 14 incidents, "and more"
  EXPECT_NE(t.find("INCIDENT #20"), std::string::npos);  // every incident still has its section
}

TEST(Report, TextWithoutIncidents) {
  DetectResult r = sample_result();
  r.incidents.clear();
  const std::string t = render_text(r, "run.db");
  EXPECT_EQ(t.rfind("Reveal detect — run.db\nSUMMARY: 0 incidents\n  no anomalous interval found\n\nhost h", 0), 0u) << t;
}

TEST(Report, JsonCarriesTheSameContent) {
  auto j = nlohmann::json::parse(render_json(sample_result(), "run.db"));
  EXPECT_EQ(j["schema"], "reveal.detect/1");
  ASSERT_EQ(j["incidents"].size(), 1u);
  EXPECT_EQ(j["incidents"][0]["subsystem"], "cpu");
  EXPECT_EQ(j["incidents"][0]["top_channels"][0]["text"], "41.0 % vs 0.2 %");
  EXPECT_EQ(j["incidents"][0]["start"], "2025-11-30T12:00:01Z");
  EXPECT_EQ(j["windows"]["fused"][1], 2.0);
  EXPECT_EQ(j["reference"]["mode"], "self");
  EXPECT_FALSE(j["windows"].contains("channel_z"));
}

TEST(Report, JsonWindowZOnlyWhenKept) {
  DetectResult r = sample_result();
  r.scored_channels = {"a", "b"};
  r.window_z = Matrix(2, 2);
  r.window_z(1, 0) = -3.5;
  r.window_z(1, 1) = std::nan("");
  auto j = nlohmann::json::parse(render_json(r, "run.db"));
  ASSERT_EQ(j["windows"]["channels"], nlohmann::json({"a", "b"}));
  ASSERT_EQ(j["windows"]["channel_z"].size(), 2u);
  EXPECT_EQ(j["windows"]["channel_z"][1][0], -3.5);
  EXPECT_TRUE(j["windows"]["channel_z"][1][1].is_null());
}

// The per-window arrays are written element by element (issue #19): the text is what dump(2)
// of the whole document gives, in pieces, whatever the strings hold — a crafted store's channel
// named like the splice's markers, quotes, control characters — and with empty arrays.
TEST(Report, JsonPerWindowArraysAreWrittenAsTheDocumentWouldBe) {
  DetectResult r = sample_result();
  r.window_top_channel = {"\x01" "0", "q\"uote\n\x02"};
  r.window_symptom = {"", "\x01" "3"};
  r.fused = {std::nan(""), 1e300};
  DetectorTrace d;
  d.name = "iforest";
  d.raw = {0.25, -0.0};
  r.detectors.push_back(d);
  std::string pieces;
  std::size_t calls = 0;
  write_json(r, "run.db", [&](std::string_view p) {
    pieces += p;
    ++calls;
  });
  const std::string text = render_json(r, "run.db");
  EXPECT_EQ(pieces, text);
  EXPECT_GT(calls, 1u);
  const auto j = nlohmann::json::parse(text);
  // Built as one document, the same text.
  nlohmann::json want = j;
  EXPECT_EQ(want.dump(2) + "\n", text);
  EXPECT_EQ(j["windows"]["top_channel"], nlohmann::json({"\x01" "0", "q\"uote\n\x02"}));
  EXPECT_TRUE(j["windows"]["symptom"][0].is_null());
  EXPECT_EQ(j["windows"]["symptom"][1], "\x01" "3");
  EXPECT_TRUE(j["windows"]["fused"][0].is_null());
  EXPECT_EQ(j["windows"]["fused"][1], 1e300);
  EXPECT_EQ(j["windows"]["detectors"][0]["raw"], nlohmann::json({0.25, -0.0}));
  EXPECT_EQ(j["windows"]["detectors"][0]["calibrated"], nlohmann::json::array());
  EXPECT_NE(text.find("\"calibrated\": []"), std::string::npos);
}

// The peers document is written a host at a time; the text is that of the document built whole
// (dump(2)), each host's report its reveal.detect/1 document.
TEST(Report, PeersJsonIsWrittenAsTheDocumentWouldBe) {
  PeersResult pr;
  pr.alignment = "same time";
  pr.start_unix_ns = 1'764'504'000'000'000'000;
  pr.end_unix_ns = pr.start_unix_ns + 9'000'000'000;
  pr.span_s = 9;
  pr.notes = {"left out, \"quoted\"\n: x"};
  for (const char* name : {"b\x01", "a", "c"}) {
    PeerHost h;
    h.name = name;
    h.result = sample_result();
    h.result.window_top_channel = {"\x01" "0", name};
    h.windows = 2;
    h.peak = name[0] == 'b' ? 2.0 : std::nan("");
    h.score = name[0] == 'b' ? 0.5 : 0;
    pr.hosts.push_back(std::move(h));
  }
  pr.hosts[1].result.incidents.clear();
  pr.odd = 0;
  pr.flagged = {"b\x01"};
  pr.odd_channels = pr.hosts[0].result.incidents[0].top;
  std::string pieces;
  std::size_t calls = 0;
  write_peers_json(pr, "stores", [&](std::string_view p) {
    pieces += p;
    ++calls;
  });
  const std::string text = render_peers_json(pr, "stores");
  EXPECT_EQ(pieces, text);
  EXPECT_GT(calls, 3u);
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j.dump(2) + "\n", text);
  ASSERT_EQ(j["hosts"].size(), 3u);
  EXPECT_EQ(j["hosts"][0]["host"], "b\x01");
  EXPECT_EQ(j["hosts"][0]["report"], nlohmann::json::parse(render_json(pr.hosts[0].result, "b\x01")));
  EXPECT_EQ(j["hosts"][1]["report"]["incidents"], nlohmann::json::array());
  EXPECT_TRUE(j["hosts"][2]["peak"].is_null());
  EXPECT_EQ(j["odd_host"], "b\x01");
  EXPECT_EQ(j["notes"][0], pr.notes[0]);
  EXPECT_EQ(j["strongest_channels"][0]["channel"], "derived:cpu_steal_pct");
  // Two hosts without incidents and no odd host.
  pr.hosts.resize(2);
  pr.odd.reset();
  pr.odd_channels.clear();
  const std::string two = render_peers_json(pr, "stores");
  EXPECT_EQ(nlohmann::json::parse(two).dump(2) + "\n", two);
}

}  // namespace
}  // namespace reveal
