// Fleet reader (include/reveal/prometheus_source.h) against an in-process fake Prometheus that
// serves /api/v1/series and /api/v1/query_range from synthetic series, and against broken or
// hostile servers on loopback (issue #18): endless or announced-huge answers, a gzip bomb, more
// series than announced, answers dripped past the deadline, redirects off the origin.
#include "fleet/prometheus_source.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

namespace reveal {
namespace {

using nlohmann::json;
constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kT0 = 1'800'000'000;  // Unix seconds of the first step

// A synthetic series: its labels and value at Unix second t (nullopt: no point, a string: sent
// as that text).
struct FakeSeries {
  json metric;
  std::function<std::optional<std::string>(std::int64_t t)> value;
};

class FakePrometheus {
 public:
  std::vector<FakeSeries> series;
  std::size_t series_count_override = 0;  // > 0: /api/v1/series reports this many
  // Replaces the query_range handler when set (error answers).
  std::function<void(const httplib::Request&, httplib::Response&)> range_override;
  std::vector<std::map<std::string, std::string>> range_calls;
  std::string last_series_match, last_series_start;
  // query_range requests being answered now, and the most at once (each answer takes
  // range_delay): the fleet reader's parallelism.
  std::atomic<int> ranges_in_flight{0}, most_ranges_in_flight{0};
  std::chrono::milliseconds range_delay{0};

  // A selector's instance="..." matcher (the fake's only filter), if any: nullopt for none.
  static std::optional<std::string> instance_of(const std::string& selector) {
    const std::size_t at = selector.find("instance=\"");
    if (at == std::string::npos) return std::nullopt;
    const std::size_t from = at + 10, to = selector.find('"', from);
    return selector.substr(from, to - from);
  }
  static bool selected(const json& metric, const std::optional<std::string>& instance) {
    return !instance || metric.value("instance", std::string()) == *instance;
  }

