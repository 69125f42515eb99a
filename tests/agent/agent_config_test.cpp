// `reveal agent` configuration (reveal/agent_config.h): defaults, a full and a partial file,
// every error kind with its one-line "<file>:<line>:<col>: <what>" form, the value parsers and
// the SIGHUP restart-only diff. The documented example deploy/reveal-agent.toml must load and
// spell out exactly the defaults.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>

#include "reveal/agent_config.h"
#include "reveal/streaming.h"

namespace reveal {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using std::chrono::nanoseconds;

class AgentConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("reveal-agent-config-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& text, const std::string& name = "agent.toml") {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  AgentConfig load(const std::string& text, const AgentConfig& base = {}) {
    return load_agent_config(write(text), base);
  }
  // The ConfigError message for `text`, with the temp dir replaced by "DIR"; "" if it loads.
  std::string error(const std::string& text) {
    try {
      load(text);
    } catch (const ConfigError& e) {
      std::string m = e.what();
      const std::string d = dir_.string();
      if (m.compare(0, d.size(), d) == 0) m = "DIR" + m.substr(d.size());
      return m;
    }
    return "";
  }
  fs::path dir_;
};

void expect_defaults(const AgentConfig& c) {
  const AgentConfig d;
  EXPECT_EQ(c.listen, "127.0.0.1:9797");
  EXPECT_EQ(c.root, "/");
  EXPECT_EQ(c.interval, nanoseconds(1s));
  EXPECT_TRUE(c.probes.empty());
  EXPECT_TRUE(c.exclude.empty());
  EXPECT_EQ(c.config_interval, nanoseconds(60s));
  EXPECT_TRUE(c.realtime_sampling);
  EXPECT_EQ(c.store_path, "/var/lib/reveal/agent.db");
  EXPECT_EQ(c.store_max_age, nanoseconds(24h));
  EXPECT_EQ(c.store_max_bytes, 256ull << 20);
  EXPECT_EQ(c.metric_channels, std::vector<std::string>{"*"});
  EXPECT_EQ(c.window, 3u);
  EXPECT_EQ(c.stride, 1u);
  EXPECT_EQ(c.trail, 0u);  // off in the agent (agent_config.h)
  EXPECT_EQ(c.warmup, nanoseconds(120s));
  EXPECT_EQ(c.refit, nanoseconds(300s));
  EXPECT_EQ(c.history, nanoseconds(1h));
  EXPECT_EQ(c.min_windows, 2);
  EXPECT_EQ(c.end_after, 3);
  EXPECT_EQ(c.min_duration, nanoseconds(10s));
  EXPECT_EQ(streaming_options(c).detect.incident.min_duration_s, IncidentRule{}.min_duration_s);
  EXPECT_EQ(c.seed, 42u);
  EXPECT_TRUE(c.workload_changes);
  EXPECT_EQ(c.relearn, nanoseconds(30s));
  EXPECT_EQ(c.regimes, 8u);
  EXPECT_TRUE(c.pod_resources_socket.empty());  // <root>/var/lib/kubelet/pod-resources/kubelet.sock
  EXPECT_EQ(c.pod_resources_interval, nanoseconds(10s));
  EXPECT_TRUE(restart_only_changes(c, d).empty());
}

TEST_F(AgentConfigTest, DefaultsAndEmptyFile) {
  expect_defaults(AgentConfig{});
  expect_defaults(load(""));
  expect_defaults(load("# nothing but a comment\n\n[store]\n[metrics]\n[detect]\n"));
}

