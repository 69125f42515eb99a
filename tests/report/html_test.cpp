#include <cmath>
#include <random>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "reveal/offline.h"
#include "reveal/html_report.h"
#include "reveal/peers.h"
#include "reveal/report.h"
#include "../../src/report/svg.h"

namespace reveal {
namespace {

// A 1 Hz recording of four gauges; between [from, to) the cpu gauge shifts up by 36 noise SDs.
Recording synth(std::size_t n, std::size_t from, std::size_t to, std::uint64_t seed, std::string host = "synthetic") {
  Recording r;
  r.meta.hostname = std::move(host);
  r.meta.interval_s = 1.0;
  r.meta.command = "python3 train.py --lr 1e-3 && echo <done>";
  r.channels = {{"test:cpu_busy", "%", Kind::gauge, Subsystem::cpu},
                {"test:mem_used", "%", Kind::gauge, Subsystem::memory},
                {"test:rx", "bytes/s", Kind::gauge, Subsystem::network},
                {"test:disk_util", "%", Kind::gauge, Subsystem::storage}};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  for (std::size_t i = 0; i < n; ++i) {
    const bool fault = i >= from && i < to;
    const double row[] = {50 + 3 * noise(rng) + (fault ? 36 : 0), 40 + 2 * noise(rng), 5e6 + 2e5 * noise(rng),
                          10 + 2 * noise(rng)};
    r.values.append_row(row);
    r.t_unix_ns.push_back(std::int64_t(1'700'000'000) * 1'000'000'000 + std::int64_t(i) * 1'000'000'000);
  }
  r.meta.start_unix_ns = r.t_unix_ns.front();
  r.meta.end_unix_ns = r.t_unix_ns.back();
  r.config = {{"net.eth0.mtu", "9000"}};
  return r;
}

// The synthetic faults move load channels only: every anomalous interval as an incident.
DetectOptions with_window_z() {
  DetectOptions o;
  o.window_z = true;
  o.workload_changes = false;
  return o;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

std::set<std::string> duplicate_ids(const std::string& page) {
  std::set<std::string> seen, dup;
  static const std::regex id(R"re(\sid="([^"]+)")re");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), id); it != std::sregex_iterator(); ++it)
    if (!seen.insert((*it)[1]).second) dup.insert((*it)[1]);
  return dup;
}

TEST(Html, OneRunHasEveryPartAndTheIncidentCard) {
  const Recording run = synth(120, 50, 80, 1);
  const DetectResult r = detect(run, {}, with_window_z());
  ASSERT_EQ(r.incidents.size(), 1u);
  ASSERT_EQ(r.reference_median.size(), r.scored_channels.size());
  const std::string page = render_html({{"synthetic", &run, &r}}, "run.db");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find(R"(<svg id="timeline" class="chart timeline")"), std::string::npos);
  EXPECT_NE(page.find(R"(<svg id="heatmap" class="chart heatmap")"), std::string::npos);
  EXPECT_EQ(count(page, R"(<section class="incident")"), 1u);
  EXPECT_NE(page.find(R"(data-subsystem="cpu")"), std::string::npos);
  // The card's small multiples: one chart per top channel that moved (|z| ≥ 1; the first
  // always), each with its reference band. Here the three unshifted gauges stay within 1 SD.
  std::size_t moved = 0;
  for (std::size_t i = 0; i < r.incidents[0].top.size(); ++i) moved += i == 0 || std::abs(r.incidents[0].top[i].z) >= 1;
  EXPECT_EQ(r.incidents[0].top.front().name, "test:cpu_busy");
  EXPECT_LT(moved, r.incidents[0].top.size());
  EXPECT_EQ(count(page, R"(class="chart small")"), moved);
  EXPECT_EQ(count(page, R"(<rect class="ref-band")"), moved);
  // The threshold is drawn, the incident shaded on the timeline.
  EXPECT_NE(page.find(R"(<line class="threshold")"), std::string::npos);
  EXPECT_GE(count(page, R"(<rect class="inc")"), 1u + moved);
  // One table row per scored channel, the strongest first: the shifted cpu channel.
  const auto table = page.find(R"(<table id="channels")");
  ASSERT_NE(table, std::string::npos);
  EXPECT_EQ(count(page.substr(table), "<tr>"), r.scored_channels.size() + 1);
  EXPECT_NE(page.find(R"(<td data-value="test:cpu_busy">)", table), std::string::npos);
  EXPECT_LT(page.find("test:cpu_busy", table), page.find("test:mem_used", table));
  // Run summary and configuration snapshot.
  EXPECT_NE(page.find("net.eth0.mtu"), std::string::npos);
  EXPECT_NE(page.find("1 incident:"), std::string::npos);
  EXPECT_TRUE(duplicate_ids(page).empty());
  EXPECT_EQ(page.find(R"(<p class="impact">)"), std::string::npos) << "no tenant scans, no impact";
  // Impact (issue #22): the card states it with its basis, escaped.
  DetectResult ri = r;
  IncidentImpact& m = ri.incidents[0].impact;
  m.measured = true;
  m.tenants = {{"jobs/<a>", 2.0, 1.0, 0.5}};
  m.slowdown = m.slowdown_lo = m.slowdown_hi = 0.5;
  m.job_seconds_lost = 10;
  m.basis = "CPU time";
  const std::string with = render_html({{"synthetic", &run, &ri}}, "run.db");
  EXPECT_NE(with.find(R"(<p class="impact"><b>Impact:</b> jobs/&lt;a&gt; ran at 50 % of its speed (slowdown 50 %))"),
            std::string::npos);
  EXPECT_NE(with.find(R"(<span class="basis">(CPU time)</span>)"), std::string::npos);
}

TEST(Html, SelfContainedEscapedAndDeterministic) {
  const Recording run = synth(120, 50, 80, 2, "<script>alert(1)</script>");
  const DetectResult r = detect(run, {}, with_window_z());
  const std::string page = render_html({{run.meta.hostname, &run, &r}}, "a&b.db");
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("echo &lt;done&gt;"), std::string::npos);
  EXPECT_NE(page.find("a&amp;b.db"), std::string::npos);
  // Nothing is fetched: no URL, no external script, style or image.
  for (const char* ref : {"http:", "https:", "src=", "<link", "@import", "url("}) EXPECT_EQ(page.find(ref), std::string::npos) << ref;
  EXPECT_EQ(count(page, "<script>"), 1u);
  EXPECT_EQ(page, render_html({{run.meta.hostname, &run, &r}}, "a&b.db"));
}

TEST(Html, CleanRunSaysSoAndStillDrawsItsCharts) {
  const Recording run = synth(200, 0, 0, 3);
  const DetectResult r = detect(run, {}, with_window_z());
  ASSERT_TRUE(r.incidents.empty());
  const std::string page = render_html({{"clean", &run, &r}}, "clean.db");
  EXPECT_NE(page.find("No incidents"), std::string::npos);
  EXPECT_EQ(count(page, R"(<section class="incident")"), 0u);
  EXPECT_NE(page.find(R"(<path class="fused")"), std::string::npos);
  EXPECT_NE(page.find(R"(id="heatmap")"), std::string::npos);
}

TEST(Html, WithoutWindowZTheHeatmapSaysWhyAndTheRestRenders) {
  const Recording run = synth(120, 50, 80, 1);
  const DetectResult r = detect(run, {}, {});
  const std::string page = render_html({{"h", &run, &r}}, "run.db");
  EXPECT_EQ(page.find(R"(id="heatmap")"), std::string::npos);
  EXPECT_NE(page.find("No per-channel window scores"), std::string::npos);
  EXPECT_NE(page.find(R"(id="timeline")"), std::string::npos);
}

// The same shift moves a load channel only: by default a workload change, named under the
// verdict, not an incident card.
TEST(Html, WorkloadChangesAreNamedUnderTheVerdictNotAsIncidents) {
  Recording run = synth(120, 50, 80, 1);
  run.channels.push_back({"test.pressure:cpu_some_pct", "%", Kind::gauge, Subsystem::cpu});  // a quiet symptom
  Matrix values(0, run.channels.size());
  for (std::size_t i = 0; i < run.values.rows(); ++i) {
    std::vector<double> row(run.values.row(i).begin(), run.values.row(i).end());
    row.push_back(2.0 + 0.5 * double(i % 3));
    values.append_row(row);
  }
  run.values = std::move(values);
  const DetectResult r = detect(run, {}, {});
  ASSERT_TRUE(r.incidents.empty());
  ASSERT_EQ(r.workload_changes.size(), 1u);
  const std::string page = render_html({{"h", &run, &r}}, "run.db");
  EXPECT_NE(page.find("No incidents: no anomalous interval with a symptom."), std::string::npos);
  EXPECT_NE(page.find(R"(<div class="changes">1 workload change (anomalous intervals in which no symptom rose)"),
            std::string::npos);
  EXPECT_EQ(count(page, R"(<section class="incident")"), 0u);
}

// An incident card names the symptom that made it one.
TEST(Html, AnIncidentCardNamesItsSymptom) {
  Recording run = synth(120, 50, 80, 1);
  run.channels.push_back({"test.pressure:cpu_some_pct", "%", Kind::gauge, Subsystem::cpu});
  Matrix values(0, run.channels.size());
  for (std::size_t i = 0; i < run.values.rows(); ++i) {
    std::vector<double> row(run.values.row(i).begin(), run.values.row(i).end());
    row.push_back(2.0 + 0.5 * double(i % 3) + (i >= 50 && i < 80 ? 40.0 : 0.0));
    values.append_row(row);
  }
  run.values = std::move(values);
  const DetectResult r = detect(run, {}, {});
  ASSERT_EQ(r.incidents.size(), 1u);
  const std::string page = render_html({{"h", &run, &r}}, "run.db");
  EXPECT_NE(page.find(R"(<p class="symptom"><b>Symptom:</b> test.pressure:cpu_some_pct rose )"), std::string::npos);
  EXPECT_EQ(page.find("class=\"led\""), std::string::npos) << "the fused score flagged every window";
  // Windows a symptom's step led are marked on the timeline, one span per run of them.
  DetectResult led = r;
  led.window_symptom.assign(led.fused.size(), "");
  for (std::size_t k : {52, 53, 54, 60}) led.window_symptom.at(k) = "test.pressure:cpu_some_pct";
  const std::string marked = render_html({{"h", &run, &led}}, "run.db");
  EXPECT_EQ(count(marked, "class=\"led\""), 2u);
  EXPECT_NE(marked.find("test.pressure:cpu_some_pct stepped up materially: 3 windows anomalous below the threshold"),
            std::string::npos);
  // An incident whose windows were all led peaks below the threshold, and says why.
  const std::string why = "below it: the symptom's material step made its windows anomalous";
  EXPECT_EQ(marked.find(why), std::string::npos);
  EXPECT_EQ(render_text(led, "run.db").find(why), std::string::npos);
  led.incidents[0].peak_score = 0.5;
  EXPECT_NE(render_html({{"h", &run, &led}}, "run.db").find(why), std::string::npos);
  EXPECT_NE(render_text(led, "run.db").find(why), std::string::npos);
}

// Every in-page link (href="#x") has its target (id="x").
std::set<std::string> dead_links(const std::string& page) {
  std::set<std::string> ids, dead;
  static const std::regex id(R"re(\sid="([^"]+)")re"), href(R"re(href="#([^"]+)")re");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), id); it != std::sregex_iterator(); ++it)
    ids.insert((*it)[1]);
  for (auto it = std::sregex_iterator(page.begin(), page.end(), href); it != std::sregex_iterator(); ++it)
    if (!ids.count((*it)[1])) dead.insert((*it)[1]);
  return dead;
}

// The synthetic run's incident, n times, with peak levels 1..n (the last ones the strongest).
DetectResult with_incidents(const Recording& run, int n) {
  DetectResult r = detect(run, {}, with_window_z());
  EXPECT_EQ(r.incidents.size(), 1u);
  const Incident one = r.incidents.at(0);
  r.incidents.clear();
  for (int i = 0; i < n; ++i) {
    Incident inc = one;
    inc.peak_score = 1.0 + i;
    r.incidents.push_back(inc);
  }
  return r;
}

TEST(Html, ManyIncidentsGetCardsForTheStrongestAndATableForAll) {
  const Recording run = synth(120, 50, 80, 1);
  const DetectResult r = with_incidents(run, 30);
  const std::string page = render_html({{"h", &run, &r}}, "run.db");
  EXPECT_TRUE(dead_links(page).empty()) << *dead_links(page).begin();
  EXPECT_EQ(count(page, R"(<section class="incident")"), 20u);
  EXPECT_NE(page.find(R"(id="incident-11")"), std::string::npos);
  EXPECT_EQ(page.find(R"(id="incident-10")"), std::string::npos);
  const auto table = page.find(R"(<table id="incident-table")");
  ASSERT_NE(table, std::string::npos);
  EXPECT_EQ(count(page.substr(table, page.find("</table>", table) - table), "<tr>"), 31u);
  EXPECT_NE(page.find("30 incidents, the 10 strongest"), std::string::npos);
}

TEST(Html, MoreIncidentsThanTheVerdictListsAllHaveCardsAndTheTable) {
  const Recording run = synth(120, 50, 80, 1);
  for (int n : {10, 11, 15, 20}) {
    const DetectResult r = with_incidents(run, n);
    const std::string page = render_html({{"h", &run, &r}}, "run.db");
    EXPECT_EQ(count(page, R"(<section class="incident")"), std::size_t(n)) << n;
    EXPECT_EQ(page.find(R"(<table id="incident-table")") != std::string::npos, n > 10) << n;
    EXPECT_TRUE(dead_links(page).empty()) << n << ": #" << *dead_links(page).begin();
  }
}

TEST(Html, SeveralHostsGetTheirOwnSectionsAndUniqueIds) {
  const Recording a = synth(120, 50, 80, 1, "a"), b = synth(120, 0, 0, 4, "b");
  const DetectResult ra = detect(a, {}, with_window_z()), rb = detect(b, {}, with_window_z());
  const std::string page = render_html({{"a", &a, &ra}, {"b", &b, &rb}}, "prometheus");
  EXPECT_EQ(count(page, R"(<article class="host")"), 2u);
  EXPECT_NE(page.find(R"(id="timeline-2")"), std::string::npos);
  EXPECT_NE(page.find(R"(id="channels-2")"), std::string::npos);
  EXPECT_TRUE(duplicate_ids(page).empty());
}

TEST(Html, PeersDrawOneLinePerHostOnTheOverview) {
  std::vector<Recording> hosts = {synth(120, 50, 80, 1, "odd"), synth(120, 0, 0, 2, "p1"), synth(120, 0, 0, 3, "p2")};
  const PeersResult pr = compare_peers(hosts, {"odd", "p1", "p2"}, with_window_z());
  std::vector<HtmlHost> hh;
  for (const auto& h : pr.hosts)
    for (std::size_t i = 0; i < hosts.size(); ++i)
      if (hosts[i].meta.hostname == h.name) hh.push_back({h.name, &hosts[i], &h.result});
  ASSERT_EQ(hh.size(), 3u);
  const std::string page = render_html(hh, "peers", &pr);
  const auto overview = page.find(R"(<svg id="timeline" class="chart timeline peers")");
  ASSERT_NE(overview, std::string::npos);
  const std::string chart = page.substr(overview, page.find("</svg>", overview) - overview);
  EXPECT_EQ(count(chart, R"(<path class="hostline")"), 3u);
  EXPECT_NE(page.find(R"(<table id="peers-ranking")"), std::string::npos);
  EXPECT_EQ(count(page, R"(<article class="host")"), 3u);
  EXPECT_TRUE(duplicate_ids(page).empty());
  ASSERT_TRUE(pr.odd.has_value());
  EXPECT_NE(page.find("Odd host: <b>odd</b>"), std::string::npos);
}

TEST(Html, MissingRunOrResultIsAnError) {
  const Recording run = synth(20, 0, 0, 1);
  EXPECT_THROW(render_html({}, "x"), std::invalid_argument);
  EXPECT_THROW(render_html({{"h", &run, nullptr}}, "x"), std::invalid_argument);
}

TEST(Svg, LongSeriesAreReducedPerPixelColumnKeepingPeaks) {
  report::SvgChart c("c", "", 300, 100);
  std::vector<double> x(100000), y(100000, 1.0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = double(i);
  y[54321] = 50;  // one spike
  c.x_domain(0, 1e5);
  c.y_domain(0, 60);
  c.line(x, y, "l");
  const std::string s = c.str();
  const std::size_t points = count(s, "L") + count(s, "M");
  EXPECT_LE(points, 4u * 300u);
  EXPECT_GE(points, 200u);
  // The spike survives: some point is drawn at y(50).
  EXPECT_NE(s.find(fmt::format(",{:.1f}", c.y(50))), std::string::npos);
}

TEST(Svg, GapsBreakTheLine) {
  report::SvgChart c("", "", 300, 100);
  c.x_domain(0, 4);
  c.y_domain(0, 4);
  const std::vector<double> x = {0, 1, 2, 3, 4}, y = {1, 2, NAN, 3, 4};
  c.line(x, y, "l");
  EXPECT_EQ(count(c.str(), "M"), 2u);
}

TEST(Svg, DegenerateDomainsNeverWriteNan) {
  for (const double v : {0.0, 8192.0, 1e17, 9.1e18, -3e19}) {
    report::SvgChart c("c", "small", 300, 120);
    c.x_domain(v, v);
    c.y_domain(v, std::nextafter(v, INFINITY));
    c.axes(true);
    const double xs[] = {v, v, NAN}, ys[] = {v, std::nextafter(v, INFINITY), 1.0};
    c.line(xs, ys, "l");
    c.hline(v, "h");
    const std::string svg = c.str();
    EXPECT_EQ(svg.find("nan"), std::string::npos) << v << ": " << svg;
    EXPECT_EQ(svg.find("inf"), std::string::npos) << v;
  }
}

TEST(Svg, TicksAndEscapingAndDurations) {
  EXPECT_EQ(report::nice_ticks(0, 10, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  const std::vector<double> small = report::nice_ticks(0.05, 0.31, 3);
  ASSERT_EQ(small.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(small[i], 0.1 * double(i + 1), 1e-12);
  EXPECT_TRUE(report::nice_ticks(1, 1, 5).empty());
  // A span of an ulp or two at a large value: no ticks, and no endless loop.
  EXPECT_LE(report::nice_ticks(3882.5937, std::nextafter(3882.5937, 1e9), 3).size(), 2u);
  EXPECT_LE(report::nice_ticks(1e300, std::nextafter(1e300, 2e300), 3).size(), 2u);
  EXPECT_TRUE(report::nice_ticks(0, 1e6, 1'000'000'000).empty());  // more than 100 asked for
  EXPECT_EQ(report::esc(R"(<a href="x">'&')"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;");
  EXPECT_EQ(report::format_seconds(45), "45 s");
  EXPECT_EQ(report::format_seconds(150), "2m30s");
  EXPECT_EQ(report::format_seconds(3900), "1h05m");
}

}  // namespace
}  // namespace reveal