  FakePrometheus() {
    srv_.Get("/api/v1/label/instance/values", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(mu_);
      std::set<std::string> names;
      for (const auto& s : series)
        if (s.metric.contains("instance")) names.insert(s.metric["instance"].get<std::string>());
      res.set_content(json{{"status", "success"}, {"data", names}}.dump(), "application/json");
    });
    srv_.Get("/api/v1/series", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      last_series_match = req.get_param_value("match[]");
      last_series_start = req.get_param_value("start");
      const auto instance = instance_of(last_series_match);
      json data = json::array();
      const std::size_t n = series_count_override ? series_count_override : series.size();
      for (std::size_t i = 0; i < n; ++i)
        if (i >= series.size() || selected(series[i].metric, instance))
          data.push_back(i < series.size() ? series[i].metric : json{{"i", i}});
      res.set_content(json{{"status", "success"}, {"data", data}}.dump(), "application/json");
    });
    srv_.Get("/api/v1/query_range", [this](const httplib::Request& req, httplib::Response& res) {
      const int now = ++ranges_in_flight;
      for (int most = most_ranges_in_flight; now > most && !most_ranges_in_flight.compare_exchange_weak(most, now);) {
      }
      std::this_thread::sleep_for(range_delay);
      --ranges_in_flight;
      std::lock_guard lock(mu_);
      range_calls.push_back({{"query", req.get_param_value("query")},
                             {"start", req.get_param_value("start")},
                             {"end", req.get_param_value("end")},
                             {"step", req.get_param_value("step")}});
      if (range_override) return range_override(req, res);
      const double a = std::stod(req.get_param_value("start")), b = std::stod(req.get_param_value("end")),
                   step = std::stod(req.get_param_value("step"));
      std::size_t points = std::size_t(std::floor((b - a) / step + 1e-9)) + 1;
      if (points > 11000) {
        res.status = 400;
        res.set_content(R"J({"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)"})J",
                        "application/json");
        return;
      }
      json result = json::array();
      const auto instance = instance_of(req.get_param_value("query"));
      for (const auto& s : series) {
        if (!selected(s.metric, instance)) continue;
        json values = json::array();
        for (std::size_t k = 0; k < points; ++k) {
          const double t = a + double(k) * step;
          if (auto v = s.value(std::llround(t))) values.push_back({t, *v});
        }
        if (!values.empty()) result.push_back({{"metric", s.metric}, {"values", values}});
      }
      res.set_content(json{{"status", "success"}, {"data", {{"resultType", "matrix"}, {"result", result}}}}.dump(),
                      "application/json");
    });
    // /moved/<path> redirects to /<path> on this server (the query kept): a same-origin redirect.
    srv_.Get("/moved/(.*)", [](const httplib::Request& req, httplib::Response& res) {
      const std::size_t q = req.target.find('?');
      res.set_redirect("/" + req.matches[1].str() + (q == std::string::npos ? "" : req.target.substr(q)), 307);
    });
    port_ = srv_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { srv_.listen_after_bind(); });
    for (int i = 0; i < 500 && !srv_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ~FakePrometheus() {
    srv_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server srv_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
};

json labels(const std::string& name, const std::string& instance, const std::string& channel, const std::string& unit,
            const std::string& subsystem) {
  return {{"__name__", name}, {"job", "reveal"}, {"instance", instance}, {"channel", channel}, {"unit", unit},
          {"subsystem", subsystem}};
}

PrometheusQuery query(const FakePrometheus& p, std::int64_t first_s, std::int64_t last_s) {
  PrometheusQuery q;
  q.url = p.url();
  q.selector = "{job=\"reveal\"}";
  q.start_unix_ns = first_s * kS;
  q.end_unix_ns = last_s * kS;
  q.step_ns = kS;
  q.timeout_s = 10;
  return q;
}

// The one-line PrometheusError `read` throws ("" and a test failure when none).
template <class Read>
std::string one_line_error(const Read& read) {
  try {
    read();
  } catch (const PrometheusError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
    return msg;
  }
  ADD_FAILURE() << "no error";
  return {};
}

std::string error_of(const PrometheusQuery& q) {
  return one_line_error([&] { read_prometheus(q); });
}

TEST(PrometheusSource, AddMatcher) {
  const std::string m = "channel!=\"\"";
  EXPECT_EQ(add_matcher("{job=\"reveal\"}", m), "{job=\"reveal\",channel!=\"\"}");
  EXPECT_EQ(add_matcher("  {job=\"reveal\", instance=~\"a|b\"} ", m), "{job=\"reveal\", instance=~\"a|b\",channel!=\"\"}");
  EXPECT_EQ(add_matcher("reveal_proc_stat_user_total", m), "reveal_proc_stat_user_total{channel!=\"\"}");
  EXPECT_EQ(add_matcher("up{job=\"x\",}", m), "up{job=\"x\",channel!=\"\"}");
  EXPECT_EQ(add_matcher("", m), "{channel!=\"\"}");
  EXPECT_EQ(add_matcher("{}", m), "{channel!=\"\"}");
  EXPECT_EQ(add_matcher("{job=\"a}b\"}", m), "{job=\"a}b\",channel!=\"\"}");  // '}' inside quotes
  EXPECT_EQ(add_matcher("{job=\"a\\\"}\"}", m), "{job=\"a\\\"}\",channel!=\"\"}");  // escaped quote
  for (const char* bad : {"rate(x[5m])", "{job=\"x\"}[5m]", "{job=\"x\"", "x{a=\"b\"} + y{c=\"d\"}", "{job=\"x}",
                          "1x", "sum({job=\"x\"})"})
    EXPECT_THROW(add_matcher(bad, m), PrometheusError) << bad;
}

TEST(PrometheusSource, ParseUrl) {
  auto e = fleet::parse_url("http://127.0.0.1:9090");
  EXPECT_EQ(e.origin, "http://127.0.0.1:9090");
  EXPECT_EQ(e.prefix, "");
  e = fleet::parse_url("HTTPS://prom.example.com/prometheus/");
  EXPECT_EQ(e.origin, "https://prom.example.com");
  EXPECT_EQ(e.prefix, "/prometheus");
  e = fleet::parse_url("http://[::1]:9090/");
  EXPECT_EQ(e.origin, "http://[::1]:9090");
  for (const char* bad : {"127.0.0.1:9090", "ftp://x", "http://", "http://:9090", "http://h:99999", "http://h:x",
                          "http://h:9090/?a=b", "http://u:p@h:9090"})
    EXPECT_THROW(fleet::parse_url(bad), PrometheusError) << bad;
}

TEST(PrometheusSource, GridAndPieces) {
  const fleet::Grid g = fleet::make_grid(kT0 * kS + 400'000, (kT0 + 25000) * kS, kS);  // start rounds to ms
  EXPECT_EQ(g.start_ns, kT0 * kS);
  EXPECT_EQ(g.n, 25001u);
  const auto pieces = fleet::split_grid(g, 10000);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0], std::make_pair(std::size_t(0), std::size_t(9999)));
  EXPECT_EQ(pieces[1], std::make_pair(std::size_t(10000), std::size_t(19999)));
  EXPECT_EQ(pieces[2], std::make_pair(std::size_t(20000), std::size_t(25000)));
  EXPECT_EQ(fleet::steps_per_request(1), 10000u);
  EXPECT_EQ(fleet::steps_per_request(500), 2000u);
  EXPECT_EQ(fleet::steps_per_request(100'000'000), 1u);
  EXPECT_THROW(fleet::make_grid(10 * kS, 5 * kS, kS), PrometheusError);
  EXPECT_THROW(fleet::make_grid(0, kS, 100'000), PrometheusError);  // 0.1 ms step
}

TEST(PrometheusSource, OneRecordingPerInstanceOnTheGrid) {
  FakePrometheus p;
  // fleet-a: a counter with a gap (+10..+12 s) and a gauge that is "NaN" at +5 s.
  p.series.push_back({labels("reveal_proc_stat_user_total", "fleet-a", "proc.stat:user", "ticks", "cpu"),
                      [](std::int64_t t) -> std::optional<std::string> {
                        if (t >= kT0 + 10 && t <= kT0 + 12) return std::nullopt;
                        return std::to_string(100 * (t - kT0));
                      }});
  p.series.push_back({labels("reveal_proc_meminfo_MemAvailable", "fleet-a", "proc.meminfo:MemAvailable", "kB", "memory"),
                      [](std::int64_t t) -> std::optional<std::string> {
                        return t == kT0 + 5 ? std::string("NaN") : std::string("1.5e+06");
                      }});
  // fleet-b: one gauge, only from +20 s (the host is trimmed to that), "+Inf" at +25 s.
  p.series.push_back({labels("reveal_sys_net_operstate", "fleet-b", "sys.net:operstate.eth0", "state", "network"),
                      [](std::int64_t t) -> std::optional<std::string> {
                        if (t < kT0 + 20) return std::nullopt;
                        return t == kT0 + 25 ? std::string("+Inf") : std::string("1");
                      }});
  // A series without a channel label (not a raw channel) is ignored.
  p.series.push_back({{{"__name__", "reveal_anomaly_score"}, {"instance", "fleet-b"}},
                      [](std::int64_t) -> std::optional<std::string> { return std::string("0.5"); }});
  const auto hosts = read_prometheus(query(p, kT0, kT0 + 29));
  ASSERT_EQ(hosts.size(), 2u);
  const Recording& a = hosts[0];
  EXPECT_EQ(a.meta.hostname, "fleet-a");
  EXPECT_EQ(a.meta.interval_s, 1.0);
  EXPECT_EQ(a.meta.command, "prometheus " + p.url() + " {job=\"reveal\"}");
  EXPECT_EQ(a.meta.start_unix_ns, kT0 * kS);
  EXPECT_EQ(a.meta.end_unix_ns, (kT0 + 29) * kS);
  ASSERT_EQ(a.t_unix_ns.size(), 30u);
  EXPECT_EQ(a.t_unix_ns[7], (kT0 + 7) * kS);
  ASSERT_EQ(a.channels.size(), 2u);  // sorted by name
  EXPECT_EQ(a.channels[0].name, "proc.meminfo:MemAvailable");
  EXPECT_EQ(a.channels[0].kind, Kind::gauge);
  EXPECT_EQ(a.channels[0].unit, "kB");
  EXPECT_EQ(a.channels[0].subsystem, Subsystem::memory);
  EXPECT_EQ(a.channels[1].name, "proc.stat:user");
  EXPECT_EQ(a.channels[1].kind, Kind::counter);
  EXPECT_EQ(a.channels[1].subsystem, Subsystem::cpu);
  EXPECT_EQ(a.values(4, 0), 1.5e6);
  EXPECT_TRUE(std::isnan(a.values(5, 0)));
  EXPECT_EQ(a.values(9, 1), 900);
  for (int k = 10; k <= 12; ++k) EXPECT_TRUE(std::isnan(a.values(k, 1))) << k;
  EXPECT_EQ(a.values(13, 1), 1300);
  const Recording& b = hosts[1];
  EXPECT_EQ(b.meta.hostname, "fleet-b");
  ASSERT_EQ(b.channels.size(), 1u);
  EXPECT_EQ(b.channels[0].name, "sys.net:operstate.eth0");
  EXPECT_EQ(b.channels[0].kind, Kind::gauge);
  EXPECT_EQ(b.meta.start_unix_ns, (kT0 + 20) * kS);
  ASSERT_EQ(b.t_unix_ns.size(), 10u);
  EXPECT_TRUE(std::isinf(b.values(5, 0)));
  // The query asked for raw channels only, on the grid.
  ASSERT_EQ(p.range_calls.size(), 1u);
  EXPECT_EQ(p.range_calls[0]["query"], "{job=\"reveal\",channel!=\"\"}");
  EXPECT_EQ(p.last_series_match, "{job=\"reveal\",channel!=\"\"}");
  // The series are counted from 5 minutes before the start (query_range's lookback).
  EXPECT_EQ(p.last_series_start, std::to_string(kT0 - 300) + ".000");
  EXPECT_EQ(p.range_calls[0]["start"], std::to_string(kT0) + ".000");
  EXPECT_EQ(p.range_calls[0]["end"], std::to_string(kT0 + 29) + ".000");
  EXPECT_EQ(p.range_calls[0]["step"], "1.000");
}

TEST(PrometheusSource, RepeatedScrapesAreDropped) {
  FakePrometheus p;
  // A tick counter and a gauge; the sample of +10 s is seen again at +11 s, and from +20 s the
  // host stopped reporting (the server repeats its last sample).
  const auto frozen = [](std::int64_t t) { return t == kT0 + 11 ? kT0 + 10 : std::min(t, kT0 + 20); };
  p.series.push_back({labels("reveal_proc_stat_idle_total", "h", "proc.stat:idle", "ticks", "cpu"),
                      [&](std::int64_t t) -> std::optional<std::string> {
                        return std::to_string(100 * (frozen(t) - kT0));
                      }});
  p.series.push_back({labels("reveal_proc_meminfo_MemFree", "h", "proc.meminfo:MemFree", "kB", "memory"),
                      [&](std::int64_t t) -> std::optional<std::string> {
                        return std::to_string(5000 + (frozen(t) - kT0) % 3);
                      }});
  const auto hosts = read_prometheus(query(p, kT0, kT0 + 29));
  ASSERT_EQ(hosts.size(), 1u);
  const Recording& h = hosts[0];
  ASSERT_EQ(h.t_unix_ns.size(), 20u);  // +0..+10, +12..+20
  EXPECT_EQ(h.t_unix_ns[10], (kT0 + 10) * kS);
  EXPECT_EQ(h.t_unix_ns[11], (kT0 + 12) * kS);
  EXPECT_EQ(h.values(11, 1), 1200);
  EXPECT_EQ(h.meta.end_unix_ns, (kT0 + 20) * kS);
}

// A step finer than the host's scrapes (every 15 s): the repeats are dropped and the interval is
// the samples' spacing, not the step.
TEST(PrometheusSource, AStepFinerThanTheScrapesGivesTheScrapeInterval) {
  FakePrometheus p;
  const auto scraped = [](std::int64_t t) { return kT0 + (t - kT0) / 15 * 15; };
  p.series.push_back({labels("reveal_proc_stat_idle_total", "h", "proc.stat:idle", "ticks", "cpu"),
                      [&](std::int64_t t) -> std::optional<std::string> {
                        return std::to_string(100 * (scraped(t) - kT0));
                      }});
  const auto hosts = read_prometheus(query(p, kT0, kT0 + 299));
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].t_unix_ns.size(), 20u);
  EXPECT_DOUBLE_EQ(hosts[0].meta.interval_s, 15.0);
  // Two scrapes: their spacing.
  EXPECT_DOUBLE_EQ(read_prometheus(query(p, kT0, kT0 + 20))[0].meta.interval_s, 15.0);
  // At the scrape interval itself, the step.
  EXPECT_DOUBLE_EQ(read_prometheus([&] {
              PrometheusQuery q = query(p, kT0, kT0 + 299);
              q.step_ns = 15 * kS;
              return q;
            }())[0].meta.interval_s,
            15.0);
}

