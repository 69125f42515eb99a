#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "reveal/ingest.h"

namespace reveal {
namespace {

const char* kScrape1 = R"(# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu="0",mode="idle"} 100.5
node_cpu_seconds_total{mode="user",cpu="0"} 20
# TYPE node_memory_MemFree_bytes gauge
node_memory_MemFree_bytes 1.5e9
# a comment
http_requests_total{path="/a b"} 7
# TYPE rpc_duration_seconds histogram
rpc_duration_seconds_bucket{le="+Inf"} 3
rpc_duration_seconds_sum 1.5
up NaN
)";
const char* kScrape2 = R"(# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu="0",mode="idle"} 101.5
node_memory_MemFree_bytes +Inf
new_metric{x="a\"b\\c\n"} 1
)";

std::size_t col(const Recording& r, const std::string& name) {
  for (std::size_t c = 0; c < r.channels.size(); ++c)
    if (r.channels[c].name == name) return c;
  ADD_FAILURE() << "no channel " << name;
  return 0;
}

std::string error_of(std::vector<std::string> texts) {
  std::vector<ImportInput> in;
  for (std::size_t i = 0; i < texts.size(); ++i) in.push_back({"s" + std::to_string(i + 1) + ".prom", texts[i]});
  try {
    import_prometheus(in);
  } catch (const ImportError& e) {
    return e.what();
  }
  return "";
}

TEST(PrometheusImport, OneRowPerScrapeOneChannelPerSeries) {
  const ImportInput in[] = {{"a.prom", kScrape1}, {"b.prom", kScrape2}};
  ImportOptions opt;
  opt.start_unix_ns = 1'000'000'000'000;
  opt.interval_s = 15;
  const Recording r = import_prometheus(in, opt);
  ASSERT_EQ(r.t_unix_ns.size(), 2u);
  EXPECT_EQ(r.t_unix_ns[1], 1'000'000'000'000 + 15'000'000'000LL);
  const std::size_t idle = col(r, "prom:node_cpu_seconds_total.cpu=0+mode=idle");
  EXPECT_EQ(r.channels[idle].kind, Kind::counter);
  EXPECT_EQ(r.channels[idle].unit, "s");
  EXPECT_EQ(r.channels[idle].subsystem, Subsystem::cpu);
  EXPECT_EQ(r.channels[idle].help, "Seconds the CPUs spent in each mode.");
  EXPECT_EQ(r.values(0, idle), 100.5);
  EXPECT_EQ(r.values(1, idle), 101.5);
  const std::size_t user = col(r, "prom:node_cpu_seconds_total.cpu=0+mode=user");
  EXPECT_TRUE(std::isnan(r.values(1, user)));  // absent from the second scrape: a gap
  const std::size_t mem = col(r, "prom:node_memory_MemFree_bytes");
  EXPECT_EQ(r.channels[mem].kind, Kind::gauge);
  EXPECT_EQ(r.channels[mem].unit, "bytes");
  EXPECT_EQ(r.channels[mem].subsystem, Subsystem::memory);
  EXPECT_TRUE(std::isnan(r.values(1, mem)));  // +Inf
  EXPECT_EQ(r.channels[col(r, "prom:http_requests_total.path=_a_b")].kind, Kind::counter);
  EXPECT_EQ(r.channels[col(r, "prom:rpc_duration_seconds_bucket.le=_Inf")].kind, Kind::counter);
  EXPECT_EQ(r.channels[col(r, "prom:rpc_duration_seconds_sum")].kind, Kind::counter);
  EXPECT_TRUE(std::isnan(r.values(0, col(r, "prom:up"))));
  const std::size_t fresh = col(r, "prom:new_metric.x=a_b_c_");
  EXPECT_TRUE(std::isnan(r.values(0, fresh)));
  EXPECT_EQ(r.values(1, fresh), 1);
  EXPECT_EQ(r.meta.hostname, "a");
  EXPECT_DOUBLE_EQ(r.meta.interval_s, 15);
}

TEST(PrometheusImport, SampleTimestampsGiveTheScrapeTime) {
  const ImportInput in[] = {{"a", "m 1 1700000000000\nn 2 1700000000500\n"}, {"b", "m 2 1700000001000\n"}};
  const Recording r = import_prometheus(in);
  EXPECT_EQ(r.t_unix_ns[0], 1'700'000'000'500'000'000);
  EXPECT_EQ(r.t_unix_ns[1], 1'700'000'001'000'000'000);
}

TEST(PrometheusImport, MalformedInputNamesFileLineAndColumn) {
  EXPECT_EQ(error_of({"m{a=\"1\"} x1\n"}), "s1.prom:1:10: 'x1' is not a sample value");
  EXPECT_EQ(error_of({"\n9m 1\n"}), "s1.prom:2:1: expected a metric name");
  EXPECT_EQ(error_of({"m{a=1} 1\n"}), "s1.prom:1:5: expected '\"' to open the value of label 'a'");
  EXPECT_EQ(error_of({"m{a=\"1} 1\n"}), "s1.prom:1:3: unterminated value of label 'a'");
  EXPECT_EQ(error_of({"m{a=\"1\" b=\"2\"} 1\n"}), "s1.prom:1:9: expected ',' or '}' after a label");
  EXPECT_EQ(error_of({"m{a=\"\\t\"} 1\n"}), "s1.prom:1:6: unknown escape \\t");
  EXPECT_EQ(error_of({"m{a=\"1\",a=\"2\"} 1\n"}), "s1.prom:1:9: label 'a' given twice");
  EXPECT_EQ(error_of({"m\n"}), "s1.prom:1:2: missing value");
  EXPECT_EQ(error_of({"m 1 soon\n"}), "s1.prom:1:5: 'soon' is not a timestamp in ms");
  EXPECT_EQ(error_of({"m 1 2 3\n"}), "s1.prom:1:7: unexpected text after the timestamp");
  EXPECT_EQ(error_of({"# TYPE m countr\n"}),
            "s1.prom:1:10: 'countr' is not a metric type (counter, gauge, histogram, summary, untyped)");
  EXPECT_EQ(error_of({"m 1\nm 2\n"}), "s1.prom:2:1: series 'm{}' appears twice in this scrape");
  EXPECT_EQ(error_of({"m{a=\"x.y\"} 1\nm{a=\"x_y\"} 2\n"}),
            "s1.prom:2:1: series 'm{a=\"x_y\",}' and 'm{a=\"x.y\",}' both become channel 'prom:m.a=x_y'");
  EXPECT_EQ(error_of({"m 1 2000\n", "m 1 1000\n"}),
            "s2.prom:1:1: this scrape's time is not after the previous scrape's (files must be in time order)");
  EXPECT_EQ(error_of({"# only comments\n"}), "s1.prom: no samples in any scrape");
}

}  // namespace
}  // namespace reveal
