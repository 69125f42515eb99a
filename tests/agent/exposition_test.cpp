// /metrics and /incidents renderers (include/reveal/agent.h).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reveal/agent.h"
#include "reveal/report.h"
#include "reveal/store.h"

namespace reveal {
namespace {

constexpr double kNaN = __builtin_nan("");

ChannelInfo ch(std::string name, Kind k, Subsystem s, std::string unit, std::string help = "") {
  ChannelInfo c;
  c.name = std::move(name);
  c.kind = k;
  c.subsystem = s;
  c.unit = std::move(unit);
  c.help = std::move(help);
  return c;
}

Incident sample_incident() {
  Incident inc;
  inc.first_window = 10;
  inc.last_window = 20;
  inc.start_s = 10;
  inc.end_s = 22;
  inc.start_unix_ns = 1'800'000'010'000'000'000;
  inc.end_unix_ns = 1'800'000'022'000'000'000;
  inc.peak_score = 3.5;
  inc.subsystem = Subsystem::network;
  inc.confidence = 0.8;
  inc.subsystem_shares = {{Subsystem::network, 0.8}, {Subsystem::cpu, 0.2}};
  inc.focus = "eth0";
  inc.focus_share = 0.9;
  inc.top = {{"proc.net.dev:rx_bytes.eth0", "bytes/s", Subsystem::network, 1e9, 1e6, 40},
             {"proc.stat:softirq", "ticks/s", Subsystem::cpu, 50, 2, 8}};
  inc.action = "check eth0";
  return inc;
}

AgentSnapshot snapshot() {
  AgentSnapshot s;
  s.hostname = "node7";
  s.mode = "replay";
  s.channels = {ch("proc.stat:user", Kind::counter, Subsystem::cpu, "ticks", "CPU time in user mode"),
                ch("proc.meminfo:MemAvailable", Kind::gauge, Subsystem::memory, "kB"),
                ch("proc.stat:user.cpu0", Kind::counter, Subsystem::cpu, "ticks", "CPU time in user mode"),
                ch("proc.net.dev:rx_bytes.eth0", Kind::counter, Subsystem::network, "bytes"),
                ch("perf:context-switches", Kind::counter, Subsystem::cpu, "count"),
                ch("sys.net:operstate.eth0", Kind::state, Subsystem::network, "state")};
  s.exported = {1, 1, 1, 1, 0, 1};
  s.values = {1234, kNaN, 600, 5e9, 7, 1};
  s.last_sample_unix_ns = 1'800'000'000'500'000'000;
  s.samples_total = 100;
  s.samples_skipped_total = 2;
  s.windows_scored_total = 97;
  s.symptom_led_windows_total = 4;
  s.model_ready = true;
  s.reference_windows = 90;
  s.model_fit_unix_s = 1.8e9;
  s.anomaly_score = 0.25;
  s.subsystem_score.fill(0.1);
  s.incidents_total[std::size_t(Subsystem::network)] = 3;
  s.absence_sources = {"proc.stat", "nvml"};
  s.absence_incidents_total = {0, 2};
  s.probes = {{"proc.stat", true, "", true, 0.0001, 3, 0, 0}, {"nvml", false, "no driver", false, 0, 0, 0, 5}};
  s.store_bytes = 4096;
  s.store_max_bytes = 1 << 20;
  s.process_cpu_seconds = 1.5;
  s.process_resident_bytes = 12e6;
  s.process_start_unix_s = 1.79e9;
  return s;
}

// The text as families: name -> (type, sample lines). Fails the test on a sample outside the
// family announced last, a repeated family, or a sample line of the wrong shape.
struct Family {
  std::string type, help;
  std::vector<std::string> samples;
};
std::map<std::string, Family> parse(const std::string& text) {
  std::map<std::string, Family> fams;
  std::istringstream in(text);
  std::string line, current;
  std::set<std::string> closed;
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) {
      const std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_FALSE(fams.count(name)) << "family twice: " << name;
      if (!current.empty()) closed.insert(current);
      current = name;
      fams[name].help = line.substr(8 + name.size());
    } else if (line.rfind("# TYPE ", 0) == 0) {
      const std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_EQ(name, current) << "TYPE without its HELP: " << line;
      fams[name].type = line.substr(8 + name.size());
    } else {
      const std::string name = line.substr(0, line.find_first_of("{ "));
      EXPECT_EQ(name, current) << "sample outside its family block: " << line;
      EXPECT_FALSE(closed.count(name)) << "family split: " << line;
      fams[name].samples.push_back(line);
    }
  }
  return fams;
}