// A host that stopped reporting long before the range's end: the server fills its steps with
// the last sample for up to 5 minutes, more steps than the host was read live; those steps are
// still the same sample seen again, and the host ends where it stopped.
TEST(PrometheusSource, AHostThatStoppedLongBeforeTheEndEndsWhereItStopped) {
  FakePrometheus p;
  const auto frozen = [](std::int64_t t) { return std::min(t, kT0 + 20); };
  p.series.push_back({labels("reveal_proc_stat_idle_total", "h", "proc.stat:idle", "ticks", "cpu"),
                      [&](std::int64_t t) -> std::optional<std::string> {
                        return std::to_string(100 * (frozen(t) - kT0));
                      }});
  p.series.push_back({labels("reveal_proc_meminfo_MemFree", "h", "proc.meminfo:MemFree", "kB", "memory"),
                      [&](std::int64_t t) -> std::optional<std::string> {
                        return std::to_string(5000 + (frozen(t) - kT0) % 3);
                      }});
  const auto hosts = read_prometheus(query(p, kT0, kT0 + 200));
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].t_unix_ns.size(), 21u);
  EXPECT_EQ(hosts[0].meta.end_unix_ns, (kT0 + 20) * kS);
}

// The fleet a host at a time (issue #19): the hosts listed by their instance label, series
// without one as one more host, each read with its own query, at most `jobs` at once.
TEST(PrometheusSource, HostsAreListedAndReadOneQueryEachAtMostJobsAtOnce) {
  FakePrometheus p;
  p.range_delay = std::chrono::milliseconds(100);
  const auto counter = [](std::int64_t t) -> std::optional<std::string> { return std::to_string(100 * (t - kT0)); };
  for (const char* h : {"node-3", "node-1", "node-2", "node-5", "node-4"})
    p.series.push_back({labels("reveal_proc_stat_idle_total", h, "proc.stat:idle", "ticks", "cpu"), counter});
  p.series.push_back({{{"__name__", "reveal_proc_stat_idle_total"}, {"channel", "proc.stat:idle"}, {"unit", "ticks"},
                       {"subsystem", "cpu"}},
                      counter});
  const PrometheusQuery q = query(p, kT0, kT0 + 9);
  const std::vector<std::string> hosts = prometheus_instances(q);
  EXPECT_EQ(hosts, (std::vector<std::string>{"node-1", "node-2", "node-3", "node-4", "node-5", ""}));
  std::mutex mu;
  std::vector<std::string> got(hosts.size());
  std::vector<std::size_t> done;
  for_each_prometheus_host(
      q, hosts, 2,
      [&](std::size_t i, Recording&& r) {
        std::lock_guard lock(mu);
        EXPECT_EQ(r.t_unix_ns.size(), 10u);
        got[i] = r.meta.hostname;
      },
      [&](std::size_t k) { done.push_back(k); });
  EXPECT_EQ(got, (std::vector<std::string>{"node-1", "node-2", "node-3", "node-4", "node-5", "(no instance)"}));
  EXPECT_EQ(done, (std::vector<std::size_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(p.range_calls.size(), 6u);  // one query per host
  for (auto& call : p.range_calls) EXPECT_NE(call["query"].find(",instance=\""), std::string::npos) << call["query"];
  EXPECT_EQ(p.most_ranges_in_flight.load(), 2);
}

TEST(PrometheusSource, AHostsErrorStopsTheFleetAndNamesTheHost) {
  FakePrometheus p;
  for (const char* h : {"a", "b", "c"})
    p.series.push_back({labels("reveal_proc_stat_idle_total", h, "proc.stat:idle", "ticks", "cpu"),
                        [](std::int64_t t) -> std::optional<std::string> { return std::to_string(t - kT0); }});
  const PrometheusQuery q = query(p, kT0, kT0 + 9);
  std::atomic<int> used{0};
  try {
    for_each_prometheus_host(q, {"a", "b", "c"}, 1, [&](std::size_t i, Recording&&) {
      ++used;
      if (i == 1) throw std::runtime_error("b is bad");
    });
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "b is bad");
  }
  EXPECT_EQ(used.load(), 2);  // c was not read
  // A listed host with nothing in the range (the server lists by storage block) is handed
  // over without samples, named; the others are read as usual.
  p.series.push_back({labels("reveal_proc_stat_idle_total", "old", "proc.stat:idle", "ticks", "cpu"),
                      [](std::int64_t) -> std::optional<std::string> { return std::nullopt; }});
  std::mutex mu;
  std::map<std::size_t, std::pair<std::string, std::size_t>> got;
  for_each_prometheus_host(q, {"a", "gone", "old"}, 2, [&](std::size_t i, Recording&& r) {
    std::lock_guard lock(mu);
    got[i] = {r.meta.hostname, r.t_unix_ns.size()};
  });
  using Got = std::pair<std::string, std::size_t>;
  EXPECT_EQ(got[0], (Got{"a", 10}));
  EXPECT_EQ(got[1], (Got{"gone", 0}));
  EXPECT_EQ(got[2], (Got{"old", 0}));
  EXPECT_EQ(got.size(), 3u);
  // The host's value is escaped as a PromQL string.
  EXPECT_EQ(host_query(q, "a\"b\\c\nd").selector, "{job=\"reveal\",instance=\"a\\\"b\\\\c\\nd\"}");
}

TEST(PrometheusSource, LongRangesAreSplitBelowTheServersLimit) {
  FakePrometheus p;
  p.series.push_back({labels("reveal_proc_stat_user_total", "h", "proc.stat:user", "ticks", "cpu"),
                      [](std::int64_t t) -> std::optional<std::string> { return std::to_string(t - kT0); }});
  const std::int64_t last = kT0 + 25000;  // 25001 steps: three requests
  const auto hosts = read_prometheus(query(p, kT0, last));
  ASSERT_EQ(p.range_calls.size(), 3u);
  EXPECT_EQ(p.range_calls[0]["end"], std::to_string(kT0 + 9999) + ".000");
  EXPECT_EQ(p.range_calls[1]["start"], std::to_string(kT0 + 10000) + ".000");
  EXPECT_EQ(p.range_calls[2]["end"], std::to_string(last) + ".000");
  ASSERT_EQ(hosts.size(), 1u);
  ASSERT_EQ(hosts[0].t_unix_ns.size(), 25001u);
  for (std::size_t k = 0; k < 25001; ++k) ASSERT_EQ(hosts[0].values(k, 0), double(k)) << k;
  // Many matching series make the pieces shorter (at most ~1M points per request).
  p.range_calls.clear();
  p.series_count_override = 400;  // -> 2500 steps per request
  read_prometheus(query(p, kT0, kT0 + 9999));
  EXPECT_EQ(p.range_calls.size(), 4u);
}

TEST(PrometheusSource, ErrorsAreOneClearLine) {
  FakePrometheus p;
  // No series matched.
  std::string msg = error_of(query(p, kT0, kT0 + 10));
  EXPECT_NE(msg.find("no series matches {job=\"reveal\",channel!=\"\"}"), std::string::npos) << msg;
  EXPECT_NE(msg.find(p.url()), std::string::npos) << msg;
  p.series.push_back({labels("reveal_x", "h", "t:x", "count", "system"),
                      [](std::int64_t) -> std::optional<std::string> { return std::string("1"); }});
  // Prometheus's own error answer: HTTP 400 with its error type and message.
  p.range_override = [](const httplib::Request&, httplib::Response& res) {
    res.status = 400;
    res.set_content(R"({"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": parse error"})",
                    "application/json");
  };
  msg = error_of(query(p, kT0, kT0 + 10));
  EXPECT_NE(msg.find("HTTP 400"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bad_data: invalid parameter \"query\": parse error"), std::string::npos) << msg;
  // A status other than 200 without a Prometheus body: the first line of the body.
  p.range_override = [](const httplib::Request&, httplib::Response& res) {
    res.status = 502;
    res.set_content("Bad gateway\nmore detail\n", "text/plain");
  };
  msg = error_of(query(p, kT0, kT0 + 10));
  EXPECT_NE(msg.find("HTTP 502 for /api/v1/query_range: Bad gateway"), std::string::npos) << msg;
  // "status":"error" with HTTP 200.
  p.range_override = [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"error","errorType":"execution","error":"query timed out"})", "application/json");
  };
  msg = error_of(query(p, kT0, kT0 + 10));
  EXPECT_NE(msg.find("execution: query timed out"), std::string::npos) << msg;
  // Malformed JSON, and JSON of the wrong shape.
  p.range_override = [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":)", "application/json");
  };
  msg = error_of(query(p, kT0, kT0 + 10));
  EXPECT_NE(msg.find("malformed JSON in the query_range answer at byte"), std::string::npos) << msg;
  p.range_override = [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"success","data":{"resultType":"vector","result":[]}})", "application/json");
  };
  msg = error_of(query(p, kT0, kT0 + 10));
  EXPECT_NE(msg.find("resultType is not \"matrix\""), std::string::npos) << msg;
  p.range_override = [](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"channel":"t:x"},"values":[[1800000000,"abc"]]}]}})",
        "application/json");
  };
  msg = error_of(query(p, kT0, kT0 + 10));
  EXPECT_NE(msg.find("value 'abc' is not a number in series t:x"), std::string::npos) << msg;
  // A bad selector or URL.
  PrometheusQuery q = query(p, kT0, kT0 + 10);
  q.selector = "rate(x[5m])";
  msg = error_of(q);
  EXPECT_NE(msg.find("is not a series selector"), std::string::npos) << msg;
  q = query(p, kT0, kT0 + 10);
  q.url = "127.0.0.1:9090";
  msg = error_of(q);
  EXPECT_NE(msg.find("must start with http://"), std::string::npos) << msg;
}

