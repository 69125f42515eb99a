// Prometheus fleet reader; contract in include/reveal/prometheus_source.h.
#include "fleet/prometheus_source.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "reveal/agent.h"
#include "reveal/units.h"

namespace reveal {
namespace {

using nlohmann::json;
constexpr std::int64_t kMs = 1'000'000;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_metric_name(std::string_view s) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// Rounds to the nearest millisecond (Prometheus's time resolution).
std::int64_t round_ms(std::int64_t ns) {
  const std::int64_t q = ns / kMs, r = ns % kMs;
  if (r >= kMs / 2) return q + 1;
  if (r <= -kMs / 2) return q - 1;
  return q;
}

// Unix milliseconds as the API's decimal seconds, "1700000000.250".
std::string api_time(std::int64_t ms) {
  return ms < 0 ? fmt::format("-{}.{:03}", -ms / 1000, -ms % 1000) : fmt::format("{}.{:03}", ms / 1000, ms % 1000);
}

// The first line of an answer, at most 160 characters, for an error message.
std::string first_line(std::string_view body) {
  body = trim(body);
  body = body.substr(0, std::min(body.find('\n'), std::size_t(160)));
  return body.empty() ? "empty answer" : std::string(body);
}

std::string describe(httplib::Error e, double read_timeout_s) {
  switch (e) {
    case httplib::Error::Connection: return "cannot connect (connection refused, or host unreachable)";
    case httplib::Error::ConnectionTimeout: return "connection timed out";
    case httplib::Error::Read:
      return fmt::format("no complete answer (connection closed, or nothing within {:g} s)", read_timeout_s);
    case httplib::Error::Write: return "cannot send the request (connection closed)";
    case httplib::Error::SSLConnection: return "TLS handshake failed";
    case httplib::Error::SSLLoadingCerts: return "cannot load the system's TLS certificates";
    case httplib::Error::SSLServerVerification: return "TLS certificate verification failed";
    case httplib::Error::Canceled: return "request cancelled";
    default: return "request failed (" + httplib::to_string(e) + ")";
  }
}

// Parses a JSON body; `what` names the answer in the error.
json parse_json(std::string_view body, const std::string& where, const char* what) {
  try {
    return json::parse(body);
  } catch (const json::parse_error& e) {
    throw PrometheusError(fmt::format("{}: malformed JSON in the {} answer at byte {}", where, what, e.byte));
  }
}

// Checks "status":"success" and returns "data".
const json& api_data(const json& j, const std::string& where, const char* what) {
  if (!j.is_object()) throw PrometheusError(fmt::format("{}: the {} answer is not a JSON object", where, what));
  const auto st = j.find("status");
  if (st == j.end() || !st->is_string())
    throw PrometheusError(fmt::format("{}: the {} answer has no \"status\"", where, what));
  if (*st != "success") {
    const auto et = j.find("errorType"), er = j.find("error");
    throw PrometheusError(fmt::format("{}: {}: {}", where,
                                      et != j.end() && et->is_string() ? et->get<std::string>() : "error",
                                      er != j.end() && er->is_string() ? er->get<std::string>() : "no message"));
  }
  const auto d = j.find("data");
  if (d == j.end()) throw PrometheusError(fmt::format("{}: the {} answer has no \"data\"", where, what));
  return *d;
}

std::string label(const json& metric, const char* name) {
  const auto it = metric.find(name);
  return it != metric.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string add_matcher(std::string_view selector, std::string_view matcher) {
  const std::string_view s = trim(selector);
  const auto bad = [&] {
    return PrometheusError("'" + std::string(selector) +
                           "' is not a series selector (e.g. {job=\"reveal\"} or metric{label=\"value\"})");
  };
  if (s.empty()) return "{" + std::string(matcher) + "}";
  if (s.back() != '}') {
    if (!is_metric_name(s)) throw bad();
    return std::string(s) + "{" + std::string(matcher) + "}";
  }
  const std::size_t open = s.find('{');
  if (open == std::string_view::npos) throw bad();
  const std::string_view name = trim(s.substr(0, open));
  if (!name.empty() && !is_metric_name(name)) throw bad();
  const std::string_view inner = trim(s.substr(open + 1, s.size() - open - 2));
  char quote = 0;
  for (std::size_t i = 0; i < inner.size(); ++i) {
    const char c = inner[i];
    if (quote) {
      if (c == '\\' && quote != '`') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'' || c == '`') {
      quote = c;
    } else if (c == '{' || c == '}' || c == '[' || c == ']' || c == '(' || c == ')') {
      throw bad();
    }
  }
  if (quote) throw bad();
  std::string out(name);
  out += '{';
  out += inner;
  if (!inner.empty() && inner.back() != ',') out += ',';
  out += matcher;
  out += '}';
  return out;
}

namespace fleet {

Endpoint parse_url(std::string_view url) {
  const auto bad = [&](const char* why) {
    return PrometheusError(fmt::format("Prometheus URL '{}' {}", url, why));
  };
  const std::size_t sep = url.find("://");
  if (sep == std::string_view::npos) throw bad("must start with http:// or https://");
  std::string scheme(url.substr(0, sep));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (scheme != "http" && scheme != "https") throw bad("must start with http:// or https://");
  std::string_view rest = url.substr(sep + 3);
  if (rest.find_first_of("?#") != std::string_view::npos) throw bad("must not have a query string or fragment");
  const std::size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (authority.empty()) throw bad("has no host");
  if (authority.find('@') != std::string_view::npos) throw bad("must not carry credentials");
  // An optional ":port" after the host (or after "]" of an IPv6 literal).
  const std::size_t colon = authority.rfind(':');
  const std::size_t bracket = authority.rfind(']');
  if (colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket)) {
    const std::string_view port = authority.substr(colon + 1);
    if (colon == 0) throw bad("has no host");
    if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::atoi(std::string(port).c_str()) < 1 || std::atoi(std::string(port).c_str()) > 65535)
      throw bad("has a bad port");
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  return {scheme + "://" + std::string(authority), std::string(path)};
}

Grid make_grid(std::int64_t start_ns, std::int64_t end_ns, std::int64_t step_ns) {
  Grid g;
  const std::int64_t step_ms = round_ms(step_ns);
  if (step_ms < 1) throw PrometheusError("the step must be at least 1 ms");
  const std::int64_t a = round_ms(start_ns), b = round_ms(end_ns);
  if (b < a) throw PrometheusError("the end of the range (" + format_utc(end_ns) + ") is before its start (" +
                                   format_utc(start_ns) + ")");
  g.start_ns = a * kMs;
  g.step_ns = step_ms * kMs;
  g.n = std::size_t((b - a) / step_ms) + 1;
  return g;
}

std::vector<std::pair<std::size_t, std::size_t>> split_grid(const Grid& g, std::size_t max_steps) {
  max_steps = std::max<std::size_t>(max_steps, 1);
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t i = 0; i < g.n; i += max_steps) out.emplace_back(i, std::min(g.n, i + max_steps) - 1);
  return out;
}

std::size_t steps_per_request(std::size_t n_series) {
  return std::clamp<std::size_t>(kPointsPerRequest / std::max<std::size_t>(n_series, 1), 1, kMaxStepsPerRequest);
}

std::string prometheus_error_text(std::string_view body) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return {};
  const auto st = j.find("status");
  if (st == j.end() || *st != "error") return {};
  return label(j, "errorType") + ": " + label(j, "error");
}

void MatrixAssembler::add(std::string_view body, const std::string& where) {
  const json j = parse_json(body, where, "query_range");
  const json& data = api_data(j, where, "query_range");
  const auto unexpected = [&](const std::string& what) {
    return PrometheusError(fmt::format("{}: unexpected query_range answer: {}", where, what));
  };
  if (!data.is_object() || !data.contains("resultType") || data["resultType"] != "matrix")
    throw unexpected("resultType is not \"matrix\"");
  const auto result = data.find("result");
  if (result == data.end() || !result->is_array()) throw unexpected("no result array");
  for (const json& s : *result) {
    if (!s.is_object()) throw unexpected("a series is not an object");
    const auto metric = s.find("metric");
    const auto values = s.find("values");
    if (metric == s.end() || !metric->is_object() || values == s.end() || !values->is_array())
      throw unexpected("a series lacks \"metric\" or \"values\"");
    std::string channel = label(*metric, "channel");
    if (channel.empty()) continue;  // not a raw Reveal channel
    auto [it, fresh] = series_.try_emplace({label(*metric, "instance"), channel});
    Series& ser = it->second;
    if (fresh) {
      ser.info.name = std::move(channel);
      ser.info.unit = label(*metric, "unit");
      ser.info.subsystem = parse_subsystem(label(*metric, "subsystem")).value_or(Subsystem::system);
      const std::string name = label(*metric, "__name__");
      ser.info.kind = name.size() >= 6 && name.compare(name.size() - 6, 6, "_total") == 0 ? Kind::counter : Kind::gauge;
      ser.v.assign(grid_.n, kNaN);
    }
    for (const json& p : *values) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_number())
        throw unexpected("a point is not [time, \"value\"] in series " + ser.info.name);
      double v;
      if (p[1].is_string()) {
        const std::string& txt = p[1].get_ref<const std::string&>();
        char* end = nullptr;
        v = std::strtod(txt.c_str(), &end);
        if (txt.empty() || end != txt.c_str() + txt.size())
          throw unexpected("value '" + txt + "' is not a number in series " + ser.info.name);
      } else if (p[1].is_number()) {
        v = p[1].get<double>();
      } else {
        throw unexpected("a point is not [time, \"value\"] in series " + ser.info.name);
      }
      v /= prometheus_unit_scale(ser.info);  // exported in seconds, stored in the channel's unit
      const std::int64_t t_ns = std::llround(p[0].get<double>() * 1000.0) * kMs;
      const double k = std::round(double(t_ns - grid_.start_ns) / double(grid_.step_ns));
      if (k < 0 || k >= double(grid_.n)) continue;
      double& slot = ser.v[std::size_t(k)];
      if (std::isnan(slot)) slot = v;
    }
  }
}