TEST_F(AgentConfigTest, FullFile) {
  const AgentConfig c = load(R"(
listen = "0.0.0.0:9100"
root = "/host"
interval = "500ms"
probes = ["proc.*", "sys.net"]
exclude = ["perf.uncore"]
config_interval = "2m"
sampling_priority = "normal"
[store]
path = "/tmp/a.db"
max_age = "6h"
max_size = "1GiB"
[metrics]
channels = ["proc.stat:*", "nvml:util.gpu?"]
[detect]
window = 5
stride = 2
trail = 30
warmup = "30s"
refit = "10m"
history = "2h"
min_windows = 4
end_after = 6
min_duration = "4s"
false_per_day = 0.25
seed = 7
[kubernetes]
pod_resources_socket = "/run/kubelet/pr.sock"
pod_resources_interval = "0s"
)");
  EXPECT_EQ(c.listen, "0.0.0.0:9100");
  EXPECT_EQ(c.root, "/host");
  EXPECT_EQ(c.interval, nanoseconds(500ms));
  EXPECT_EQ(c.probes, (std::vector<std::string>{"proc.*", "sys.net"}));
  EXPECT_EQ(c.exclude, std::vector<std::string>{"perf.uncore"});
  EXPECT_EQ(c.config_interval, nanoseconds(120s));
  EXPECT_FALSE(c.realtime_sampling);
  EXPECT_EQ(c.store_path, "/tmp/a.db");
  EXPECT_EQ(c.store_max_age, nanoseconds(6h));
  EXPECT_EQ(c.store_max_bytes, 1ull << 30);
  EXPECT_EQ(c.metric_channels, (std::vector<std::string>{"proc.stat:*", "nvml:util.gpu?"}));
  EXPECT_EQ(c.window, 5u);
  EXPECT_EQ(c.trail, 30u);
  EXPECT_EQ(streaming_options(c).detect.window.trail, 30u);
  EXPECT_EQ(c.stride, 2u);
  EXPECT_EQ(c.warmup, nanoseconds(30s));
  EXPECT_EQ(c.refit, nanoseconds(600s));
  EXPECT_EQ(c.history, nanoseconds(2h));
  EXPECT_EQ(c.min_windows, 4);
  EXPECT_EQ(c.end_after, 6);
  EXPECT_EQ(c.min_duration, nanoseconds(4s));
  EXPECT_EQ(streaming_options(c).detect.incident.min_duration_s, 4.0);
  EXPECT_EQ(c.false_per_day, 0.25);
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.pod_resources_socket, "/run/kubelet/pr.sock");
  EXPECT_EQ(c.pod_resources_interval, nanoseconds(0));
}

TEST_F(AgentConfigTest, PartialFileKeepsBase) {
  AgentConfig base;
  base.listen = "127.0.0.1:1234";  // e.g. set by a flag before the file is read
  base.probes = {"proc.stat"};
  base.store_max_bytes = 5ull << 20;
  base.min_windows = 9;
  const AgentConfig c = load("interval = \"2s\"\n[detect]\nend_after = 1\n[metrics]\nchannels = []\n", base);
  EXPECT_EQ(c.interval, nanoseconds(2s));
  EXPECT_EQ(c.end_after, 1);
  EXPECT_TRUE(c.metric_channels.empty());  // an explicit empty list replaces the default
  EXPECT_EQ(c.listen, "127.0.0.1:1234");
  EXPECT_EQ(c.probes, std::vector<std::string>{"proc.stat"});
  EXPECT_EQ(c.store_max_bytes, 5ull << 20);
  EXPECT_EQ(c.min_windows, 9);
  EXPECT_EQ(c.window, 3u);
  EXPECT_EQ(c.store_path, "/var/lib/reveal/agent.db");
}

TEST_F(AgentConfigTest, DottedKeysAndIntegerSize) {
  const AgentConfig c = load("store.max_size = 2097152\ndetect.window = 4\n");
  EXPECT_EQ(c.store_max_bytes, 2u << 20);
  EXPECT_EQ(c.window, 4u);
}

TEST_F(AgentConfigTest, MissingFile) {
  const fs::path p = dir_ / "absent.toml";
  try {
    load_agent_config(p);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), p.string() + ": cannot read: No such file or directory");
  }
  EXPECT_THROW(load_agent_config(dir_), ConfigError);  // a directory
}

