// `reveal agent` configuration: the TOML file over defaults (contract in reveal/agent_config.h).
// Every error is one line that names the file and, where toml++ gives one, the line and column
// of the offending key or value.
#include "reveal/agent_config.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "reveal/streaming.h"
#include "reveal/units.h"

namespace reveal {
namespace {

using std::chrono::nanoseconds;

std::string one_line(std::string_view s) {
  std::string out(s);
  std::replace_if(out.begin(), out.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string_view type_name(toml::node_type t) {
  switch (t) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

bool before(const toml::source_position& a, const toml::source_position& b) {
  return a.line != b.line ? a.line < b.line : a.column < b.column;
}

// Reads one file's tables into an AgentConfig; throws ConfigError with the file's position.
class Loader {
 public:
  explicit Loader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const toml::source_region& at, std::string_view what) const {
    if (at.begin.line > 0)
      throw ConfigError(fmt::format("{}:{}:{}: {}", file_, at.begin.line, at.begin.column, one_line(what)));
    throw ConfigError(fmt::format("{}: {}", file_, one_line(what)));
  }

  // Rejects keys outside `known`; the first one in the file is named, with its table path.
  void check_keys(const toml::table& t, std::string_view prefix,
                  std::initializer_list<std::string_view> known) const {
    const toml::key* first = nullptr;
    for (auto&& [k, v] : t) {
      if (std::find(known.begin(), known.end(), k.str()) != known.end()) continue;
      if (!first || before(k.source().begin, first->source().begin)) first = &k;
    }
    if (first) fail(first->source(), fmt::format("unknown key '{}{}'", prefix, first->str()));
  }

  const toml::table* table(const toml::table& t, std::string_view key) const {
    const toml::node* n = t.get(key);
    if (!n) return nullptr;
    if (!n->is_table()) wrong_type(*n, key, "a table");
    return n->as_table();
  }

  void string(const toml::table& t, std::string_view path, std::string_view key, std::string& out) const {
    const toml::node* n = t.get(key);
    if (!n) return;
    const std::string name = fmt::format("{}{}", path, key);
    if (!n->is_string()) wrong_type(*n, name, "a string");
    std::string v = n->as_string()->get();
    if (v.empty()) fail(n->source(), fmt::format("'{}' must not be empty", name));
    out = std::move(v);
  }

  void strings(const toml::table& t, std::string_view path, std::string_view key,
               std::vector<std::string>& out) const {
    const toml::node* n = t.get(key);
    if (!n) return;
    const std::string name = fmt::format("{}{}", path, key);
    if (!n->is_array()) wrong_type(*n, name, "an array of strings");
    std::vector<std::string> v;
    const toml::array& a = *n->as_array();
    for (std::size_t i = 0; i < a.size(); ++i) {
      const toml::node& e = a[i];
      const std::string ename = fmt::format("{}[{}]", name, i);
      if (!e.is_string()) wrong_type(e, ename, "a string");
      if (e.as_string()->get().empty()) fail(e.source(), fmt::format("'{}' must not be empty", ename));
      v.push_back(e.as_string()->get());
    }
    out = std::move(v);
  }

  // A duration string of at least `min`; `min_text` says the bound ("at least 1ms").
  void duration(const toml::table& t, std::string_view path, std::string_view key, nanoseconds& out,
                nanoseconds min, std::string_view min_text) const {
    const toml::node* n = t.get(key);
    if (!n) return;
    const std::string name = fmt::format("{}{}", path, key);
    if (!n->is_string()) wrong_type(*n, name, "a duration string such as \"1s\"");
    const std::string& s = n->as_string()->get();
    const auto d = parse_duration(s);
    if (!d)
      fail(n->source(), fmt::format("'{}': bad duration \"{}\" (want e.g. \"500ms\", \"1s\", \"2m\", \"1h\")",
                                    name, s));
    if (*d < min) fail(n->source(), fmt::format("'{}' = \"{}\" must be {}", name, s, min_text));
    out = *d;
  }

  void boolean(const toml::table& t, std::string_view path, std::string_view key, bool& out) const {
    const toml::node* n = t.get(key);
    if (!n) return;
    if (!n->is_boolean()) wrong_type(*n, fmt::format("{}{}", path, key), "a boolean (true or false)");
    out = n->as_boolean()->get();
  }

  // An integer in lo..hi.
  template <typename T>
  void integer(const toml::table& t, std::string_view path, std::string_view key, T& out, std::int64_t lo,
               std::int64_t hi) const {
    const toml::node* n = t.get(key);
    if (!n) return;
    const std::string name = fmt::format("{}{}", path, key);
    if (!n->is_integer()) wrong_type(*n, name, "an integer");
    const std::int64_t v = n->as_integer()->get();
    if (v < lo || v > hi)
      fail(n->source(), hi == std::numeric_limits<std::int64_t>::max()
                            ? fmt::format("'{}' = {} is out of range (want at least {})", name, v, lo)
                            : fmt::format("'{}' = {} is out of range (want {}..{})", name, v, lo, hi));
    out = static_cast<T>(v);
  }

  // A number (float or integer) in (lo_exclusive, hi].
  void number(const toml::table& t, std::string_view path, std::string_view key, double& out, double lo_exclusive,
              double hi) const {
    const toml::node* n = t.get(key);
    if (!n) return;
    const std::string name = fmt::format("{}{}", path, key);
    double v = 0;
    if (n->is_floating_point()) v = n->as_floating_point()->get();
    else if (n->is_integer()) v = double(n->as_integer()->get());
    else wrong_type(*n, name, "a number");
    if (!(v > lo_exclusive && v <= hi))
      fail(n->source(), fmt::format("'{}' = {} is out of range (want above {:g}, at most {:g})", name, v, lo_exclusive, hi));
    out = v;
  }

  // A size string ("256MiB") or an integer number of bytes; at least `min` bytes.
  void size(const toml::table& t, std::string_view path, std::string_view key, std::uint64_t& out,
            std::uint64_t min, std::string_view min_text) const {
    const toml::node* n = t.get(key);
    if (!n) return;
    const std::string name = fmt::format("{}{}", path, key);
    std::uint64_t v = 0;
    if (n->is_integer()) {
      const std::int64_t i = n->as_integer()->get();
      if (i < 0) fail(n->source(), fmt::format("'{}' = {} must not be negative", name, i));
      v = static_cast<std::uint64_t>(i);
    } else if (n->is_string()) {
      const auto s = parse_size(n->as_string()->get());
      if (!s)
        fail(n->source(), fmt::format("'{}': bad size \"{}\" (want bytes with an optional unit: \"256MiB\", "
                                      "\"1GB\", \"4096\")",
                                      name, n->as_string()->get()));
      v = *s;
    } else {
      wrong_type(*n, name, "a size string such as \"256MiB\"");
    }
    if (v < min) fail(n->source(), fmt::format("'{}' = {} bytes must be {}", name, v, min_text));
    out = v;
  }

 private:
  [[noreturn]] void wrong_type(const toml::node& n, std::string_view name, std::string_view want) const {
    fail(n.source(), fmt::format("'{}' must be {}, not {}", name, want, type_name(n.type())));
  }

  std::string file_;
};

std::string read_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(name.c_str(), "rb"), &std::fclose);
  if (!f) throw ConfigError(fmt::format("{}: cannot read: {}", name, std::strerror(errno)));
  std::string text;
  char buf[65536];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f.get())) > 0) text.append(buf, got);
  if (std::ferror(f.get())) throw ConfigError(fmt::format("{}: cannot read: {}", name, std::strerror(errno)));
  return text;
}

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

}  // namespace