std::vector<Recording> MatrixAssembler::finish(const std::string& command) {
  std::vector<Recording> out;
  for (auto it = series_.begin(); it != series_.end();) {
    const std::string& instance = it->first.first;
    auto end = it;
    std::size_t first = grid_.n, last = 0;
    for (; end != series_.end() && end->first.first == instance; ++end)
      for (std::size_t k = 0; k < grid_.n; ++k)
        if (std::isfinite(end->second.v[k])) {
          first = std::min(first, k);
          last = std::max(last, k);
        }
    if (first < grid_.n) {
      // Repeated scrapes: a step whose every value equals the previous kept step's is the same
      // sample seen again (the server fills a step with the last sample up to 5 minutes old;
      // a scrape can land twice between two agent samples). Only when some channel changes at
      // most steps (a tick counter), so that identical steps cannot be genuine.
      std::vector<std::size_t> keep;
      keep.reserve(last - first + 1);
      std::vector<char> ticks;  // per channel of this host
      for (auto c = it; c != end; ++c) {
        std::size_t pairs = 0, moves = 0;
        for (std::size_t k = first + 1; k <= last; ++k)
          if (std::isfinite(c->second.v[k]) && std::isfinite(c->second.v[k - 1])) {
            ++pairs;
            moves += c->second.v[k] != c->second.v[k - 1];
          }
        ticks.push_back(pairs > 0 && moves * 2 > pairs);
      }
      const bool any_tick = std::find(ticks.begin(), ticks.end(), 1) != ticks.end();
      for (std::size_t k = first; k <= last; ++k) {
        bool repeat = any_tick && !keep.empty();
        std::size_t j = 0;
        for (auto c = it; repeat && c != end; ++c, ++j) {
          const double x = c->second.v[k], y = c->second.v[keep.back()];
          // A tick channel must be there and unchanged; the others equal or both missing.
          repeat = ticks[j] ? std::isfinite(x) && x == y : x == y || (std::isnan(x) && std::isnan(y));
        }
        if (!repeat) keep.push_back(k);
      }
      Recording r;
      r.meta.hostname = instance.empty() ? "(no instance)" : instance;
      r.meta.interval_s = double(grid_.step_ns) * 1e-9;
      r.meta.command = command;
      r.meta.root = "";
      r.meta.complete = true;
      const std::size_t rows = keep.size();
      const auto cols = std::size_t(std::distance(it, end));
      r.values = Matrix(rows, cols, kNaN);
      r.t_unix_ns.resize(rows);
      for (std::size_t k = 0; k < rows; ++k) r.t_unix_ns[k] = grid_.start_ns + std::int64_t(keep[k]) * grid_.step_ns;
      r.meta.start_unix_ns = r.t_unix_ns.front();
      r.meta.end_unix_ns = r.t_unix_ns.back();
      std::size_t j = 0;
      for (auto c = it; c != end; ++c, ++j) {
        for (std::size_t k = 0; k < rows; ++k) r.values(k, j) = c->second.v[keep[k]];
        std::vector<double>().swap(c->second.v);
        r.channels.push_back(std::move(c->second.info));
      }
      out.push_back(std::move(r));
    }
    it = end;
  }
  series_.clear();
  return out;
}

}  // namespace fleet