TEST_F(AgentConfigTest, SyntaxErrorHasPositionOnOneLine) {
  const std::string m = error("listen = \"127.0.0.1:9797\"\ninterval = \n");
  EXPECT_EQ(m.rfind("DIR/agent.toml:2:", 0), 0u) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  const std::string dup = error("window = 1\n[detect]\nwindow = 3\nwindow = 4\n");
  EXPECT_EQ(dup.rfind("DIR/agent.toml:4:", 0), 0u) << dup;
  const std::string unterminated = error("root = \"/host\n");
  EXPECT_EQ(unterminated.rfind("DIR/agent.toml:1:", 0), 0u) << unterminated;
  EXPECT_EQ(unterminated.find('\n'), std::string::npos) << unterminated;
}

TEST_F(AgentConfigTest, UnknownKeys) {
  EXPECT_EQ(error("[detect]\nwindw = 3\n"), "DIR/agent.toml:2:1: unknown key 'detect.windw'");
  EXPECT_EQ(error("listen = \"h:1\"\n  lisen = \"h:2\"\n"), "DIR/agent.toml:2:3: unknown key 'lisen'");
  EXPECT_EQ(error("[storage]\npath = \"x\"\n"), "DIR/agent.toml:1:2: unknown key 'storage'");
  EXPECT_EQ(error("[store]\npath = \"/a\"\nmax_bytes = 5\n"), "DIR/agent.toml:3:1: unknown key 'store.max_bytes'");
  EXPECT_EQ(error("[metrics]\nchannel = [\"*\"]\n"), "DIR/agent.toml:2:1: unknown key 'metrics.channel'");
  EXPECT_EQ(error("[kubernetes]\npod_resources = \"x\"\n"), "DIR/agent.toml:2:1: unknown key 'kubernetes.pod_resources'");
  EXPECT_EQ(error("[kubernetes]\npod_resources_socket = \"\"\n"),
            "DIR/agent.toml:2:24: 'kubernetes.pod_resources_socket' must not be empty");
  EXPECT_EQ(error("[kubernetes]\npod_resources_interval = \"500ms\"\n"),
            "DIR/agent.toml:2:26: 'kubernetes.pod_resources_interval' must be \"0s\" (off) or at least 1s");
  EXPECT_EQ(error("[kubernetes]\npod_resources_socket = \"/" + std::string(107, 'a') + "\"\n"),
            "DIR/agent.toml:2:24: 'kubernetes.pod_resources_socket' is 108 bytes long; a unix socket path holds at most 107");
  EXPECT_EQ(error("[kubernetes]\npod_resources_interval = 10\n"),
            "DIR/agent.toml:2:26: 'kubernetes.pod_resources_interval' must be a duration string such as \"1s\", not an integer");
  // The first unknown key in the file is named, not the first in key order.
  EXPECT_EQ(error("zz = 1\naa = 2\n"), "DIR/agent.toml:1:1: unknown key 'zz'");
}

TEST_F(AgentConfigTest, WrongTypes) {
  EXPECT_EQ(error("[detect]\nwindow = \"3\"\n"), "DIR/agent.toml:2:10: 'detect.window' must be an integer, not a string");
  EXPECT_EQ(error("[detect]\nseed = 1.5\n"), "DIR/agent.toml:2:8: 'detect.seed' must be an integer, not a float");
  EXPECT_EQ(error("listen = 9797\n"), "DIR/agent.toml:1:10: 'listen' must be a string, not an integer");
  EXPECT_EQ(error("interval = 1\n"),
            "DIR/agent.toml:1:12: 'interval' must be a duration string such as \"1s\", not an integer");
  EXPECT_EQ(error("probes = \"proc.*\"\n"),
            "DIR/agent.toml:1:10: 'probes' must be an array of strings, not a string");
  EXPECT_EQ(error("exclude = [\"a\", 2]\n"), "DIR/agent.toml:1:17: 'exclude[1]' must be a string, not an integer");
  EXPECT_EQ(error("store = \"/x.db\"\n"), "DIR/agent.toml:1:9: 'store' must be a table, not a string");
  EXPECT_EQ(error("[[detect]]\nwindow = 3\n"), "DIR/agent.toml:1:1: 'detect' must be a table, not an array");
  EXPECT_EQ(error("[detect]\nworkload_changes = \"yes\"\n"),
            "DIR/agent.toml:2:20: 'detect.workload_changes' must be a boolean (true or false), not a string");
  EXPECT_EQ(error("[store]\nmax_size = true\n"),
            "DIR/agent.toml:2:12: 'store.max_size' must be a size string such as \"256MiB\", not a boolean");
  EXPECT_EQ(error("root = \"\"\n"), "DIR/agent.toml:1:8: 'root' must not be empty");
  EXPECT_EQ(error("[metrics]\nchannels = [\"\"]\n"), "DIR/agent.toml:2:13: 'metrics.channels[0]' must not be empty");
}