AgentConfig load_agent_config(const std::filesystem::path& path, const AgentConfig& base) {
  const std::string file = path.string();
  const std::string text = read_file(path);
  toml::table doc;
  try {
    doc = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    Loader(file).fail(e.source(), e.description());
  }

  Loader in(file);
  AgentConfig c = base;
  in.check_keys(doc, "",
                {"listen", "root", "interval", "probes", "exclude", "config_interval", "sampling_priority", "store",
                 "metrics", "detect", "kubernetes"});
  in.string(doc, "", "listen", c.listen);
  if (const toml::node* n = doc.get("listen"); n && !parse_listen(c.listen))
    in.fail(n->source(), fmt::format("'listen': bad address \"{}\" (want host:port with a port in 1..65535, "
                                     "e.g. \"127.0.0.1:9797\" or \"[::1]:9797\")",
                                     c.listen));
  in.string(doc, "", "root", c.root);
  in.duration(doc, "", "interval", c.interval, std::chrono::milliseconds(1), "at least 1ms");
  in.strings(doc, "", "probes", c.probes);
  in.strings(doc, "", "exclude", c.exclude);
  in.duration(doc, "", "config_interval", c.config_interval, nanoseconds(1), "above 0s");
  if (const toml::node* n = doc.get("sampling_priority")) {
    std::string v;
    in.string(doc, "", "sampling_priority", v);
    if (v != "realtime" && v != "normal")
      in.fail(n->source(), fmt::format("'sampling_priority': \"{}\" is neither \"realtime\" nor \"normal\"", v));
    c.realtime_sampling = v == "realtime";
  }

  if (const toml::table* t = in.table(doc, "store")) {
    in.check_keys(*t, "store.", {"path", "max_age", "max_size"});
    in.string(*t, "store.", "path", c.store_path);
    in.duration(*t, "store.", "max_age", c.store_max_age, nanoseconds(1), "above 0s");
    in.size(*t, "store.", "max_size", c.store_max_bytes, 1ull << 20, "at least 1MiB");
  }
  if (const toml::table* t = in.table(doc, "metrics")) {
    in.check_keys(*t, "metrics.", {"channels"});
    in.strings(*t, "metrics.", "channels", c.metric_channels);
  }
  if (const toml::table* t = in.table(doc, "kubernetes")) {
    in.check_keys(*t, "kubernetes.", {"pod_resources_socket", "pod_resources_interval"});
    in.string(*t, "kubernetes.", "pod_resources_socket", c.pod_resources_socket);
    in.duration(*t, "kubernetes.", "pod_resources_interval", c.pod_resources_interval, nanoseconds(0), "at least 0s");
    if (const toml::node* n = t->get("pod_resources_interval");
        n && c.pod_resources_interval.count() > 0 && c.pod_resources_interval < std::chrono::seconds(1))
      in.fail(n->source(), "'kubernetes.pod_resources_interval' must be \"0s\" (off) or at least 1s");
    // sockaddr_un holds 107 bytes and a NUL.
    if (const toml::node* n = t->get("pod_resources_socket"); n && c.pod_resources_socket.size() > 107)
      in.fail(n->source(), fmt::format("'kubernetes.pod_resources_socket' is {} bytes long; a unix socket path holds "
                                       "at most 107", c.pod_resources_socket.size()));
  }
  if (const toml::table* t = in.table(doc, "detect")) {
    in.check_keys(*t, "detect.",
                  {"window", "stride", "trail", "warmup", "refit", "history", "min_windows", "end_after", "min_duration", "false_per_day",
                   "seed", "workload_changes", "relearn", "regimes"});
    in.integer(*t, "detect.", "window", c.window, 2, kInt64Max);
    in.integer(*t, "detect.", "stride", c.stride, 1, kInt64Max);
    in.integer(*t, "detect.", "trail", c.trail, 0, kMaxTrail);
    in.duration(*t, "detect.", "warmup", c.warmup, nanoseconds(0), "at least 0s");
    in.duration(*t, "detect.", "refit", c.refit, nanoseconds(1), "above 0s");
    in.duration(*t, "detect.", "history", c.history, nanoseconds(1), "above 0s");
    in.integer(*t, "detect.", "min_windows", c.min_windows, 1, kIntMax);
    in.integer(*t, "detect.", "end_after", c.end_after, 1, kIntMax);
    in.duration(*t, "detect.", "min_duration", c.min_duration, nanoseconds(0), "at least 0s");
    in.number(*t, "detect.", "false_per_day", c.false_per_day, 0.0, 1e6);
    in.integer(*t, "detect.", "seed", c.seed, 0, kInt64Max);
    in.boolean(*t, "detect.", "workload_changes", c.workload_changes);
    in.duration(*t, "detect.", "relearn", c.relearn, nanoseconds(1), "above 0s");
    in.integer(*t, "detect.", "regimes", c.regimes, 0, 64);
  }
  return c;
}