TEST(Exposition, MetricNames) {
  EXPECT_EQ(prometheus_metric_name(ch("proc.stat:user.cpu3", Kind::counter, Subsystem::cpu, "ticks")),
            "reveal_proc_stat_user_total");
  EXPECT_EQ(prometheus_metric_name(ch("proc.meminfo:MemAvailable", Kind::gauge, Subsystem::memory, "kB")),
            "reveal_proc_meminfo_MemAvailable");
  EXPECT_EQ(prometheus_metric_name(ch("perf:context-switches", Kind::counter, Subsystem::cpu, "count")),
            "reveal_perf_context_switches_total");
  EXPECT_EQ(prometheus_metric_name(ch("sys.net:operstate.eth0", Kind::state, Subsystem::network, "")),
            "reveal_sys_net_operstate");
  // Runs of replaced characters collapse; the index (label) never enters the name.
  EXPECT_EQ(prometheus_metric_name(ch("x..y:a--/b.sda-1", Kind::gauge, Subsystem::storage, "")), "reveal_x_y_a_b");
  EXPECT_EQ(prometheus_metric_name(ch("cgroup:memory_current./system.slice", Kind::gauge, Subsystem::memory, "")),
            "reveal_cgroup_memory_current");
  // A counter already named *_total gets no second suffix; trailing punctuation leaves no '_'.
  EXPECT_EQ(prometheus_metric_name(ch("prom:node_cpu_seconds_total.cpu=0", Kind::counter, Subsystem::cpu, "")),
            "reveal_prom_node_cpu_seconds_total");
  EXPECT_EQ(prometheus_metric_name(ch("t:drops-", Kind::counter, Subsystem::network, "")), "reveal_t_drops_total");
}