TEST_F(AgentConfigTest, BadDurationSizeListen) {
  EXPECT_EQ(error("interval = \"1x\"\n"),
            "DIR/agent.toml:1:12: 'interval': bad duration \"1x\" (want e.g. \"500ms\", \"1s\", \"2m\", \"1h\")");
  EXPECT_EQ(error("[detect]\nrefit = \"-5m\"\n").rfind("DIR/agent.toml:2:9: 'detect.refit': bad duration", 0), 0u);
  EXPECT_EQ(error("[store]\nmax_size = \"256MB!\"\n"),
            "DIR/agent.toml:2:12: 'store.max_size': bad size \"256MB!\" (want bytes with an optional unit: "
            "\"256MiB\", \"1GB\", \"4096\")");
  EXPECT_EQ(error("[store]\nmax_size = -1\n"), "DIR/agent.toml:2:12: 'store.max_size' = -1 must not be negative");
  EXPECT_EQ(error("listen = \"localhost\"\n"),
            "DIR/agent.toml:1:10: 'listen': bad address \"localhost\" (want host:port with a port in 1..65535, "
            "e.g. \"127.0.0.1:9797\" or \"[::1]:9797\")");
  EXPECT_EQ(error("listen = \"127.0.0.1:70000\"\n").rfind("DIR/agent.toml:1:10: 'listen': bad address", 0), 0u);
}

TEST_F(AgentConfigTest, RangeChecks) {
  EXPECT_EQ(error("interval = \"999us\"\n"), "DIR/agent.toml:1:12: 'interval' = \"999us\" must be at least 1ms");
  EXPECT_EQ(load("interval = \"1ms\"\n").interval, nanoseconds(1ms));
  EXPECT_EQ(error("[detect]\nwindow = 1\n"), "DIR/agent.toml:2:10: 'detect.window' = 1 is out of range (want at least 2)");
  EXPECT_EQ(load("[detect]\nwindow = 2\n").window, 2u);
  EXPECT_EQ(error("[detect]\nregimes = 65\n"), "DIR/agent.toml:2:11: 'detect.regimes' = 65 is out of range (want 0..64)");
  EXPECT_FALSE(load("[detect]\nworkload_changes = false\n").workload_changes);
  EXPECT_EQ(load("[detect]\nrelearn = \"1m\"\n").relearn, nanoseconds(60s));
  EXPECT_EQ(load("[detect]\nmin_duration = \"0s\"\n").min_duration, nanoseconds(0));
  EXPECT_EQ(error("[detect]\nmin_duration = \"-2s\"\n").substr(0, 53), "DIR/agent.toml:2:16: 'detect.min_duration': bad durat");
  EXPECT_EQ(error("[detect]\nmin_duration = 10\n").substr(0, 42), "DIR/agent.toml:2:16: 'detect.min_duration'");
  EXPECT_EQ(error("[detect]\nstride = 0\n"), "DIR/agent.toml:2:10: 'detect.stride' = 0 is out of range (want at least 1)");
  EXPECT_EQ(error("[detect]\ntrail = 601\n"), "DIR/agent.toml:2:9: 'detect.trail' = 601 is out of range (want 0..600)");
  EXPECT_EQ(error("[detect]\nstride = -3\n"), "DIR/agent.toml:2:10: 'detect.stride' = -3 is out of range (want at least 1)");
  EXPECT_EQ(error("[detect]\nmin_windows = 0\n"),
            "DIR/agent.toml:2:15: 'detect.min_windows' = 0 is out of range (want 1..2147483647)");
  EXPECT_EQ(error("[detect]\nend_after = 4294967296\n"),
            "DIR/agent.toml:2:13: 'detect.end_after' = 4294967296 is out of range (want 1..2147483647)");
  EXPECT_EQ(error("[detect]\nfalse_per_day = 0\n"),
            "DIR/agent.toml:2:17: 'detect.false_per_day' = 0 is out of range (want above 0, at most 1e+06)");
  EXPECT_EQ(error("[detect]\nfalse_per_day = \"1\"\n").substr(0, 40), "DIR/agent.toml:2:17: 'detect.false_per_d");
  EXPECT_EQ(load("[detect]\nfalse_per_day = 3\n").false_per_day, 3.0);
  EXPECT_EQ(error("[detect]\nseed = -1\n"), "DIR/agent.toml:2:8: 'detect.seed' = -1 is out of range (want at least 0)");
  EXPECT_EQ(error("[detect]\nrefit = \"0s\"\n"), "DIR/agent.toml:2:9: 'detect.refit' = \"0s\" must be above 0s");
  EXPECT_EQ(load("[detect]\nwarmup = \"0s\"\n").warmup, nanoseconds(0));
  EXPECT_EQ(error("[store]\nmax_size = \"1023KiB\"\n"),
            "DIR/agent.toml:2:12: 'store.max_size' = 1047552 bytes must be at least 1MiB");
  EXPECT_EQ(load("[store]\nmax_size = \"1MiB\"\n").store_max_bytes, 1u << 20);
  EXPECT_EQ(error("[store]\nmax_age = \"0s\"\n"), "DIR/agent.toml:2:11: 'store.max_age' = \"0s\" must be above 0s");
  EXPECT_EQ(error("sampling_priority = \"high\"\n"),
            "DIR/agent.toml:1:21: 'sampling_priority': \"high\" is neither \"realtime\" nor \"normal\"");
  EXPECT_EQ(error("sampling_priority = true\n"), "DIR/agent.toml:1:21: 'sampling_priority' must be a string, not a boolean");
  EXPECT_TRUE(load("sampling_priority = \"realtime\"\n").realtime_sampling);
  EXPECT_FALSE(load("sampling_priority = \"normal\"\n").realtime_sampling);
}