std::optional<std::pair<std::string, int>> parse_listen(std::string_view listen) {
  std::string_view host, port;
  if (!listen.empty() && listen.front() == '[') {  // [v6-address]:port
    const auto close = listen.find(']');
    if (close == std::string_view::npos || close + 1 >= listen.size() || listen[close + 1] != ':')
      return std::nullopt;
    host = listen.substr(1, close - 1);
    port = listen.substr(close + 2);
  } else {
    const auto colon = listen.find(':');
    // A bare IPv6 address is ambiguous ("::1:80"): it must be written in brackets.
    if (colon == std::string_view::npos || listen.find(':', colon + 1) != std::string_view::npos)
      return std::nullopt;
    host = listen.substr(0, colon);
    port = listen.substr(colon + 1);
  }
  if (host.empty() || port.empty() || port.size() > 5) return std::nullopt;
  if (host.find_first_of(" \t[]") != std::string_view::npos) return std::nullopt;
  int p = 0;
  for (char ch : port) {
    if (ch < '0' || ch > '9') return std::nullopt;
    p = p * 10 + (ch - '0');
  }
  if (p < 1 || p > 65535) return std::nullopt;
  return std::pair<std::string, int>(std::string(host), p);
}

std::vector<std::string> restart_only_changes(const AgentConfig& a, const AgentConfig& b) {
  std::vector<std::string> out;
  auto check = [&](bool differs, const char* key) {
    if (differs) out.emplace_back(key);
  };
  check(a.listen != b.listen, "listen");
  check(a.root != b.root, "root");
  check(a.interval != b.interval, "interval");
  check(a.probes != b.probes, "probes");
  check(a.exclude != b.exclude, "exclude");
  check(a.config_interval != b.config_interval, "config_interval");
  check(a.realtime_sampling != b.realtime_sampling, "sampling_priority");
  check(a.store_path != b.store_path, "store.path");
  check(a.pod_resources_socket != b.pod_resources_socket, "kubernetes.pod_resources_socket");
  check(a.pod_resources_interval != b.pod_resources_interval, "kubernetes.pod_resources_interval");
  check(a.window != b.window, "detect.window");
  check(a.stride != b.stride, "detect.stride");
  check(a.trail != b.trail, "detect.trail");
  check(a.warmup != b.warmup, "detect.warmup");
  check(a.seed != b.seed, "detect.seed");
  check(a.workload_changes != b.workload_changes, "detect.workload_changes");
  check(a.relearn != b.relearn, "detect.relearn");
  check(a.regimes != b.regimes, "detect.regimes");
  return out;
}