// A cgroup channel of a pod carries its labels after entity, values escaped as every label's.
TEST(Exposition, PodLabelsFollowTheEntityEscaped) {
  AgentSnapshot s = snapshot();
  s.channels.push_back(ch("cgroup:cpu_pressure_some_avg10.kubepods/pod1", Kind::gauge, Subsystem::cpu, "%"));
  s.exported.push_back(1);
  s.values.push_back(4);
  s.channel_labels.resize(s.channels.size());
  s.channel_labels.back() = {{"pod_uid", "0f6b1c2e-8c4a-4b2a-9a55-1d2f3e4a5b6c"}, {"pod", "a\"b\\c"}};
  const std::string text = render_metrics(s);
  EXPECT_NE(text.find("reveal_cgroup_cpu_pressure_some_avg10{channel=\"cgroup:cpu_pressure_some_avg10.kubepods/pod1\","
                      "subsystem=\"cpu\",unit=\"%\",entity=\"kubepods/pod1\","
                      "pod_uid=\"0f6b1c2e-8c4a-4b2a-9a55-1d2f3e4a5b6c\",pod=\"a\\\"b\\\\c\"} 4\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("reveal_proc_meminfo_MemAvailable{channel=\"proc.meminfo:MemAvailable\",subsystem=\"memory\",unit=\"kB\"}"),
            std::string::npos)
      << "channels without labels unchanged";
}

// The configuration snapshot as info series (issue #22; reveal config drift --prometheus reads
// them back): one per key, values escaped, anything but printable ASCII as '?', long ones cut.
TEST(Exposition, HostConfigInfoSeries) {
  AgentSnapshot s = snapshot();
  s.config = {{"net.eth0.mtu", "9000"},
              {"kernel.cmdline", "root=/dev/sda1 quiet \"x\\y\""},
              {"cpu.model", std::string("Caf\xc3\xa9\nCPU\x01", 10)},
              {"long", std::string(5000, 'a')}};
  const std::string text = render_metrics(s);
  EXPECT_NE(text.find("# TYPE reveal_host_config_info gauge\n"), std::string::npos) << text;
  EXPECT_NE(text.find("reveal_host_config_info{key=\"net.eth0.mtu\",value=\"9000\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("reveal_host_config_info{key=\"kernel.cmdline\",value=\"root=/dev/sda1 quiet \\\"x\\\\y\\\"\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("reveal_host_config_info{key=\"cpu.model\",value=\"Caf???CPU?\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("reveal_host_config_info{key=\"long\",value=\"" + std::string(1021, 'a') + "...\"} 1\n"),
            std::string::npos);
  std::size_t n = 0;
  for (std::size_t at = text.find("\nreveal_host_config_info{"); at != std::string::npos;
       at = text.find("\nreveal_host_config_info{", at + 1))
    ++n;
  EXPECT_EQ(n, 4u);
  s.config.clear();
  EXPECT_EQ(render_metrics(s).find("reveal_host_config_info{"), std::string::npos);
}

// Names the kernel allowed but that are not UTF-8 (an interface "eth\xff0", a cgroup "caf\xe9")
// must not make Prometheus reject the scrape nor /incidents fail: the invalid bytes become
// U+FFFD; valid UTF-8 stays.
TEST(Exposition, InvalidUtf8InNamesIsReplaced) {
  AgentSnapshot s = snapshot();
  s.channels.push_back(ch(std::string("proc.net.dev:rx_bytes.eth\xff") + "0", Kind::counter, Subsystem::network, "bytes"));
  s.channels.push_back(ch("cgroup:cpu_usage.caf\xc3\xa9", Kind::counter, Subsystem::cpu, "us"));
  s.exported.push_back(1);
  s.exported.push_back(1);
  s.values.push_back(7);
  s.values.push_back(8);
  const std::string text = render_metrics(s);
  EXPECT_NE(text.find("channel=\"proc.net.dev:rx_bytes.eth\xef\xbf\xbd" "0\""), std::string::npos) << text;
  EXPECT_NE(text.find("entity=\"caf\xc3\xa9\""), std::string::npos) << "valid UTF-8 kept";
  EXPECT_EQ(text.find("\xff"), std::string::npos);
  Incident inc = sample_incident();
  inc.top.front().name = std::string("proc.net.dev:rx_bytes.eth\xff") + "0";
  inc.focus = "eth\xff" "0";
  s.active = inc;
  std::string json;
  ASSERT_NO_THROW(json = render_incidents_json(s));
  EXPECT_NE(json.find("eth\xef\xbf\xbd" "0"), std::string::npos) << json;
  EXPECT_TRUE(nlohmann::json::accept(json));
}

// The NVLink and InfiniBand families the Grafana host dashboard reads (deploy/grafana/dashboards.py
// NVLINK_*, IB_ERRORS, reveal_rdma_port_{rcv,xmit}_data_total): the fleet test has no such
// hardware, so their names are pinned here, from the probes' channel names.
TEST(ExpositionNames, InterconnectFamilies) {
  const Subsystem ic = Subsystem::interconnect;
  EXPECT_EQ(prometheus_metric_name(ch("nvml:nvlink_tx_bytes_l0.gpu0", Kind::counter, ic, "bytes")),
            "reveal_nvml_nvlink_tx_bytes_l0_total");
  EXPECT_EQ(prometheus_metric_name(ch("nvml:nvlink_rx_bytes_l17.gpu7", Kind::counter, ic, "bytes")),
            "reveal_nvml_nvlink_rx_bytes_l17_total");
  EXPECT_EQ(prometheus_metric_name(ch("nvml:nvlink_crc_flit_error_count_l3.gpu1", Kind::counter, ic, "count")),
            "reveal_nvml_nvlink_crc_flit_error_count_l3_total");
  EXPECT_EQ(prometheus_metric_name(ch("rdma:port_rcv_data.mlx5_0", Kind::counter, ic, "bytes")),
            "reveal_rdma_port_rcv_data_total");
  EXPECT_EQ(prometheus_metric_name(ch("rdma:port_xmit_data.mlx5_0", Kind::counter, ic, "bytes")),
            "reveal_rdma_port_xmit_data_total");
  for (const char* f : {"port_rcv_errors", "symbol_error", "port_xmit_discards", "link_downed"})
    EXPECT_EQ(prometheus_metric_name(ch(std::string("rdma:") + f + ".mlx5_0", Kind::counter, ic, "count")),
              std::string("reveal_rdma_") + f + "_total");
  EXPECT_EQ(prometheus_metric_name(ch("t:level-", Kind::gauge, Subsystem::system, "")), "reveal_t_level");
  // `_total` is kept for counters: a gauge that would end in it gets `_value`.
  EXPECT_EQ(prometheus_metric_name(ch("nvml:memory_total.gpu0", Kind::gauge, Subsystem::gpu, "bytes")),
            "reveal_nvml_memory_total_value");
  EXPECT_EQ(prometheus_metric_name(ch("t:x_total", Kind::state, Subsystem::gpu, "")), "reveal_t_x_total_value");
}

TEST(Exposition, FamiliesTypesAndValues) {
  const AgentSnapshot s = snapshot();
  const std::string text = render_metrics(s);
  const auto fams = parse(text);
  const std::map<std::string, std::string> want = {
      {"reveal_build_info", "gauge"},
      {"reveal_anomaly_score", "gauge"},
      {"reveal_subsystem_anomaly_score", "gauge"},
      {"reveal_model_ready", "gauge"},
      {"reveal_model_reference_windows", "gauge"},
      {"reveal_model_fit_timestamp_seconds", "gauge"},
      {"reveal_windows_scored_total", "counter"},
      {"reveal_symptom_led_windows_total", "counter"},
      {"reveal_incidents_total", "counter"},
      {"reveal_absence_incidents_total", "counter"},
      {"reveal_workload_changes_total", "counter"},
      {"reveal_incidents_withdrawn_total", "counter"},
      {"reveal_incidents_transient_total", "counter"},
      {"reveal_regimes_remembered", "gauge"},
      {"reveal_samples_total", "counter"},
      {"reveal_samples_skipped_total", "counter"},
      {"reveal_sampler_realtime", "gauge"},
      {"reveal_last_sample_timestamp_seconds", "gauge"},
      {"reveal_probe_up", "gauge"},
      {"reveal_probe_duration_seconds", "gauge"},
      {"reveal_probe_channels", "gauge"},
      {"reveal_probe_channels_missing", "gauge"},
      {"reveal_probe_errors_total", "counter"},
      {"reveal_store_bytes", "gauge"},
      {"reveal_store_max_bytes", "gauge"},
      {"reveal_store_write_failed", "gauge"},
      {"reveal_detect_duration_seconds", "gauge"},
      {"process_cpu_seconds_total", "counter"},
      {"process_resident_memory_bytes", "gauge"},
      {"process_start_time_seconds", "gauge"},
      {"reveal_proc_stat_user_total", "counter"},
      {"reveal_proc_meminfo_MemAvailable", "gauge"},
      {"reveal_proc_net_dev_rx_bytes_total", "counter"},
      {"reveal_sys_net_operstate", "gauge"},
  };
  for (const auto& [name, type] : want) {
    ASSERT_TRUE(fams.count(name)) << name << " missing in\n" << text;
    EXPECT_EQ(fams.at(name).type, type) << name;
    EXPECT_FALSE(fams.at(name).help.empty()) << name;
    EXPECT_FALSE(fams.at(name).samples.empty()) << name;
  }
  EXPECT_EQ(fams.size(), want.size()) << "unexpected families (no active incident, perf channel not exported):\n"
                                      << text;
  EXPECT_EQ(fams.at("reveal_build_info").samples[0], std::string("reveal_build_info{version=\"") + kVersion + "\",mode=\"replay\"} 1");
  EXPECT_EQ(fams.at("reveal_subsystem_anomaly_score").samples.size(), kNumSubsystems);
  EXPECT_EQ(fams.at("reveal_incidents_total").samples.size(), kNumSubsystems);
  EXPECT_NE(text.find("reveal_incidents_total{subsystem=\"network\"} 3\n"), std::string::npos);
  EXPECT_EQ(fams.at("reveal_absence_incidents_total").samples,
            (std::vector<std::string>{"reveal_absence_incidents_total{source=\"proc.stat\"} 0",
                                      "reveal_absence_incidents_total{source=\"nvml\"} 2"}));
  EXPECT_NE(text.find("reveal_subsystem_anomaly_score{subsystem=\"power/thermal\"} 0.1\n"), std::string::npos);
  EXPECT_NE(text.find("reveal_samples_total 100\n"), std::string::npos);
  EXPECT_NE(text.find("reveal_symptom_led_windows_total 4\n"), std::string::npos);
  EXPECT_NE(text.find("reveal_store_max_bytes 1048576\n"), std::string::npos);
  // Only raw channels carry a `channel` label (the fleet reader selects channel!="").
  for (const auto& [name, f] : fams)
    for (const auto& line : f.samples)
      EXPECT_EQ(line.find("channel=\"") != std::string::npos, name.rfind("reveal_proc_", 0) == 0 ||
                                                                 name.rfind("reveal_sys_", 0) == 0)
          << line;
  EXPECT_NE(text.find("reveal_last_sample_timestamp_seconds 1800000000.5\n"), std::string::npos);
  EXPECT_NE(text.find("reveal_probe_up{probe=\"nvml\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("reveal_probe_errors_total{probe=\"nvml\"} 5\n"), std::string::npos);
  // Raw channels: exact labels, per-CPU series in the host total's family, in store order.
  const auto& user = fams.at("reveal_proc_stat_user_total").samples;
  ASSERT_EQ(user.size(), 2u);
  EXPECT_EQ(user[0], "reveal_proc_stat_user_total{channel=\"proc.stat:user\",subsystem=\"cpu\",unit=\"ticks\"} 1234");
  EXPECT_EQ(user[1],
            "reveal_proc_stat_user_total{channel=\"proc.stat:user.cpu0\",subsystem=\"cpu\",unit=\"ticks\","
            "entity=\"cpu0\"} 600");
  EXPECT_EQ(fams.at("reveal_proc_stat_user_total").help, "CPU time in user mode (raw counter, unit ticks)");
  EXPECT_EQ(fams.at("reveal_proc_net_dev_rx_bytes_total").samples[0],
            "reveal_proc_net_dev_rx_bytes_total{channel=\"proc.net.dev:rx_bytes.eth0\",subsystem=\"network\","
            "unit=\"bytes\",entity=\"eth0\"} 5000000000");
  // NaN is written as NaN.
  EXPECT_EQ(fams.at("reveal_proc_meminfo_MemAvailable").samples[0],
            "reveal_proc_meminfo_MemAvailable{channel=\"proc.meminfo:MemAvailable\",subsystem=\"memory\","
            "unit=\"kB\"} NaN");
  // The exported mask: the perf channel is not shown at all.
  EXPECT_EQ(text.find("context"), std::string::npos);
  EXPECT_EQ(text.find("reveal_incident_active"), std::string::npos);
  EXPECT_EQ(text.find("reveal_absence_active"), std::string::npos);
}

TEST(Exposition, NaNBeforeTheModel) {
  AgentSnapshot s = snapshot();
  s.model_ready = false;
  s.anomaly_score = kNaN;
  s.subsystem_score.fill(kNaN);
  const std::string text = render_metrics(s);
  EXPECT_NE(text.find("\nreveal_anomaly_score NaN\n"), std::string::npos);
  EXPECT_NE(text.find("\nreveal_subsystem_anomaly_score{subsystem=\"cpu\"} NaN\n"), std::string::npos);
  EXPECT_NE(text.find("\nreveal_model_ready 0\n"), std::string::npos);
  s.values[0] = std::numeric_limits<double>::infinity();
  s.values[2] = -std::numeric_limits<double>::infinity();
  const std::string inf = render_metrics(s);
  EXPECT_NE(inf.find("unit=\"ticks\"} +Inf\n"), std::string::npos);
  EXPECT_NE(inf.find("entity=\"cpu0\"} -Inf\n"), std::string::npos);
}

TEST(Exposition, TimeChannelsAreExportedInSeconds) {
  EXPECT_EQ(prometheus_metric_name(ch("proc.diskstats:io_time_ms.sda", Kind::counter, Subsystem::storage, "ms", "")),
            "reveal_proc_diskstats_io_time_seconds_total");
  EXPECT_EQ(prometheus_metric_name(ch("proc.pressure:cpu_some_total", Kind::counter, Subsystem::cpu, "us", "")),
            "reveal_proc_pressure_cpu_some_seconds_total");
  EXPECT_EQ(prometheus_metric_name(ch("x:wait_ns", Kind::gauge, Subsystem::system, "ns", "")), "reveal_x_wait_seconds");
  EXPECT_EQ(prometheus_metric_name(ch("x:items_ms", Kind::gauge, Subsystem::system, "count", "")), "reveal_x_items_ms");
  EXPECT_EQ(prometheus_metric_name(ch("proc.vmstat:nr_sec_page_table_pages", Kind::gauge, Subsystem::memory, "pages", "")),
            "reveal_proc_vmstat_nr_secondary_page_table_pages");
  EXPECT_DOUBLE_EQ(prometheus_unit_scale(ch("a:b", Kind::gauge, Subsystem::system, "ms", "")), 1e-3);
  EXPECT_DOUBLE_EQ(prometheus_unit_scale(ch("a:b", Kind::gauge, Subsystem::system, "kB", "")), 1.0);
  AgentSnapshot s;
  s.channels = {ch("proc.diskstats:io_time_ms.sda", Kind::counter, Subsystem::storage, "ms", "")};
  s.exported = {1};
  s.values = {2500};
  EXPECT_NE(render_metrics(s).find("reveal_proc_diskstats_io_time_seconds_total{channel=\"proc.diskstats:io_time_ms.sda\","
                                   "subsystem=\"storage\",unit=\"ms\",entity=\"sda\"} 2.5\n"),
            std::string::npos);
}

TEST(Exposition, LabelValuesAreEscaped) {
  AgentSnapshot s;
  s.hostname = "h";
  s.channels = {ch("cgroup:cpu_usage./a\"b\\c\nd", Kind::counter, Subsystem::system, "us", "line one\nback\\slash")};
  s.exported = {1};
  s.values = {42};
  s.probes = {{"odd\"probe", true, "", true, 0, 1, 0, 0}};
  const std::string text = render_metrics(s);
  EXPECT_NE(text.find("reveal_cgroup_cpu_usage_seconds_total{channel=\"cgroup:cpu_usage./a\\\"b\\\\c\\nd\",subsystem=\"system\","
                      "unit=\"us\",entity=\"/a\\\"b\\\\c\\nd\"} 4.2e-05\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# HELP reveal_cgroup_cpu_usage_seconds_total line one\\nback\\\\slash (raw counter, unit us)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("reveal_probe_up{probe=\"odd\\\"probe\"} 1\n"), std::string::npos);
  // Every line is either a comment or one sample: no raw newline escaped into the output.
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) EXPECT_TRUE(line.rfind("# ", 0) == 0 || line.rfind("reveal_", 0) == 0 ||
                                             line.rfind("process_", 0) == 0) << line;
}

TEST(Exposition, ActiveIncident) {
  AgentSnapshot s = snapshot();
  s.active = sample_incident();
  const std::string text = render_metrics(s);
  EXPECT_NE(text.find("\nreveal_incident_active{subsystem=\"network\",focus=\"eth0\","
                      "top_channel=\"proc.net.dev:rx_bytes.eth0\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nreveal_incident_active_start_timestamp_seconds 1800000010\n"), std::string::npos);
  EXPECT_NE(text.find("\nreveal_incident_active_confidence 0.8\n"), std::string::npos);
  const auto fams = parse(text);
  EXPECT_EQ(fams.at("reveal_incident_active").type, "gauge");
  // Without a focus or channels the labels are present and empty.
  s.active->focus.clear();
  s.active->top.clear();
  EXPECT_NE(render_metrics(s).find("reveal_incident_active{subsystem=\"network\",focus=\"\",top_channel=\"\"} 1\n"),
            std::string::npos);
}

// Impact (issue #22): the open incident's estimated slowdown and job-seconds lost are gauges
// while it is known, absent when it is not (never a NaN sample); /incidents and `reveal detect
// --json` carry the same `impact` object, with nulls where unknown.
TEST(Exposition, ActiveIncidentImpact) {
  AgentSnapshot s = snapshot();
  s.active = sample_incident();
  std::string text = render_metrics(s);
  EXPECT_EQ(text.find("reveal_incident_active_slowdown_ratio"), std::string::npos) << "not measured";
  IncidentImpact& m = s.active->impact;
  m.measured = true;
  m.tenants = {{"jobs/a", 1.6, 0.9, 0.9 / 1.6}};
  m.basis = "unknown: an incident named gpu";
  text = render_metrics(s);
  EXPECT_EQ(text.find("reveal_incident_active_slowdown_ratio"), std::string::npos) << "unknown";
  EXPECT_EQ(text.find("NaN\nreveal_incident_active_lost"), std::string::npos);
  auto j = nlohmann::json::parse(render_incidents_json(s));
  ASSERT_TRUE(j["active"]["impact"].is_object());
  EXPECT_TRUE(j["active"]["impact"]["slowdown"].is_null());
  EXPECT_TRUE(j["active"]["impact"]["job_seconds_lost"].is_null());
  EXPECT_EQ(j["active"]["impact"]["text"], "unknown: an incident named gpu");

  m.slowdown = m.slowdown_lo = m.slowdown_hi = 1 - 0.9 / 1.6;
  m.job_seconds_lost = 26.25;
  m.basis = "CPU time";
  text = render_metrics(s);
  EXPECT_NE(text.find("\nreveal_incident_active_slowdown_ratio 0.4375\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nreveal_incident_active_lost_job_seconds 26.25\n"), std::string::npos) << text;
  const auto fams = parse(text);
  EXPECT_EQ(fams.at("reveal_incident_active_slowdown_ratio").type, "gauge");
  EXPECT_EQ(fams.at("reveal_incident_active_lost_job_seconds").type, "gauge");
  j = nlohmann::json::parse(render_incidents_json(s));
  const auto& ij = j["active"]["impact"];
  EXPECT_DOUBLE_EQ(ij["slowdown"].get<double>(), 0.4375);
  EXPECT_DOUBLE_EQ(ij["job_seconds_lost"].get<double>(), 26.25);
  ASSERT_EQ(ij["tenants"].size(), 1u);
  EXPECT_EQ(ij["tenants"][0]["cgroup"], "jobs/a");
  EXPECT_DOUBLE_EQ(ij["tenants"][0]["throughput"].get<double>(), 0.5625);
  EXPECT_EQ(ij["text"], "jobs/a ran at 56 % of its speed (slowdown 44 %), about 26 job-seconds lost");
  DetectResult r;
  r.incidents = {*s.active};
  EXPECT_EQ(nlohmann::json::parse(render_json(r, "x.db"))["incidents"][0]["impact"], ij);
}

// An incident not reported yet (shorter than detect.min_duration so far): pending, as a
// Prometheus alert is before it fires; not active, not counted.
TEST(Exposition, PendingIncident) {
  AgentSnapshot s = snapshot();
  EXPECT_EQ(render_metrics(s).find("reveal_incident_pending"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(render_incidents_json(s))["pending"].is_null());
  s.pending = sample_incident();
  const std::string text = render_metrics(s);
  EXPECT_NE(text.find("\nreveal_incident_pending{subsystem=\"network\",focus=\"eth0\","
                      "top_channel=\"proc.net.dev:rx_bytes.eth0\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nreveal_incident_pending_start_timestamp_seconds 1800000010\n"), std::string::npos);
  EXPECT_EQ(text.find("reveal_incident_active"), std::string::npos) << "pending is not active";
  EXPECT_EQ(parse(text).at("reveal_incident_pending").type, "gauge");
  const auto j = nlohmann::json::parse(render_incidents_json(s));
  ASSERT_TRUE(j["pending"].is_object());
  EXPECT_EQ(j["pending"]["subsystem"], "network");
  EXPECT_TRUE(j["active"].is_null());
}

// The GPU's channels stopped: an absence incident as AbsenceTracker builds it.
Incident sample_absence() {
  Incident inc;
  inc.kind = "absence";
  inc.start_s = 30;
  inc.end_s = 41;
  inc.start_unix_ns = 1'800'000'030'000'000'000;
  inc.end_unix_ns = 1'800'000'041'000'000'000;
  inc.subsystem = Subsystem::gpu;
  inc.confidence = 1.0;
  inc.subsystem_shares = {{Subsystem::gpu, 1.0}};
  inc.focus = "gpu0";
  inc.focus_share = 1.0;
  inc.top = {{"nvml:power_usage.gpu0", "W", Subsystem::gpu, kNaN, 300, 0}};
  inc.action = "all 2 channels of nvml stopped reporting for 12 s (e.g. nvml:power_usage.gpu0): check ...";
  return inc;
}

TEST(Exposition, ActiveAbsence) {
  AgentSnapshot s = snapshot();
  s.active_absences = {{"nvml", 2, sample_absence()}};
  const std::string text = render_metrics(s);
  const auto fams = parse(text);
  EXPECT_EQ(fams.at("reveal_absence_active").type, "gauge");
  EXPECT_EQ(fams.at("reveal_absence_active").samples,
            (std::vector<std::string>{"reveal_absence_active{source=\"nvml\",subsystem=\"gpu\",focus=\"gpu0\","
                                      "top_channel=\"nvml:power_usage.gpu0\"} 1"}));
  EXPECT_EQ(fams.at("reveal_absence_active_channels").samples,
            (std::vector<std::string>{"reveal_absence_active_channels{source=\"nvml\"} 2"}));
  EXPECT_EQ(fams.at("reveal_absence_active_start_timestamp_seconds").samples,
            (std::vector<std::string>{"reveal_absence_active_start_timestamp_seconds{source=\"nvml\"} 1800000030"}));
  // An anomaly incident is not implied.
  EXPECT_EQ(text.find("reveal_incident_active"), std::string::npos);
  // /incidents: open and closed absences in their own lists, as `reveal detect --json` writes them.
  s.recent_absences = {sample_absence()};
  const auto j = nlohmann::json::parse(render_incidents_json(s));
  EXPECT_TRUE(j["active"].is_null());
  EXPECT_TRUE(j["recent"].empty());
  ASSERT_EQ(j["active_absences"].size(), 1u);
  ASSERT_EQ(j["recent_absences"].size(), 1u);
  DetectResult r;
  r.incidents = {sample_absence()};
  const auto d = nlohmann::json::parse(render_json(r, "x.db"));
  EXPECT_EQ(j["active_absences"][0], d["incidents"][0]);
  EXPECT_EQ(j["recent_absences"][0], d["incidents"][0]);
  EXPECT_EQ(j["active_absences"][0]["kind"], "absence");
}

// A job started: a workload change as the streaming detector builds it.
Incident sample_change() {
  Incident c;
  c.kind = "workload_change";
  c.start_unix_ns = 1'800'000'100'000'000'000;
  c.end_unix_ns = 1'800'000'133'000'000'000;
  c.subsystem = Subsystem::cpu;
  c.confidence = 0.8;
  c.subsystem_shares = {{Subsystem::cpu, 0.8}, {Subsystem::network, 0.2}};
  c.top = {{"proc.stat:user", "ticks", Subsystem::cpu, 180, 20, 40}};
  c.action = "ended: a new regime learned";
  return c;
}

TEST(Exposition, WorkloadChangesAreNotIncidents) {
  AgentSnapshot s = snapshot();
  s.workload_changes_total = 5;
  s.regimes_remembered = 3;
  s.active_workload_change = sample_change();
  s.workload_changes = {sample_change()};
  const std::string text = render_metrics(s);
  const auto fams = parse(text);
  EXPECT_NE(text.find("reveal_workload_changes_total 5\n"), std::string::npos);
  EXPECT_NE(text.find("reveal_regimes_remembered 3\n"), std::string::npos);
  EXPECT_EQ(fams.at("reveal_workload_change_active").samples,
            (std::vector<std::string>{"reveal_workload_change_active{subsystem=\"cpu\",top_channel=\"proc.stat:user\"} 1"}));
  EXPECT_EQ(text.find("reveal_incident_active"), std::string::npos) << "a change is not an incident";
  const auto j = nlohmann::json::parse(render_incidents_json(s));
  EXPECT_TRUE(j["active"].is_null());
  EXPECT_TRUE(j["recent"].empty());
  ASSERT_TRUE(j["active_workload_change"].is_object());
  ASSERT_EQ(j["workload_changes"].size(), 1u);
  EXPECT_EQ(j["workload_changes"][0]["kind"], "workload_change");
  EXPECT_EQ(j["workload_changes"][0]["action"], "ended: a new regime learned");
  // None open: null, and no gauge.
  s.active_workload_change.reset();
  EXPECT_TRUE(nlohmann::json::parse(render_incidents_json(s))["active_workload_change"].is_null());
  EXPECT_EQ(render_metrics(s).find("reveal_workload_change_active"), std::string::npos);
}

TEST(Exposition, IncidentsJsonMatchesDetectJson) {
  AgentSnapshot s = snapshot();
  s.active = sample_incident();
  Incident old = sample_incident();
  old.subsystem = Subsystem::cpu;
  old.focus.clear();
  s.recent = {old};
  const auto j = nlohmann::json::parse(render_incidents_json(s));
  EXPECT_EQ(j["schema"], "reveal.incidents/1");
  EXPECT_EQ(j["host"], "node7");
  ASSERT_TRUE(j["active"].is_object());
  ASSERT_EQ(j["recent"].size(), 1u);
  // The same fields as an incident of `reveal detect --json`.
  DetectResult r;
  r.incidents = {sample_incident(), old};
  const auto d = nlohmann::json::parse(render_json(r, "x.db"));
  EXPECT_EQ(j["active"], d["incidents"][0]);
  EXPECT_EQ(j["recent"][0], d["incidents"][1]);
  EXPECT_EQ(j["active"]["subsystem"], "network");
  EXPECT_EQ(j["active"]["focus"], "eth0");
  EXPECT_TRUE(j["recent"][0]["focus"].is_null());
  EXPECT_EQ(j["active"]["top_channels"][0]["channel"], "proc.net.dev:rx_bytes.eth0");
  s.active.reset();
  s.recent.clear();
  const auto e = nlohmann::json::parse(render_incidents_json(s));
  EXPECT_TRUE(e["active"].is_null());
  EXPECT_TRUE(e["recent"].is_array() && e["recent"].empty());
  EXPECT_TRUE(e["active_absences"].is_array() && e["active_absences"].empty());
  EXPECT_TRUE(e["recent_absences"].is_array() && e["recent_absences"].empty());
}

// `promtool check metrics` on the exposition of every channel of the real H200 recording
// (1039 channels from 12 probes) and its configuration snapshot, plus an active incident. promtool exits 3 when it has lint
// remarks. Two kinds are accepted, and only on raw channel families, whose names are the
// channel names: camelCase (the kernel's own field names: proc.meminfo:MemAvailable ->
// reveal_proc_meminfo_MemAvailable, as node_exporter's node_memory_MemAvailable_bytes) and
// abbreviated units (proc.diskstats:read_time_ms; proc.vmstat:nr_sec_page_table_pages, where
// "sec" means secondary): raw values are exported as stored, in the unit of their `unit` label,
// so that `reveal detect --prometheus` sees what a store holds; renaming them to seconds would
// need converting them. Anything else (a parse error, a counter without _total or a gauge with
// it, missing HELP, a remark on a detection or agent family) fails.
TEST(Exposition, PromtoolAcceptsTheRealChannelSet) {
  const char* promtool = "/usr/bin/promtool";
  if (!std::filesystem::exists(promtool)) GTEST_SKIP() << "no " << promtool;
  const Recording rec = load_recording(std::string(REVEAL_FIXTURES_DIR) + "/recordings/h200-gpu-contention.db");
  AgentSnapshot s = snapshot();
  s.channels = rec.channels;
  s.exported.assign(rec.channels.size(), 1);
  const auto last = rec.values.row(rec.values.rows() - 1);
  s.values.assign(last.begin(), last.end());
  s.active = sample_incident();
  s.active_absences = {{"nvml", 2, sample_absence()}};
  s.config = rec.config;  // the H200 host's configuration: reveal_host_config_info
  ASSERT_GT(s.config.size(), 20u);
  const std::string text = render_metrics(s);
  const auto dir = std::filesystem::temp_directory_path() / ("reveal_promtool_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "metrics.prom") << text;
  }
  const std::string cmd = std::string(promtool) + " check metrics < " + (dir / "metrics.prom").string() + " > " +
                          (dir / "out.txt").string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream out_file(dir / "out.txt");
  const std::string out((std::istreambuf_iterator<char>(out_file)), std::istreambuf_iterator<char>());
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(WIFEXITED(status));
  const int rc = WEXITSTATUS(status);
  ASSERT_TRUE(rc == 0 || rc == 3) << "promtool exit " << rc << ":\n" << out;
  std::set<std::string> raw;
  for (const auto& c : rec.channels) raw.insert(prometheus_metric_name(c));
  std::istringstream in(out);
  std::string line;
  std::size_t accepted = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::string name = line.substr(0, line.find(' '));
    if (raw.count(name) && (line.find("should be written in 'snake_case' not 'camelCase'") != std::string::npos ||
                            line.find("should not contain abbreviated units") != std::string::npos)) {
      ++accepted;
      continue;
    }
    ADD_FAILURE() << "promtool: " << line;
  }
  EXPECT_EQ(rc == 3, accepted > 0) << out;
}

}  // namespace
}  // namespace reveal