// The one mapping the agent and `reveal detect --streaming` share: durations in samples at the
// interval, the 10 s start-up settle, the [detect] keys.
TEST(AgentConfig, StreamingOptionsInSamplesOfTheInterval) {
  AgentConfig c;
  StreamingOptions o = streaming_options(c);
  EXPECT_EQ(o.warmup_samples, 120u);
  EXPECT_EQ(o.refit_samples, 300u);
  EXPECT_EQ(o.history_samples, 3600u);
  EXPECT_EQ(o.relearn_samples, 30u);
  EXPECT_EQ(o.settle_samples, 10u);
  EXPECT_TRUE(o.workload_changes);
  c.interval = std::chrono::milliseconds(100);
  c.min_windows = 3;
  c.false_per_day = 0.5;
  c.history = std::chrono::seconds(30);  // shorter than the warm-up: the warm-up wins
  o = streaming_options(c);
  EXPECT_EQ(o.warmup_samples, 1200u);
  EXPECT_EQ(o.settle_samples, 100u);
  EXPECT_EQ(o.history_samples, 1200u);
  EXPECT_EQ(o.detect.incident.min_windows, 3);
  EXPECT_DOUBLE_EQ(o.detect.false_per_day, 0.5);
  EXPECT_EQ(samples_in(std::chrono::milliseconds(50), std::chrono::seconds(1)), 1u) << "at least one sample";
  // A Prometheus scrape's 15 s: 30 s of re-learning and 20 s of warm-up are fewer samples than
  // 4 windows (3 + 3 × 1); both are raised to that, and the detector accepts them.
  c = AgentConfig{};
  c.interval = std::chrono::seconds(15);
  c.warmup = std::chrono::seconds(20);
  o = streaming_options(c);
  EXPECT_EQ(o.relearn_samples, 6u);
  EXPECT_EQ(o.warmup_samples, 6u);
  std::vector<ChannelInfo> ch = {{"t:x", "", Kind::gauge, Subsystem::cpu}};
  RunMetadata meta;
  meta.interval_s = 15;
  EXPECT_NO_THROW(StreamingDetector(meta, ch, o));
}