TEST(PrometheusSource, ConnectionRefused) {
  int port;
  {
    FakePrometheus p;  // a port that was just free, now closed again
    port = std::stoi(p.url().substr(p.url().rfind(':') + 1));
  }
  PrometheusQuery q;
  q.url = "http://127.0.0.1:" + std::to_string(port);
  q.selector = "{job=\"reveal\"}";
  q.start_unix_ns = kT0 * kS;
  q.end_unix_ns = (kT0 + 10) * kS;
  const std::string msg = error_of(q);
  EXPECT_NE(msg.find("Prometheus at " + q.url + ": cannot connect"), std::string::npos) << msg;
}


// --- Broken or hostile servers (issue #18) ----------------------------------------------------

// A loopback TCP server that answers each connection, one at a time, with handler(fd, request
// head): for answers httplib::Server does not give (dripped status lines, endless bodies, wrong
// encodings). Handlers end when a write fails (the client went away) or stopping() is true.
class RawServer {
 public:
  using Handler = std::function<void(RawServer&, int fd, const std::string& head)>;
  explicit RawServer(Handler h) : handler_(std::move(h)) {
    listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_, 8) != 0 ||
        ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("RawServer: cannot listen on 127.0.0.1");
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~RawServer() {
    stop_ = true;
    thread_.join();
    ::close(listen_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  bool stopping() const { return stop_; }
  std::size_t sent() const { return sent_; }  // bytes written to clients in all
  int connections() const { return connections_; }
  // Writes all of `data`; false once the client is gone (or the server stops).
  bool send_all(int fd, std::string_view data) {
    while (!data.empty() && !stop_) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent_ += std::size_t(n);
      data.remove_prefix(std::size_t(n));
    }
    return data.empty();
  }
  // One chunk of a chunked body.
  bool send_chunk(int fd, std::string_view data) {
    return send_all(fd, fmt::format("{:x}\r\n", data.size())) && send_all(fd, data) && send_all(fd, "\r\n");
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{listen_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int fd = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ++connections_;
      std::string head;
      char buf[4096];
      while (head.find("\r\n\r\n") == std::string::npos && !stop_) {
        pollfd c{fd, POLLIN, 0};
        if (::poll(&c, 1, 50) <= 0) continue;
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        head.append(buf, std::size_t(n));
      }
      if (head.find("\r\n\r\n") != std::string::npos) handler_(*this, fd, head);
      ::close(fd);
    }
  }
  Handler handler_;
  int listen_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> sent_{0};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

// A complete HTTP/1.1 answer with a Content-Length.
std::string http_answer(int status, const std::string& body, const std::string& headers = "") {
  return fmt::format("HTTP/1.1 {} X\r\nContent-Type: application/json\r\nConnection: close\r\n{}Content-Length: "
                     "{}\r\n\r\n{}",
                     status, headers, body.size(), body);
}

// /api/v1/series announcing one raw series (what a request line asks for decides).
bool is_series_request(const std::string& head) { return head.rfind("GET /api/v1/series", 0) == 0; }
const std::string kOneSeries =
    R"({"status":"success","data":[{"__name__":"reveal_x","instance":"h","channel":"t:x","unit":"count"}]})";
// The start of a valid query_range answer; points follow.
const std::string kRangeHead =
    R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"reveal_x","instance":"h","channel":"t:x","unit":"count"},"values":[)";

// The largest resident set of this process while it lives, sampled every 2 ms.
class PeakRss {
 public:
  PeakRss() : base_(rss()), peak_(base_), thread_([this] {
    while (!stop_) {
      peak_ = std::max<long>(peak_, rss());
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }) {}
  ~PeakRss() {
    stop_ = true;
    thread_.join();
  }
  double growth_mib() const { return double(std::max<long>(peak_, rss()) - base_) / (1024.0 * 1024.0); }
  static long rss() {
    std::ifstream f("/proc/self/statm");
    long size = 0, resident = 0;
    f >> size >> resident;
    return resident * ::sysconf(_SC_PAGESIZE);
  }

 private:
  long base_;
  std::atomic<long> peak_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

PrometheusQuery raw_query(const std::string& url, double timeout_s = 10) {
  PrometheusQuery q;
  q.url = url;
  q.selector = "{job=\"reveal\"}";
  q.start_unix_ns = kT0 * kS;
  q.end_unix_ns = (kT0 + 10) * kS;  // 11 steps
  q.step_ns = kS;
  q.timeout_s = timeout_s;
  return q;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(PrometheusSource, AnswerBounds) {
  // One series over 11 steps: 64 KiB + 16 KiB + 11 × 128 bytes.
  EXPECT_EQ(fleet::max_range_answer_bytes(1, 11), 64u * 1024 + 16 * 1024 + 11 * 128);
  EXPECT_EQ(fleet::max_range_answer_bytes(1'000'000, 1'000'000), fleet::kMaxAnswerBytes);
  EXPECT_EQ(fleet::max_series_answer_bytes(2), 64u * 1024 + 3 * 16 * 1024);
  EXPECT_EQ(fleet::max_series_answer_bytes(kMaxPrometheusPoints), fleet::kMaxAnswerBytes);
  // A legitimate answer (the fake's, compact JSON) is far below its bound.
  FakePrometheus p;
  std::size_t biggest = 0;
  p.series.push_back({labels("reveal_proc_stat_user_total", "h", "proc.stat:user", "ticks", "cpu"),
                      [](std::int64_t) -> std::optional<std::string> { return std::string("1"); }});
  p.range_override = [&](const httplib::Request& req, httplib::Response& res) {
    json values = json::array();
    for (int k = 0; k < 11; ++k) values.push_back({double(kT0 + k) + 0.123, "-1.2345678901234567e+308"});
    res.set_content(json{{"status", "success"},
                         {"data", {{"resultType", "matrix"}, {"result", {{{"metric", p.series[0].metric}, {"values", values}}}}}}}
                        .dump(),
                    "application/json");
    biggest = std::max(biggest, res.body.size());
  };
  read_prometheus(query(p, kT0, kT0 + 10));
  EXPECT_LT(biggest, fleet::max_range_answer_bytes(1, 11) / 4);
}

// One series announced: the answers are bounded for it and the margin for new ones, 1 + 16.
static_assert(fleet::kNewSeriesSlack == 16);

TEST(PrometheusSource, EndlessAnswerFailsFastInLittleMemory) {
  // query_range answers with a valid start and then points without end (2 GB, chunked).
  RawServer srv([](RawServer& s, int fd, const std::string& head) {
    if (is_series_request(head)) return void(s.send_all(fd, http_answer(200, kOneSeries)));
    if (!s.send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n") ||
        !s.send_chunk(fd, kRangeHead))
      return;
    std::string chunk;
    while (chunk.size() < (1 << 20)) chunk += "[1800000000,\"1\"],";
    for (std::size_t sent = 0; sent < (std::size_t(2) << 30); sent += chunk.size())
      if (!s.send_chunk(fd, chunk)) return;
  });
  PeakRss rss;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string msg = error_of(raw_query(srv.url()));
  EXPECT_LT(seconds_since(t0), 3.0);
  EXPECT_NE(msg.find("Prometheus at " + srv.url() + ": the answer to /api/v1/query_range is over " +
                     std::to_string(fleet::max_range_answer_bytes(fleet::series_allowed(1, SIZE_MAX), 11)) + " bytes, more than 17 series × 11 steps can take"),
            std::string::npos)
      << msg;
  EXPECT_LT(srv.sent(), std::size_t(64) << 20);  // the client stopped reading early
  EXPECT_LT(rss.growth_mib(), 100.0);
}

TEST(PrometheusSource, AnnouncedHugeAnswerIsNotRead) {
  // A Content-Length of 2 GB (the body never comes): refused on the headers alone.
  RawServer srv([](RawServer& s, int fd, const std::string& head) {
    if (is_series_request(head)) return void(s.send_all(fd, http_answer(200, kOneSeries)));
    s.send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2000000000\r\n\r\n");
    s.send_all(fd, kRangeHead);
    for (int k = 0; k < 300 && s.send_all(fd, "[1800000000,\"1\"],"); ++k)  // 3 s, then closed
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  });
  const auto t0 = std::chrono::steady_clock::now();
  const std::string msg = error_of(raw_query(srv.url()));
  EXPECT_LT(seconds_since(t0), 1.0);
  EXPECT_NE(msg.find(": the answer to /api/v1/query_range announces 2000000000 bytes, more than 17 series × 11 steps "
                     "can take"),
            std::string::npos)
      << msg;
}

// One gzip stream of `head` and then `n` bytes of white space (a bomb when n is large), handed
// to `emit` a compressed piece at a time until it returns false.
void gzip_stream(const std::string& head, std::size_t n, const std::function<bool(std::string_view)>& emit) {
  z_stream z{};
  ASSERT_EQ(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::string in = head, out(1 << 16, '\0');
  for (std::size_t left = n;;) {
    const std::size_t take = std::min<std::size_t>(left, 1 << 20);
    in.resize(in.size() + take, ' ');
    left -= take;
    z.next_in = reinterpret_cast<Bytef*>(in.data());
    z.avail_in = uInt(in.size());
    const int flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
    do {
      z.next_out = reinterpret_cast<Bytef*>(out.data());
      z.avail_out = uInt(out.size());
      deflate(&z, flush);
      const std::size_t have = out.size() - z.avail_out;
      if (have && !emit(std::string_view(out.data(), have))) {
        deflateEnd(&z);
        return;
      }
    } while (z.avail_out == 0);
    in.clear();
    if (left == 0) break;
  }
  deflateEnd(&z);
}

TEST(PrometheusSource, GzipAnswersAreReadAndABombIsBounded) {
  // The client decompresses a gzip answer (Content-Encoding: gzip) whether it asked or not.
  std::atomic<bool> bomb = false;
  RawServer srv([&](RawServer& s, int fd, const std::string& head) {
    if (is_series_request(head)) return void(s.send_all(fd, http_answer(200, kOneSeries)));
    if (!s.send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n"))
      return;
    if (bomb) {
      // kRangeHead, then 1 GiB of JSON white space: about 1 MB compressed.
      gzip_stream(kRangeHead, std::size_t(1) << 30, [&](std::string_view z) { return s.send_chunk(fd, z); });
      return;
    }
    gzip_stream(kRangeHead + R"([1800000003,"7"]]}]}})", 0, [&](std::string_view z) { return s.send_chunk(fd, z); });
    s.send_all(fd, "0\r\n\r\n");
  });
  const auto hosts = read_prometheus(raw_query(srv.url()));
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].values(0, 0), 7.0);

  bomb = true;
  PeakRss rss;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string msg = error_of(raw_query(srv.url()));
  EXPECT_LT(seconds_since(t0), 3.0);
  EXPECT_NE(msg.find(": the answer to /api/v1/query_range is over " + std::to_string(fleet::max_range_answer_bytes(fleet::series_allowed(1, SIZE_MAX), 11)) +
                     " bytes"),
            std::string::npos)
      << msg;
  EXPECT_LT(rss.growth_mib(), 100.0);
}

TEST(PrometheusSource, SeriesNewSinceTheListingAreReadWithinAMargin) {
  FakePrometheus p;
  p.series.push_back({labels("reveal_x", "h", "t:x", "count", "system"),
                      [](std::int64_t) -> std::optional<std::string> { return std::string("1"); }});
  // /api/v1/series says one series; query_range brings n: a new pod's agent began between the two
  // requests (`--end now`). The margin is a quarter more plus kNewSeriesSlack.
  std::size_t n = 0;
  p.range_override = [&](const httplib::Request&, httplib::Response& res) {
    json result = json::array();
    for (std::size_t i = 0; i < n; ++i)
      result.push_back({{"metric", labels("reveal_x", "h" + std::to_string(i), "t:x", "count", "system")},
                        {"values", {{kT0, "1"}}}});
    res.set_content(json{{"status", "success"}, {"data", {{"resultType", "matrix"}, {"result", result}}}}.dump(),
                    "application/json");
  };
  EXPECT_EQ(fleet::series_allowed(1, SIZE_MAX), 1 + fleet::kNewSeriesSlack);
  EXPECT_EQ(fleet::series_allowed(400, SIZE_MAX), 500 + fleet::kNewSeriesSlack);
  EXPECT_EQ(fleet::series_allowed(400, 450), 450u);  // never past the point budget
  EXPECT_EQ(fleet::series_allowed(SIZE_MAX - 1, SIZE_MAX), SIZE_MAX);
  n = 3;
  EXPECT_EQ(read_prometheus(query(p, kT0, kT0 + 10)).size(), 3u);
  n = 1 + fleet::kNewSeriesSlack;
  EXPECT_EQ(read_prometheus(query(p, kT0, kT0 + 10)).size(), n);
  // One more is a server that lies about its series.
  n = 2 + fleet::kNewSeriesSlack;
  const std::string msg = error_of(query(p, kT0, kT0 + 10));
  EXPECT_NE(msg.find("Prometheus at " + p.url() + ": the query_range answer holds more than " +
                     std::to_string(1 + fleet::kNewSeriesSlack) +
                     " series (1 announced by /api/v1/series, and room for series new since)"),
            std::string::npos)
      << msg;
}

TEST(PrometheusSource, AnswersHoldingMoreThanAllowedFail) {
  FakePrometheus p;
  p.series.push_back({labels("reveal_x", "h", "t:x", "count", "system"),
                      [](std::int64_t) -> std::optional<std::string> { return std::string("1"); }});
  // More points in a series than steps requested.
  p.range_override = [&](const httplib::Request&, httplib::Response& res) {
    json values = json::array();
    for (int k = 0; k < 12; ++k) values.push_back({kT0, "1"});
    res.set_content(json{{"status", "success"},
                         {"data", {{"resultType", "matrix"}, {"result", {{{"metric", p.series[0].metric}, {"values", values}}}}}}}
                        .dump(),
                    "application/json");
  };
  std::string msg = error_of(query(p, kT0, kT0 + 10));
  EXPECT_NE(msg.find(": a series of the query_range answer holds more than the 11 points requested"), std::string::npos)
      << msg;
  // Answers that each hold one series, but different ones: more than announced together.
  const fleet::Grid g = fleet::make_grid(kT0 * kS, (kT0 + 1) * kS, kS);
  fleet::MatrixAssembler m(g, 1, 2);  // announced 1, a point budget of 2 series
  EXPECT_EQ(m.max_series(), 2u);
  const auto answer = [](const char* channel) {
    return json{{"status", "success"},
                {"data",
                 {{"resultType", "matrix"},
                  {"result", {{{"metric", labels("reveal_x", "h", channel, "count", "system")}, {"values", {{kT0, "1"}}}}}}}}}
        .dump();
  };
  m.add(answer("t:x"), "here", 1);
  m.add(answer("t:x"), "here", 1);
  m.add(answer("t:y"), "here", 1);
  try {
    m.add(answer("t:z"), "here", 1);
    ADD_FAILURE() << "no error";
  } catch (const PrometheusError& e) {
    EXPECT_STREQ(e.what(),
                 "here: the query_range answers hold more than 2 series (1 announced by /api/v1/series, and room for "
                 "series new since)");
  }
  EXPECT_EQ(m.series(), 2u);
  EXPECT_EQ(fleet::count_series(R"({"status":"success","data":[{},{"a":[1,{}]},{}]})", "here", 3), 3u);
  EXPECT_EQ(fleet::count_series(R"({"data":[{},{},{},{}],"status":"success"})", "here", 2), 3u);  // stops at 2 + 1
  EXPECT_THROW(fleet::count_series(R"({"status":"success","data":{}})", "here", 3), PrometheusError);
  EXPECT_THROW(fleet::count_series(R"({"status":"success","data":[)", "here", 3), PrometheusError);
}

TEST(PrometheusSource, SeriesAnswerIsBounded) {
  // 80 million steps of 1 ms: at most 2 series fit the point cap.
  FakePrometheus p;
  p.series_count_override = 3;
  p.series.push_back({labels("reveal_x", "h", "t:x", "count", "system"),
                      [](std::int64_t) -> std::optional<std::string> { return std::string("1"); }});
  PrometheusQuery q = query(p, kT0, kT0 + 80'000);
  q.step_ns = 1'000'000;
  std::string msg = error_of(q);
  EXPECT_NE(msg.find(": more than 2 series × 80000001 steps is more than 200000000 points"), std::string::npos) << msg;
  EXPECT_TRUE(p.range_calls.empty());
  // A series answer larger than 2 + 1 series can take.
  RawServer srv([](RawServer& s, int fd, const std::string&) {
    std::string body = R"({"status":"success","data":[{"channel":")" + std::string(200'000, 'x') + R"("}]})";
    s.send_all(fd, http_answer(200, body));
  });
  q.url = srv.url();
  msg = error_of(q);
  EXPECT_NE(msg.find(": the answer to /api/v1/series announces"), std::string::npos) << msg;
}

TEST(PrometheusSource, OneDeadlinePerRequest) {
  // The answer starts at once, then one byte every 100 ms (6 s in all): the 1 s deadline holds.
  std::atomic<bool> drip_head = false;
  RawServer srv([&](RawServer& s, int fd, const std::string&) {
    const std::string answer = http_answer(200, kOneSeries);
    std::size_t i = 0;
    if (!drip_head) {
      i = answer.find("\r\n\r\n") + 4;
      if (!s.send_all(fd, answer.substr(0, i))) return;
    }
    for (int k = 0; k < 60 && i < answer.size() && !s.stopping(); ++k, ++i) {
      if (!s.send_all(fd, answer.substr(i, 1))) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  for (bool head : {false, true}) {
    drip_head = head;  // then the status line and headers dripped
    const auto t0 = std::chrono::steady_clock::now();
    const std::string msg = error_of(raw_query(srv.url(), 1.0));
    const double took = seconds_since(t0);
    EXPECT_GE(took, 0.95) << head;
    EXPECT_LT(took, 1.5) << head;
    EXPECT_NE(msg.find("Prometheus at " + srv.url() + ": no complete answer to /api/v1/series within 1 s"),
              std::string::npos)
        << msg;
  }
}

TEST(PrometheusSource, RedirectTarget) {
  using fleet::redirect_target;
  const std::string o = "http://prom:9090";
  EXPECT_EQ(redirect_target(o, "/api/v1/series", "/prometheus/api/v1/series?a=b"), "/prometheus/api/v1/series?a=b");
  EXPECT_EQ(redirect_target(o, "/p/api/v1/series", "series2?x"), "/p/api/v1/series2?x");
  EXPECT_EQ(redirect_target(o, "/p/api", "?x=1"), "/p/api?x=1");
  EXPECT_EQ(redirect_target(o, "/a", "http://PROM:9090/b#frag"), "/b");
  EXPECT_EQ(redirect_target(o, "/a", "//prom:9090"), "/");
  EXPECT_EQ(redirect_target("http://prom", "/a", "http://prom:80/b?q"), "/b?q");
  EXPECT_EQ(redirect_target("https://prom", "/a", "https://prom:443/b"), "/b");
  const auto refused = [&](const std::string& origin, const std::string& location, const std::string& why) {
    try {
      redirect_target(origin, "/a", location);
      ADD_FAILURE() << location << " followed";
    } catch (const PrometheusError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused(o, "http://other:9090/b", "it leaves http://prom:9090");
  refused(o, "http://prom:9091/b", "it leaves");
  refused(o, "//other/b", "it leaves");
  refused(o, "https://prom:9090/b", "it leaves");  // another scheme is another origin
  refused(o, "ftp://prom:9090/b", "it leaves");
  refused("https://prom", "http://prom/b", "it drops TLS (https to http)");
  refused("https://prom:8443", "http://prom:8443/b", "it drops TLS");
  refused(o, "", "without a Location");
  refused(o, "/a b", "not a usable URL");
  refused(o, "http:no-slashes", "not a usable URL");
  refused(o, "http://prom:99x/b", "not a usable URL");
}

TEST(PrometheusSource, RedirectsStayOnTheOrigin) {
  FakePrometheus p;
  p.series.push_back({labels("reveal_x", "h", "t:x", "count", "system"),
                      [](std::int64_t) -> std::optional<std::string> { return std::string("1"); }});
  // Within the server: followed.
  PrometheusQuery q = query(p, kT0, kT0 + 10);
  q.url = p.url() + "/moved";
  ASSERT_EQ(read_prometheus(q).size(), 1u);
  EXPECT_EQ(p.range_calls.size(), 1u);
  // To another port: refused, and nothing asked there.
  p.range_calls.clear();
  p.last_series_match.clear();
  RawServer other([&](RawServer& s, int fd, const std::string& head) {
    const std::string target = head.substr(4, head.find(' ', 4) - 4);
    s.send_all(fd, http_answer(302, "", "Location: " + p.url() + target + "\r\n"));
  });
  std::string msg = error_of(raw_query(other.url()));
  EXPECT_NE(msg.find("Prometheus at " + other.url() + ": refusing the redirect to '" + p.url() + "/api/v1/series?"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("it leaves " + other.url()), std::string::npos) << msg;
  EXPECT_TRUE(p.last_series_match.empty());
  // A loop within the server: at most 5 redirects.
  RawServer loop([&](RawServer& s, int fd, const std::string&) {
    s.send_all(fd, http_answer(301, "", "Location: /again\r\n"));
  });
  msg = error_of(raw_query(loop.url()));
  EXPECT_NE(msg.find(": more than 5 redirects for /api/v1/series"), std::string::npos) << msg;
  EXPECT_EQ(loop.connections(), 6);
}

TEST(PrometheusSource, RedirectFromHttpsToHttpIsRefused) {
  // An HTTPS server (tests/fixtures/tls, trusted through SSL_CERT_FILE) that redirects to the
  // plain-HTTP fake Prometheus.
  FakePrometheus p;
  p.series.push_back({labels("reveal_x", "h", "t:x", "count", "system"),
                      [](std::int64_t) -> std::optional<std::string> { return std::string("1"); }});
  const std::string tls = std::string(REVEAL_FIXTURES_DIR) + "/tls/";
  httplib::SSLServer srv((tls + "localhost.crt").c_str(), (tls + "localhost.key").c_str());
  ASSERT_TRUE(srv.is_valid());
  srv.Get(".*", [&](const httplib::Request& req, httplib::Response& res) { res.set_redirect(p.url() + req.target); });
  const int port = srv.bind_to_any_port("127.0.0.1");
  std::thread t([&] { srv.listen_after_bind(); });
  for (int i = 0; i < 500 && !srv.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ::setenv("SSL_CERT_FILE", (tls + "localhost.crt").c_str(), 1);
  const std::string url = "https://127.0.0.1:" + std::to_string(port);
  const std::string msg = error_of(raw_query(url));
  ::unsetenv("SSL_CERT_FILE");
  srv.stop();
  t.join();
  EXPECT_NE(msg.find("Prometheus at " + url + ": refusing the redirect to '" + p.url() +
                     "/api/v1/series?"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("': it drops TLS (https to http)"), std::string::npos) << msg;
  EXPECT_TRUE(p.last_series_match.empty());
}

// --- read_prometheus_configs: the agents' reveal_host_config_info (issue #22) ---------------

// A server whose /api/v1/query answers `answer` (and records the query and time asked).
struct QueryServer {
  explicit QueryServer(std::string answer, int status = 200) {
    srv.Get("/api/v1/query", [this, answer, status](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu);
      query = req.get_param_value("query");
      time = req.get_param_value("time");
      res.status = status;
      res.set_content(answer, "application/json");
    });
    port = srv.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { srv.listen_after_bind(); });
    for (int i = 0; i < 500 && !srv.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ~QueryServer() {
    srv.stop();
    thread.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  httplib::Server srv;
  int port = 0;
  std::thread thread;
  std::mutex mu;
  std::string query, time;
};

json config_series(const std::string& instance, const std::string& key, const std::string& value, double sample_t) {
  json metric = {{"job", "reveal"}, {"key", key}, {"value", value}};
  if (!instance.empty()) metric["instance"] = instance;
  return {{"metric", metric}, {"value", {1800000000.0, fmt::format("{:.3f}", sample_t)}}};
}

std::string vector_answer(const json& result) {
  return json{{"status", "success"}, {"data", {{"resultType", "vector"}, {"result", result}}}}.dump();
}

std::string config_error(const std::string& url, const std::string& selector) {
  return one_line_error([&] { read_prometheus_configs(url, selector, kT0 * kS, 5); });
}

TEST(PrometheusConfigs, OneHostPerInstanceTheNewerValueWins) {
  json result = json::array();
  result.push_back(config_series("b:9100", "net.eth0.mtu", "9000", 1799999990));
  result.push_back(config_series("a:9100", "net.eth0.mtu", "1500", 1799999990));
  // a's governor changed within the lookback (backfilled data has no staleness markers):
  result.push_back(config_series("a:9100", "cpu.governor", "performance", 1799999900));
  result.push_back(config_series("a:9100", "cpu.governor", "powersave", 1799999950));
  result.push_back(config_series("", "kernel.osrelease", "6.1.0", 1799999990));  // no instance label
  json keyless = config_series("a:9100", "x", "y", 1799999990);
  keyless["metric"].erase("key");
  result.push_back(keyless);  // no key label: not a configuration series, ignored
  QueryServer srv(vector_answer(result));
  const auto hosts = read_prometheus_configs(srv.url(), "{job=\"reveal\"}", kT0 * kS + 250'000'000, 5);
  {
    std::lock_guard lock(srv.mu);
    EXPECT_EQ(srv.query, "timestamp({job=\"reveal\",__name__=\"reveal_host_config_info\"})");
    EXPECT_EQ(srv.time, "1800000000.250");
  }
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0].host, "a:9100");
  EXPECT_EQ(hosts[0].config, (ConfigSnapshot{{"cpu.governor", "powersave"}, {"net.eth0.mtu", "1500"}}));
  EXPECT_EQ(hosts[1].host, "b:9100");
  EXPECT_EQ(hosts[1].config, (ConfigSnapshot{{"net.eth0.mtu", "9000"}}));
  EXPECT_EQ(hosts[2].host, "(no instance)");
  EXPECT_EQ(hosts[2].config, (ConfigSnapshot{{"kernel.osrelease", "6.1.0"}}));
}

TEST(PrometheusConfigs, ErrorsAreOneClearLine) {
  {
    QueryServer srv(vector_answer(json::array()));
    const std::string msg = config_error(srv.url(), "");
    EXPECT_NE(msg.find("no agent exposed reveal_host_config_info in the 5 minutes before"), std::string::npos) << msg;
    std::lock_guard lock(srv.mu);
    EXPECT_EQ(srv.query, "timestamp({__name__=\"reveal_host_config_info\"})");
  }
  {
    QueryServer srv(R"J({"status":"error","errorType":"bad_data","error":"parse error"})J", 400);
    const std::string msg = config_error(srv.url(), "{job=\"reveal\"}");
    EXPECT_NE(msg.find("Prometheus at " + srv.url() + ": HTTP 400"), std::string::npos) << msg;
    EXPECT_NE(msg.find("parse error"), std::string::npos) << msg;
  }
  {
    QueryServer srv("{\"status\":\"success\",\"data\":{\"result\":[{\"metric\":");
    EXPECT_NE(config_error(srv.url(), "").find("malformed JSON"), std::string::npos);
  }
  {
    QueryServer srv(R"J({"status":"success","data":{"resultType":"vector","result":{}}})J");
    EXPECT_NE(config_error(srv.url(), "").find("not a success with a result list"), std::string::npos);
  }
  QueryServer srv(vector_answer(json::array()));
  EXPECT_NE(config_error(srv.url(), "up{job=\"reveal\"}").find("names a metric"), std::string::npos);
  EXPECT_NE(config_error(srv.url(), "{job=\"reveal\"}[5m]").find("is not a series selector"), std::string::npos);
  EXPECT_NE(config_error("ftp://127.0.0.1:1", "").find("Prometheus at ftp://127.0.0.1:1: "), std::string::npos);
}

}  // namespace
}  // namespace reveal