std::size_t samples_in(std::chrono::nanoseconds d, std::chrono::nanoseconds interval) {
  return std::size_t(std::max<std::int64_t>(1, d.count() / std::max<std::int64_t>(1, interval.count())));
}

IncidentRule incident_rule(const AgentConfig& c) {
  IncidentRule r;
  r.min_windows = c.min_windows;
  r.end_after = c.end_after;
  r.min_duration_s = double(c.min_duration.count()) * 1e-9;
  return r;
}

StreamingOptions streaming_options(const AgentConfig& c) {
  StreamingOptions o;
  o.detect.window = {c.window, c.stride, c.trail};
  o.detect.incident = incident_rule(c);
  o.detect.seed = c.seed;
  o.detect.false_per_day = c.false_per_day;
  // The detector learns from at least 4 windows: at a coarse interval (15 s, a Prometheus
  // scrape's, where the default 30 s of re-learning is 2 samples) a shorter warm-up or
  // re-learning is raised to that.
  const std::size_t four_windows = c.window + 3 * std::max<std::size_t>(c.stride, 1);
  o.warmup_samples = std::max(samples_in(c.warmup, c.interval), four_windows);
  o.refit_samples = samples_in(c.refit, c.interval);
  o.history_samples = std::max(samples_in(c.history, c.interval), o.warmup_samples);
  o.workload_changes = c.workload_changes;
  o.relearn_samples = std::max(samples_in(c.relearn, c.interval), four_windows);
  o.regimes_kept = c.regimes;
  // The agent's own start-up (loading, opening probes, the first store pages) is not the
  // host's normal behaviour: the first 10 s stay out of the reference.
  o.settle_samples = samples_in(std::chrono::seconds(10), c.interval);
  return o;
}

}  // namespace reveal