TEST(AgentConfig, ParseListen) {
  using P = std::pair<std::string, int>;
  EXPECT_EQ(parse_listen("127.0.0.1:9797"), P("127.0.0.1", 9797));
  EXPECT_EQ(parse_listen("0.0.0.0:1"), P("0.0.0.0", 1));
  EXPECT_EQ(parse_listen("localhost:65535"), P("localhost", 65535));
  EXPECT_EQ(parse_listen("[::1]:9797"), P("::1", 9797));
  EXPECT_EQ(parse_listen("[::]:80"), P("::", 80));
  for (const char* bad : {"", "127.0.0.1", "127.0.0.1:", ":9797", "h:0", "h:65536", "h:99999999", "h:-1", "h:+80",
                          "h:80a", "h: 80", "::1:9797", "[::1]", "[::1]9797", "[::1]:", "[]:80", "[::1:80", "a b:80"})
    EXPECT_FALSE(parse_listen(bad).has_value()) << bad;
}

TEST(AgentConfig, RestartOnlyChanges) {
  const AgentConfig a;
  AgentConfig b = a;
  // Every (reload) key may change without a restart.
  b.store_max_age = 1h;
  b.store_max_bytes = 1ull << 30;
  b.metric_channels = {"proc.*"};
  b.refit = 60s;
  b.history = 2h;
  b.min_windows = 5;
  b.end_after = 7;
  EXPECT_TRUE(restart_only_changes(a, b).empty());
  // Every other key needs one, named by its file key path, in file order.
  b.listen = "0.0.0.0:9797";
  b.root = "/host";
  b.interval = 2s;
  b.probes = {"proc.*"};
  b.exclude = {"perf.*"};
  b.config_interval = 10s;
  b.realtime_sampling = false;
  b.store_path = "/tmp/x.db";
  b.window = 4;
  b.stride = 2;
  b.warmup = 1s;
  b.seed = 1;
  b.pod_resources_socket = "/x.sock";
  b.pod_resources_interval = 1s;
  EXPECT_EQ(restart_only_changes(a, b),
            (std::vector<std::string>{"listen", "root", "interval", "probes", "exclude", "config_interval",
                                      "sampling_priority", "store.path", "kubernetes.pod_resources_socket",
                                      "kubernetes.pod_resources_interval", "detect.window", "detect.stride",
                                      "detect.warmup", "detect.seed"}));
  AgentConfig c = a;
  c.window = 5;
  EXPECT_EQ(restart_only_changes(a, c), std::vector<std::string>{"detect.window"});
}

// The documented example in deploy/ loads and spells out exactly the defaults (so the comments
// there and this header cannot drift apart silently).
TEST(AgentConfig, DeployExampleIsTheDefaults) {
  const fs::path example = fs::path(REVEAL_FIXTURES_DIR) / ".." / ".." / "deploy" / "reveal-agent.toml";
  ASSERT_TRUE(fs::exists(example)) << example;
  AgentConfig sentinel;
  sentinel.listen = "192.0.2.1:1";
  sentinel.root = "/nonexistent";
  sentinel.interval = 7s;
  sentinel.config_interval = 7s;
  sentinel.realtime_sampling = false;
  sentinel.store_path = "/nonexistent.db";
  sentinel.store_max_age = 7s;
  sentinel.store_max_bytes = 7ull << 20;
  sentinel.metric_channels = {};
  sentinel.window = 7;
  sentinel.stride = 7;
  sentinel.warmup = 7s;
  sentinel.refit = 7s;
  sentinel.history = 7s;
  sentinel.min_windows = 7;
  sentinel.end_after = 7;
  sentinel.seed = 7;
  sentinel.workload_changes = false;
  sentinel.relearn = 7s;
  sentinel.regimes = 7;
  // Every key is set in the file (none falls back to the sentinel base), and to its default.
  expect_defaults(load_agent_config(example, sentinel));
}

}  // namespace
}  // namespace reveal
