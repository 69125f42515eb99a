// Fleet reader (include/reveal/prometheus_source.h) against an in-process fake Prometheus that
// serves /api/v1/series and /api/v1/query_range from synthetic series.
#include "fleet/prometheus_source.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <mutex>
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
  std::string last_series_match;

  FakePrometheus() {
    srv_.Get("/api/v1/series", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      last_series_match = req.get_param_value("match[]");
      json data = json::array();
      const std::size_t n = series_count_override ? series_count_override : series.size();
      for (std::size_t i = 0; i < n; ++i) data.push_back(i < series.size() ? series[i].metric : json{{"i", i}});
      res.set_content(json{{"status", "success"}, {"data", data}}.dump(), "application/json");
    });
    srv_.Get("/api/v1/query_range", [this](const httplib::Request& req, httplib::Response& res) {
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
      for (const auto& s : series) {
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

std::string error_of(const PrometheusQuery& q) {
  try {
    read_prometheus(q);
  } catch (const PrometheusError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
    return msg;
  }
  ADD_FAILURE() << "no error";
  return {};
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

}  // namespace
}  // namespace reveal