std::vector<Recording> read_prometheus(const PrometheusQuery& q) {
  const fleet::Endpoint ep = fleet::parse_url(q.url);
  const std::string selector = add_matcher(q.selector, "channel!=\"\"");
  const fleet::Grid g = fleet::make_grid(q.start_unix_ns, q.end_unix_ns, q.step_ns);
  const std::string where = "Prometheus at " + q.url;
  httplib::Client cli(ep.origin);
  if (!cli.is_valid()) throw PrometheusError(where + ": cannot create an HTTP client for " + ep.origin);
  cli.set_connection_timeout(10);
  const double timeout = q.timeout_s > 0 ? q.timeout_s : 60;
  cli.set_read_timeout(std::chrono::milliseconds(std::llround(timeout * 1000)));
  cli.set_follow_location(true);

  const auto get = [&](const std::string& path, const httplib::Params& params) {
    auto res = cli.Get(ep.prefix + path, params, httplib::Headers{});
    if (!res) throw PrometheusError(fmt::format("{}: {}", where, describe(res.error(), timeout)));
    if (res->status != 200) {
      const std::string api = fleet::prometheus_error_text(res->body);
      throw PrometheusError(fmt::format("{}: HTTP {} for {}: {}", where, res->status, path,
                                        api.empty() ? first_line(res->body) : api));
    }
    return std::move(res->body);
  };
  const std::int64_t first_ms = g.start_ns / kMs, step_ms = g.step_ns / kMs;
  const std::string start = api_time(first_ms), end = api_time(first_ms + std::int64_t(g.n - 1) * step_ms);
  const auto none = [&] {
    return PrometheusError(fmt::format("{}: no series matches {} (raw Reveal channels) between {} and {}", where,
                                       selector, format_utc(g.start_ns),
                                       format_utc(g.start_ns + std::int64_t(g.n - 1) * g.step_ns)));
  };

  // How many series: sizes the requests, and says early when nothing matches.
  const json sj = parse_json(get("/api/v1/series", {{"match[]", selector}, {"start", start}, {"end", end}}), where,
                             "series");
  const json& sdata = api_data(sj, where, "series");
  if (!sdata.is_array()) throw PrometheusError(where + ": unexpected series answer: data is not an array");
  if (sdata.empty()) throw none();
  const std::size_t n_series = sdata.size();
  if (n_series > kMaxPrometheusPoints / g.n)
    throw PrometheusError(fmt::format("{}: {} series × {} steps is more than {} points; narrow the selector or the "
                                      "range, or widen the step",
                                      where, n_series, g.n, kMaxPrometheusPoints));

  fleet::MatrixAssembler assembler(g);
  for (auto [a, b] : fleet::split_grid(g, fleet::steps_per_request(n_series))) {
    const std::string body = get("/api/v1/query_range",
                                 {{"query", selector},
                                  {"start", api_time(first_ms + std::int64_t(a) * step_ms)},
                                  {"end", api_time(first_ms + std::int64_t(b) * step_ms)},
                                  {"step", api_time(step_ms)}});
    assembler.add(body, where);
  }
  std::vector<Recording> hosts = assembler.finish("prometheus " + q.url + " " + q.selector);
  if (hosts.empty()) throw none();
  return hosts;
}

}  // namespace reveal
