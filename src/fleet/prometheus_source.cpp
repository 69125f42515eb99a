// Prometheus fleet reader; contract in include/reveal/prometheus_source.h.
#include "fleet/prometheus_source.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

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

std::string describe(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection: return "cannot connect (connection refused, or host unreachable)";
    case httplib::Error::ConnectionTimeout: return "connection timed out";
    case httplib::Error::Read: return "no complete answer (the connection was closed early, or the answer is not HTTP)";
    case httplib::Error::Write: return "cannot send the request (connection closed)";
    case httplib::Error::SSLConnection: return "TLS handshake failed";
    case httplib::Error::SSLLoadingCerts: return "cannot load the system's TLS certificates";
    case httplib::Error::SSLServerVerification: return "TLS certificate verification failed";
    case httplib::Error::Canceled: return "request cancelled";
    default: return "request failed (" + httplib::to_string(e) + ")";
  }
}

// Where an answer is in the text, for a malformed-JSON message.
PrometheusError malformed(const std::string& where, const char* what, std::size_t byte) {
  return PrometheusError(fmt::format("{}: malformed JSON in the {} answer at byte {}", where, what, byte));
}

// Text from an answer, for a one-line message: control characters replaced, at most `max` bytes.
std::string printable(std::string_view s, std::size_t max = 160) {
  std::string out(s.substr(0, max));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

// The "status", "errorType" and "error" members of an API answer, as a SAX handler meets them.
struct Envelope {
  bool has_status = false;  // "status" is a string
  bool has_data = false;
  std::string status, error_type, error;
  bool failed() const { return has_status && status != "success"; }
  // Throws for no status or a status other than "success" (the server's error type and message).
  void check(const std::string& where, const char* what) const {
    if (!has_status) throw PrometheusError(fmt::format("{}: the {} answer has no \"status\"", where, what));
    if (failed())
      throw PrometheusError(fmt::format("{}: {}: {}", where, error_type.empty() ? "error" : printable(error_type),
                                        error.empty() ? "no message" : printable(error, 400)));
    if (!has_data) throw PrometheusError(fmt::format("{}: the {} answer has no \"data\"", where, what));
  }
  // A top-level member `key` with a string value.
  void member(const std::string& key, const std::string& value) {
    if (key == "status") {
      has_status = true;
      status = value;
    } else if (key == "errorType") {
      error_type = value;
    } else if (key == "error") {
      error = value;
    }
  }
};


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
  return printable(label(j, "errorType")) + ": " + printable(label(j, "error"), 400);
}

std::size_t max_range_answer_bytes(std::size_t series, std::size_t steps) {
  // In doubles: series × steps × 128 overflows size_t long before it matters.
  const double bytes = double(kAnswerBaseBytes) +
                       double(series) * (double(kBytesPerSeries) + double(steps) * double(kBytesPerPoint));
  return bytes >= double(kMaxAnswerBytes) ? kMaxAnswerBytes : std::size_t(bytes);
}

std::size_t series_allowed(std::size_t announced, std::size_t cap) {
  const std::size_t more = announced / 4 + kNewSeriesSlack;
  return std::min(cap, announced > SIZE_MAX - more ? SIZE_MAX : announced + more);
}

std::size_t max_series_answer_bytes(std::size_t max_series) {
  const double bytes = double(kAnswerBaseBytes) + (double(max_series) + 1) * double(kBytesPerSeries);
  return bytes >= double(kMaxAnswerBytes) ? kMaxAnswerBytes : std::size_t(bytes);
}

namespace {

struct Origin {
  std::string scheme, host;
  int port = 0;
};

// "host[:port]" of `scheme` (lower-cased host; the scheme's port when none). Nothing for a bad port.
std::optional<Origin> split_authority(std::string scheme, std::string_view authority) {
  Origin o;
  o.scheme = std::move(scheme);
  o.port = o.scheme == "https" ? 443 : 80;
  const std::size_t colon = authority.rfind(':'), bracket = authority.rfind(']');
  std::string_view host = authority;
  if (colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket)) {
    const std::string_view port = authority.substr(colon + 1);
    host = authority.substr(0, colon);
    if (!port.empty()) {
      if (port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
      o.port = std::atoi(std::string(port).c_str());
    }
  }
  o.host.assign(host);
  std::transform(o.host.begin(), o.host.end(), o.host.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return o;
}

}  // namespace

std::string redirect_target(std::string_view origin, std::string_view path, std::string_view location) {
  const std::string shown = printable(trim(location));
  const std::string_view loc = trim(location);
  if (loc.empty()) throw PrometheusError("a redirect without a Location");
  const auto unusable = [&] { return PrometheusError("a redirect to '" + shown + "', not a usable URL"); };
  for (char c : loc)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) throw unusable();
  const std::size_t osep = origin.find("://");
  const auto here = split_authority(std::string(origin.substr(0, osep)), origin.substr(osep + 3));
  if (!here) throw unusable();
  const std::string_view no_fragment = loc.substr(0, loc.find('#'));

  // The scheme, if any: letters, digits, '+', '-', '.' before the first ':' (and before '/', '?').
  std::string scheme;
  std::string_view rest;
  const std::size_t colon = no_fragment.find(':');
  const std::size_t delim = no_fragment.find_first_of("/?");
  if (colon != std::string_view::npos && colon > 0 && (delim == std::string_view::npos || colon < delim) &&
      std::isalpha(static_cast<unsigned char>(no_fragment[0]))) {
    scheme.assign(no_fragment.substr(0, colon));
    std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    rest = no_fragment.substr(colon + 1);
    if (rest.substr(0, 2) != "//") throw unusable();
  } else if (no_fragment.substr(0, 2) == "//") {
    scheme = here->scheme;
    rest = no_fragment;
  } else {
    // Same origin: an absolute path, a query, or a path relative to the directory of `path`.
    const std::string_view p = path.substr(0, path.find('?'));
    if (no_fragment.empty()) return std::string(p.empty() ? "/" : p);
    if (no_fragment.front() == '/') return std::string(no_fragment);
    if (no_fragment.front() == '?') return std::string(p.empty() ? "/" : p) + std::string(no_fragment);
    const std::size_t slash = p.rfind('/');
    return (slash == std::string_view::npos ? std::string("/") : std::string(p.substr(0, slash + 1))) +
           std::string(no_fragment);
  }
  rest.remove_prefix(2);
  const std::size_t end = rest.find_first_of("/?");
  const std::string_view authority = rest.substr(0, end);
  std::string target(end == std::string_view::npos ? std::string_view() : rest.substr(end));
  if (target.empty() || target.front() == '?') target.insert(0, "/");
  const auto there = (scheme == "http" || scheme == "https") && !authority.empty()
                         ? split_authority(scheme, authority)
                         : std::optional<Origin>(Origin{scheme, std::string(authority), 0});
  if (!there) throw unusable();
  if (here->scheme == "https" && there->scheme == "http")
    throw PrometheusError("refusing the redirect to '" + shown + "': it drops TLS (https to " + there->scheme + ")");
  if (there->scheme != here->scheme || there->host != here->host || there->port != here->port)
    throw PrometheusError("refusing the redirect to '" + shown + "': it leaves " + std::string(origin) +
                          " (redirects are followed only within the same scheme, host and port)");
  return target;
}

namespace {

// Streaming (SAX) handler for an /api/v1/series answer: counts the elements of "data".
struct SeriesCounter {
  explicit SeriesCounter(std::size_t max) : max_series(max) {}
  std::size_t max_series;
  Envelope env;
  bool root_seen = false, not_object = false, data_array = false, too_many = false;
  std::size_t depth = 0;  // 1 = inside the top object, 2 = inside "data" (when an array)
  std::size_t skip = 0;   // nesting inside a member we do not look at
  std::size_t count = 0;
  std::string key_;
  std::size_t error_byte = 0;
  bool parse_failed = false;

  // A value (scalar or container start) at the current position; false stops the parse.
  bool value(bool container, bool is_array, const std::string* str) {
    if (skip) {
      skip += container;
      return true;
    }
    if (depth == 0) {
      root_seen = true;
      if (!container || is_array) {
        not_object = true;
        return false;
      }
      depth = 1;
      return true;
    }
    if (depth == 1) {
      if (key_ == "data") {
        env.has_data = true;
        if (container && is_array) {
          data_array = true;
          depth = 2;
          return true;
        }
      } else if (str) {
        env.member(key_, *str);
      }
      skip += container;
      return true;
    }
    // depth 2: one series
    if (++count > max_series) {
      too_many = true;
      return false;
    }
    skip += container;
    return true;
  }
  bool end() {
    if (skip) {
      --skip;
    } else {
      --depth;
    }
    return true;
  }
  bool null() { return value(false, false, nullptr); }
  bool boolean(bool) { return value(false, false, nullptr); }
  bool number_integer(json::number_integer_t) { return value(false, false, nullptr); }
  bool number_unsigned(json::number_unsigned_t) { return value(false, false, nullptr); }
  bool number_float(json::number_float_t, const std::string&) { return value(false, false, nullptr); }
  bool string(std::string& s) { return value(false, false, &s); }
  bool binary(json::binary_t&) { return value(false, false, nullptr); }
  bool start_object(std::size_t) { return value(true, false, nullptr); }
  bool start_array(std::size_t) { return value(true, true, nullptr); }
  bool end_object() { return end(); }
  bool end_array() { return end(); }
  bool key(std::string& k) {
    if (!skip && depth == 1) key_ = k;
    return true;
  }
  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception&) {
    parse_failed = true;
    error_byte = byte;
    return false;
  }
};

}  // namespace

std::size_t count_series(std::string_view body, const std::string& where, std::size_t max_series) {
  SeriesCounter h(max_series);
  json::sax_parse(body.begin(), body.end(), &h);
  if (h.parse_failed) throw malformed(where, "series", h.error_byte);
  if (h.not_object) throw PrometheusError(where + ": the series answer is not a JSON object");
  if (h.env.failed() || !h.too_many) h.env.check(where, "series");
  if (h.too_many) return max_series + 1;
  if (!h.data_array) throw PrometheusError(where + ": unexpected series answer: data is not an array");
  return h.count;
}

// Streaming (SAX) handler for an /api/v1/query_range answer: each series' labels and points are
// collected while it is read and stored in the assembler at its end, so no document is built.
struct MatrixAssembler::RangeHandler {
  enum class Role { root, data, result, series, metric, values, point };
  RangeHandler(MatrixAssembler& a, const std::string& w, std::size_t s) : m(a), where(w), steps(s) {}
  MatrixAssembler& m;
  const std::string& where;
  std::size_t steps;

  std::vector<Role> stack;  // containers we look into (at most 7 deep)
  std::size_t skip = 0;     // nesting inside a member or element we do not look at
  std::string key_;          // the last key of the innermost object
  Envelope env;
  bool not_object = false, data_object = false, result_array = false, result_type_seen = false;
  std::string result_type;
  std::size_t n_series = 0;
  // The series being read.
  bool has_metric = false, has_values = false;
  std::string channel, instance, unit, subsystem, name;
  std::size_t n_points = 0, point_index = 0;
  double point_t = 0, point_v = 0;
  bool point_ok = true;
  std::string point_error;  // the first problem with a point of this series
  std::vector<std::pair<double, double>> points;  // (time in s, value)
  std::string error;        // why the parse stopped early
  bool parse_failed = false;
  std::size_t error_byte = 0;

  PrometheusError unexpected(const std::string& what) const {
    return PrometheusError(fmt::format("{}: unexpected query_range answer: {}", where, what));
  }
  bool stop(std::string why) {
    error = std::move(why);
    return false;
  }
  void bad_point(const std::string& why) {
    point_ok = false;
    if (point_error.empty()) point_error = why;
  }

  // A value (scalar or container start) at the current position. `num` for numbers, `str` for
  // strings; false stops the parse.
  enum class V { other, number, string, object, array };
  bool value(V v, double num = 0, const std::string* str = nullptr) {
    const bool container = v == V::object || v == V::array;
    if (skip) {
      skip += container;
      return true;
    }
    const auto enter = [&](Role r) {
      stack.push_back(r);
      return true;
    };
    const auto ignore = [&] {
      skip += container;
      return true;
    };
    if (stack.empty()) {
      if (v != V::object) {
        not_object = true;
        return stop(where + ": the query_range answer is not a JSON object");
      }
      return enter(Role::root);
    }
    switch (stack.back()) {
      case Role::root:
        if (key_ == "data") {
          env.has_data = true;
          if (v == V::object) {
            data_object = true;
            return enter(Role::data);
          }
        } else if (v == V::string) {
          env.member(key_, *str);
        }
        return ignore();
      case Role::data:
        if (key_ == "resultType" && v == V::string) {
          result_type_seen = true;
          result_type = *str;
        } else if (key_ == "result" && v == V::array) {
          result_array = true;
          return enter(Role::result);
        }
        return ignore();
      case Role::result:
        if (v != V::object) return stop(unexpected("a series is not an object").what());
        if (++n_series > m.max_series_)
          return stop(fmt::format("{}: the query_range answer holds more than {} series ({} announced by "
                                  "/api/v1/series, and room for series new since)",
                                  where, m.max_series_, m.announced_));
        has_metric = has_values = false;
        channel.clear(), instance.clear(), unit.clear(), subsystem.clear(), name.clear();
        n_points = 0;
        point_error.clear();
        points.clear();
        return enter(Role::series);
      case Role::series:
        if (key_ == "metric" && v == V::object) {
          has_metric = true;
          return enter(Role::metric);
        }
        if (key_ == "values" && v == V::array) {
          has_values = true;
          return enter(Role::values);
        }
        return ignore();
      case Role::metric:
        if (v == V::string) {
          if (key_ == "channel") channel = *str;
          else if (key_ == "instance") instance = *str;
          else if (key_ == "unit") unit = *str;
          else if (key_ == "subsystem") subsystem = *str;
          else if (key_ == "__name__") name = *str;
        }
        return ignore();
      case Role::values:
        if (++n_points > steps)
          return stop(fmt::format("{}: a series of the query_range answer holds more than the {} points requested",
                                  where, steps));
        if (v != V::array) {
          bad_point("a point is not [time, \"value\"]");
          return ignore();
        }
        point_index = 0;
        point_ok = true;
        return enter(Role::point);
      case Role::point: {
        const std::size_t i = point_index++;
        if (i == 0 && v == V::number) {
          point_t = num;
        } else if (i == 1 && v == V::number) {
          point_v = num;
        } else if (i == 1 && v == V::string) {
          char* end = nullptr;
          point_v = std::strtod(str->c_str(), &end);
          if (str->empty() || end != str->c_str() + str->size())
            bad_point("value '" + printable(*str, 40) + "' is not a number");
        } else {
          bad_point("a point is not [time, \"value\"]");
        }
        return ignore();
      }
    }
    return ignore();
  }

  bool end() {
    if (skip) {
      --skip;
      return true;
    }
    const Role r = stack.back();
    stack.pop_back();
    if (r == Role::point) {
      if (point_index != 2) bad_point("a point is not [time, \"value\"]");
      if (point_ok) points.emplace_back(point_t, point_v);
    } else if (r == Role::series) {
      return commit();
    }
    return true;
  }

  // Stores the series just read.
  bool commit() {
    if (!has_metric || !has_values) return stop(unexpected("a series lacks \"metric\" or \"values\"").what());
    if (channel.empty()) return true;  // not a raw Reveal channel
    if (!point_error.empty()) return stop(unexpected(point_error + " in series " + printable(channel)).what());
    auto [it, fresh] = m.series_.try_emplace({instance, channel});
    Series& ser = it->second;
    if (fresh) {
      if (m.series_.size() > m.max_series_) {
        m.series_.erase(it);
        return stop(fmt::format("{}: the query_range answers hold more than {} series ({} announced by "
                                "/api/v1/series, and room for series new since)",
                                where, m.max_series_, m.announced_));
      }
      ser.info.name = channel;
      ser.info.unit = unit;
      ser.info.subsystem = parse_subsystem(subsystem).value_or(Subsystem::system);
      ser.info.kind = name.size() >= 6 && name.compare(name.size() - 6, 6, "_total") == 0 ? Kind::counter : Kind::gauge;
      ser.v.assign(m.grid_.n, kNaN);
    }
    const double scale = prometheus_unit_scale(ser.info);  // exported in seconds, stored in the channel's unit
    for (const auto& [t, value] : points) {
      // Times are seconds with millisecond resolution; anything beyond ±1e12 s is off the grid.
      if (!(std::abs(t) < 1e12)) continue;
      const std::int64_t t_ns = std::llround(t * 1000.0) * kMs;
      const double k = std::round(double(t_ns - m.grid_.start_ns) / double(m.grid_.step_ns));
      if (k < 0 || k >= double(m.grid_.n)) continue;
      double& slot = ser.v[std::size_t(k)];
      if (std::isnan(slot)) slot = value / scale;
    }
    return true;
  }

  bool null() { return value(V::other); }
  bool boolean(bool) { return value(V::other); }
  bool number_integer(json::number_integer_t x) { return value(V::number, double(x)); }
  bool number_unsigned(json::number_unsigned_t x) { return value(V::number, double(x)); }
  bool number_float(json::number_float_t x, const std::string&) { return value(V::number, x); }
  bool string(std::string& s) { return value(V::string, 0, &s); }
  bool binary(json::binary_t&) { return value(V::other); }
  bool start_object(std::size_t) { return value(V::object); }
  bool start_array(std::size_t) { return value(V::array); }
  bool end_object() { return end(); }
  bool end_array() { return end(); }
  bool key(std::string& k) {
    if (!skip) key_ = k;
    return true;
  }
  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception&) {
    parse_failed = true;
    error_byte = byte;
    return false;
  }
};

void MatrixAssembler::add(std::string_view body, const std::string& where, std::size_t steps) {
  RangeHandler h(*this, where, steps);
  json::sax_parse(body.begin(), body.end(), &h);
  // Which problem to name when several: malformed text, the server's own error, the wrong result
  // type, then the first problem met.
  if (h.parse_failed) throw malformed(where, "query_range", h.error_byte);
  if (h.env.failed()) h.env.check(where, "query_range");
  if (h.result_type_seen && h.result_type != "matrix") throw h.unexpected("resultType is not \"matrix\"");
  if (!h.error.empty()) throw PrometheusError(h.error);
  h.env.check(where, "query_range");
  if (!h.data_object || !h.result_type_seen) throw h.unexpected("resultType is not \"matrix\"");
  if (!h.result_array) throw h.unexpected("no result array");
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
      // most of the steps at which anything changes (a tick counter), so that identical steps
      // cannot be genuine. Steps at which nothing changes do not count: a host that stopped
      // reporting minutes before the range's end is filled with its last sample for up to 5
      // minutes, longer than it may have been read live.
      std::vector<char> moving(last + 1, 0);
      for (auto c = it; c != end; ++c)
        for (std::size_t k = first + 1; k <= last; ++k) {
          const double x = c->second.v[k], y = c->second.v[k - 1];
          moving[k] |= std::isfinite(x) && std::isfinite(y) && x != y;
        }
      std::vector<std::size_t> keep;
      keep.reserve(last - first + 1);
      std::vector<char> ticks;  // per channel of this host
      for (auto c = it; c != end; ++c) {
        std::size_t pairs = 0, moves = 0;
        for (std::size_t k = first + 1; k <= last; ++k)
          if (moving[k] && std::isfinite(c->second.v[k]) && std::isfinite(c->second.v[k - 1])) {
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
      // The host's sampling interval: the step, or with a step finer than its scrapes (repeats
      // dropped above) the median spacing of the samples kept.
      // Spacing between steps with a value (an outage's empty steps are kept, a step apart).
      std::size_t median_steps = 1;
      {
        std::vector<std::size_t> gaps;
        std::size_t prev = grid_.n;
        for (std::size_t k : keep) {
          bool any = false;
          for (auto c = it; !any && c != end; ++c) any = std::isfinite(c->second.v[k]);
          if (!any) continue;
          if (prev != grid_.n) gaps.push_back(k - prev);
          prev = k;
        }
        if (!gaps.empty()) {
          std::nth_element(gaps.begin(), gaps.begin() + std::ptrdiff_t(gaps.size() / 2), gaps.end());
          median_steps = gaps[gaps.size() / 2];
        }
      }
      Recording r;
      r.meta.hostname = instance.empty() ? "(no instance)" : instance;
      r.meta.interval_s = double(grid_.step_ns) * 1e-9 * double(median_steps);
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

namespace {

// Calls cli.stop() from `deadline` on, every 20 ms until the request returns: it shuts the
// connection down, which ends a request in any phase, including those without a callback
// (connecting, waiting for the status line, reading headers).
class Watchdog {
 public:
  Watchdog(httplib::Client& cli, std::chrono::steady_clock::time_point deadline)
      : thread_([this, &cli, deadline] {
          std::unique_lock lock(mu_);
          if (cv_.wait_until(lock, deadline, [this] { return done_; })) return;
          fired_ = true;
          while (!done_) {
            cli.stop();
            cv_.wait_for(lock, std::chrono::milliseconds(20), [this] { return done_; });
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  bool fired() {
    std::lock_guard lock(mu_);
    return fired_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false, fired_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

// GET requests to one Prometheus server, each bounded in time (one deadline for the whole
// request: connecting, redirects, headers and body), in size (a 200 answer of at most the
// caller's bound, counted after decompression; the first kMaxErrorAnswerBytes of any other) and
// in where it may lead (redirects only within the origin).
class Fetcher {
 public:
  Fetcher(const fleet::Endpoint& ep, std::string where, double timeout_s)
      : ep_(ep), where_(std::move(where)), timeout_s_(timeout_s), cli_(ep.origin) {
    if (!cli_.is_valid()) throw PrometheusError(where_ + ": cannot create an HTTP client for " + ep.origin);
    const auto timeout = std::chrono::milliseconds(std::max<long long>(1, std::llround(timeout_s * 1000)));
    cli_.set_connection_timeout(std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(10)));
    cli_.set_read_timeout(timeout);
    cli_.set_write_timeout(timeout);
    cli_.set_follow_location(false);  // redirects are ours to check (redirect_target)
  }

  // The body of a 200 answer to GET prefix+path?params. `max_bytes`: its bound; `bound`: what
  // the bound stands for, in the message ("3 series × 600 steps").
  std::string get(const std::string& path, const httplib::Params& params, std::size_t max_bytes,
                  const std::string& bound) {
    using clock = std::chrono::steady_clock;
    const auto deadline =
        clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(timeout_s_));
    std::string target = ep_.prefix + path;
    for (int redirects = 0;; ++redirects) {
      std::string body, location;
      int status = 0;
      bool late = false, over = false;
      std::uint64_t announced = 0;
      const auto on_response = [&](const httplib::Response& r) {
        status = r.status;
        if (status >= 300 && status < 400 && r.has_header("Location")) {
          location = r.get_header_value("Location");
          return false;  // the body of a redirect is not read
        }
        if (status == 200 && r.has_header("Content-Length")) {
          announced = std::strtoull(r.get_header_value("Content-Length").c_str(), nullptr, 10);
          if (announced > max_bytes) return !(over = true);
        }
        return true;
      };
      const auto on_data = [&](const char* data, std::size_t n) {
        if (clock::now() >= deadline) return !(late = true);
        const std::size_t cap = status == 200 ? max_bytes : fleet::kMaxErrorAnswerBytes;
        if (body.size() + n > cap) {
          if (status == 200) return !(over = true);
          body.append(data, cap - body.size());  // enough for the message
          return false;
        }
        body.append(data, n);
        return true;
      };
      const auto on_progress = [&](std::uint64_t bytes, std::uint64_t) {  // bytes on the wire
        if (clock::now() >= deadline) return !(late = true);
        if (status == 200 && bytes > max_bytes) return !(over = true);
        return true;
      };
      bool fired;
      httplib::Result res = [&] {
        Watchdog dog(cli_, deadline);
        auto r = redirects == 0 ? cli_.Get(target, params, httplib::Headers{}, on_response, on_data, on_progress)
                                : cli_.Get(target, httplib::Headers{}, on_response, on_data, on_progress);
        fired = dog.fired();
        return r;
      }();
      if (late || (fired && !res))
        throw PrometheusError(fmt::format("{}: no complete answer to {} within {:g} s", where_, path, timeout_s_));
      if (over)
        throw PrometheusError(
            announced > max_bytes
                ? fmt::format("{}: the answer to {} announces {} bytes, more than {} can take ({} bytes at most)",
                              where_, path, announced, bound, max_bytes)
                : fmt::format("{}: the answer to {} is over {} bytes, more than {} can take", where_, path, max_bytes,
                              bound));
      if (!location.empty()) {
        if (redirects >= fleet::kMaxRedirects)
          throw PrometheusError(fmt::format("{}: more than {} redirects for {}", where_, fleet::kMaxRedirects, path));
        try {
          target = fleet::redirect_target(ep_.origin, target, location);
        } catch (const PrometheusError& e) {
          throw PrometheusError(fmt::format("{}: {}", where_, e.what()));
        }
        continue;
      }
      // A non-200 answer cut at kMaxErrorAnswerBytes ends "cancelled": its status still tells.
      if (!res && (status == 0 || status == 200)) throw PrometheusError(fmt::format("{}: {}", where_, describe(res.error())));
      if (status != 200) {
        const std::string api = fleet::prometheus_error_text(body);
        throw PrometheusError(fmt::format("{}: HTTP {} for {}: {}", where_, status, path,
                                          api.empty() ? printable(first_line(body)) : api));
      }
      return body;
    }
  }

 private:
  const fleet::Endpoint& ep_;
  std::string where_;
  double timeout_s_;
  httplib::Client cli_;
};

// What every request about one query shares: the server, the raw-channel selector, the grid,
// the range's API times (from kLookbackMs before the start, as query_range fills the first steps
// from there) and the connection.
// No series of the selector has a sample in the range: for one host of a fleet, a host that is
// not there (for_each_prometheus_host hands it over empty); for read_prometheus, an error.
class NoSeriesError : public PrometheusError {
 public:
  using PrometheusError::PrometheusError;
};

struct Query {
  explicit Query(const PrometheusQuery& q)
      : ep(fleet::parse_url(q.url)),
        selector(add_matcher(q.selector, "channel!=\"\"")),
        g(fleet::make_grid(q.start_unix_ns, q.end_unix_ns, q.step_ns)),
        where("Prometheus at " + q.url),
        fetch(ep, where, q.timeout_s > 0 ? q.timeout_s : 60),
        first_ms(g.start_ns / kMs),
        step_ms(g.step_ns / kMs),
        from(api_time(first_ms - fleet::kLookbackMs)),
        end(api_time(first_ms + std::int64_t(g.n - 1) * step_ms)),
        max_series(kMaxPrometheusPoints / g.n) {}

  // Series matching `match` in the range (/api/v1/series), counted up to max_series + 1.
  std::size_t series(const std::string& match) {
    return fleet::count_series(fetch.get("/api/v1/series", {{"match[]", match}, {"start", from}, {"end", end}},
                                         fleet::max_series_answer_bytes(max_series),
                                         fmt::format("{} series", max_series)),
                               where, max_series);
  }
  NoSeriesError none() const {
    return NoSeriesError(fmt::format("{}: no series matches {} (raw Reveal channels) between {} and {}", where,
                                       selector, format_utc(g.start_ns),
                                       format_utc(g.start_ns + std::int64_t(g.n - 1) * g.step_ns)));
  }

  const fleet::Endpoint ep;
  const std::string selector;
  const fleet::Grid g;
  const std::string where;
  Fetcher fetch;  // after ep and where, which it refers to
  const std::int64_t first_ms, step_ms;
  const std::string from, end;
  const std::size_t max_series;
};

}  // namespace

std::vector<Recording> read_prometheus(const PrometheusQuery& q) {
  Query qr(q);
  const std::string& selector = qr.selector;
  const fleet::Grid& g = qr.g;
  const std::int64_t first_ms = qr.first_ms, step_ms = qr.step_ms;
  const std::size_t max_series = qr.max_series;

  // How many series: sizes the requests and bounds the answers, and says early when nothing
  // matches.
  const std::size_t n_series = qr.series(selector);
  if (n_series == 0) throw qr.none();
  if (n_series > max_series)
    throw PrometheusError(fmt::format("{}: more than {} series × {} steps is more than {} points; narrow the selector "
                                      "or the range, or widen the step",
                                      qr.where, max_series, g.n, kMaxPrometheusPoints));

  // Series that began after /api/v1/series answered are read too, within a margin (the
  // assembler's max_series()): with `--end now` a new pod's first scrape lands in between.
  fleet::MatrixAssembler assembler(g, n_series, max_series);
  for (auto [a, b] : fleet::split_grid(g, fleet::steps_per_request(n_series))) {
    const std::size_t steps = b - a + 1;
    const std::string body = qr.fetch.get("/api/v1/query_range",
                                          {{"query", selector},
                                           {"start", api_time(first_ms + std::int64_t(a) * step_ms)},
                                           {"end", api_time(first_ms + std::int64_t(b) * step_ms)},
                                           {"step", api_time(step_ms)}},
                                          fleet::max_range_answer_bytes(assembler.max_series(), steps),
                                          fmt::format("{} series × {} steps", assembler.max_series(), steps));
    assembler.add(body, qr.where, steps);
  }
  std::vector<Recording> hosts = assembler.finish("prometheus " + q.url + " " + q.selector);
  if (hosts.empty()) throw qr.none();
  return hosts;
}

namespace {

// A PromQL string literal: "..." with backslash, double quote and line feed escaped.
std::string promql_string(std::string_view v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + '"';
}

}  // namespace

PrometheusQuery host_query(const PrometheusQuery& q, const std::string& instance) {
  PrometheusQuery h = q;
  h.selector = add_matcher(q.selector, "instance=" + promql_string(instance));
  return h;
}

std::vector<std::string> prometheus_instances(const PrometheusQuery& q) {
  Query qr(q);
  const std::string& selector = qr.selector;
  const std::string& where = qr.where;

  constexpr std::size_t kMaxAnswer = 16u << 20;
  const std::string body = qr.fetch.get("/api/v1/label/instance/values",
                                        {{"match[]", selector}, {"start", qr.from}, {"end", qr.end}}, kMaxAnswer,
                                     fmt::format("{} host names", kMaxPrometheusHosts));
  std::vector<std::string> hosts;
  {
    json doc = json::parse(body, nullptr, false);
    if (doc.is_discarded()) throw PrometheusError(where + ": malformed JSON in the answer to /api/v1/label/instance/values");
    if (const std::string api = fleet::prometheus_error_text(body); !api.empty())
      throw PrometheusError(where + ": " + api);
    const auto data = doc.is_object() ? doc.find("data") : doc.end();
    if (!doc.is_object() || doc.value("status", "") != "success" || data == doc.end() || !data->is_array())
      throw PrometheusError(where + ": the answer to /api/v1/label/instance/values is not a success with a list");
    if (data->size() > kMaxPrometheusHosts)
      throw PrometheusError(fmt::format("{}: more than {} hosts match {}; narrow the selector", where,
                                        kMaxPrometheusHosts, selector));
    for (const auto& v : *data) {
      if (!v.is_string()) throw PrometheusError(where + ": a host name in /api/v1/label/instance/values is not a string");
      if (!v.get_ref<const std::string&>().empty()) hosts.push_back(v.get<std::string>());
    }
  }
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  // Series without an instance label: one more host, "(no instance)".
  if (qr.series(add_matcher(selector, "instance=\"\"")) > 0) hosts.emplace_back();
  if (hosts.empty()) throw qr.none();
  return hosts;
}

void for_each_prometheus_host(const PrometheusQuery& q, const std::vector<std::string>& instances, unsigned jobs,
                              const std::function<void(std::size_t, Recording&&)>& use,
                              const std::function<void(std::size_t)>& done) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::exception_ptr error;
  std::size_t finished = 0;
  const auto work = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= instances.size() || stop.load()) return;
      try {
        const std::string name = instances[i].empty() ? "(no instance)" : instances[i];
        std::vector<Recording> got;
        bool absent = false;
        try {
          got = read_prometheus(host_query(q, instances[i]));
        } catch (const NoSeriesError&) {
          // Listed, but no sample in the range: the listing is by storage block, so a host
          // whose series ended shortly before the range (or begin after it) is listed too.
          absent = true;
        } catch (const PrometheusError& e) {
          throw PrometheusError("host " + name + ": " + e.what());
        }
        if (absent) {
          Recording none;
          none.meta.hostname = name;
          use(i, std::move(none));
        } else {
          // One host's selector matches one instance; series of another (a server or proxy
          // that rewrites labels) are not this host's, and none of its own is an error, not a
          // gap.
          bool found = false;
          for (auto& r : got)
            if (!found && r.meta.hostname == name) {
              found = true;
              use(i, std::move(r));
            }
          if (!found)
            throw PrometheusError("host " + name + ": the server answered its query with series of other instances only");
        }
        std::lock_guard lock(mu);
        ++finished;
        if (done) done(finished);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
        stop = true;
        return;
      }
    }
  };
  const unsigned n = std::max(1u, std::min<unsigned>(jobs, unsigned(std::max<std::size_t>(instances.size(), 1))));
  std::vector<std::thread> threads;
  try {
    for (unsigned t = 1; t < n; ++t) threads.emplace_back(work);
  } catch (...) {  // no thread to be had: the ones started finish, then the error
    stop = true;
    for (auto& t : threads) t.join();
    throw;
  }
  work();
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

void check_config_selector(std::string_view selector) {
  const std::string_view sel = trim(selector);
  if (!sel.empty() && sel.front() != '{')
    throw PrometheusError("'" + std::string(selector) +
                          "' names a metric; the configuration is read from reveal_host_config_info, give label "
                          "matchers only (e.g. {job=\"reveal\"})");
  add_matcher(selector, "__name__=\"reveal_host_config_info\"");
}

std::vector<HostConfig> read_prometheus_configs(const std::string& url, const std::string& selector,
                                                std::int64_t at_unix_ns, double timeout_s) {
  const std::string where = "Prometheus at " + url;
  fleet::Endpoint ep;
  try {
    ep = fleet::parse_url(url);
  } catch (const PrometheusError& e) {
    throw PrometheusError(where + ": " + e.what());
  }
  const std::string_view sel = trim(selector);
  std::string query;
  try {
    check_config_selector(selector);
    query = "timestamp(" + add_matcher(selector, "__name__=\"reveal_host_config_info\"") + ")";
  } catch (const PrometheusError& e) {
    throw PrometheusError(where + ": " + e.what());
  }
  Fetcher fetch(ep, where, timeout_s > 0 ? timeout_s : 60);
  constexpr std::size_t kMaxAnswer = 64u << 20;
  const std::string body = fetch.get("/api/v1/query", {{"query", query}, {"time", api_time(round_ms(at_unix_ns))}},
                                     kMaxAnswer, "the configuration of a fleet");
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded()) throw PrometheusError(where + ": malformed JSON in the answer to /api/v1/query");
  if (const std::string api = fleet::prometheus_error_text(body); !api.empty()) throw PrometheusError(where + ": " + api);
  const auto data = doc.is_object() ? doc.find("data") : doc.end();
  if (!doc.is_object() || doc.value("status", "") != "success" || data == doc.end() || !data->is_object() ||
      !data->contains("result") || !(*data)["result"].is_array())
    throw PrometheusError(where + ": the answer to /api/v1/query is not a success with a result list");
  // instance -> key -> (sample time, value)
  std::map<std::string, std::map<std::string, std::pair<double, std::string>>> hosts;
  for (const auto& series : (*data)["result"]) {
    if (!series.is_object() || !series.contains("metric") || !series["metric"].is_object())
      throw PrometheusError(where + ": a series of the answer to /api/v1/query has no labels");
    const json& metric = series["metric"];
    const std::string key = label(metric, "key");
    if (key.empty()) continue;
    double t = 0;
    if (const auto v = series.find("value"); v != series.end() && v->is_array() && v->size() == 2 && (*v)[1].is_string())
      t = std::strtod((*v)[1].get_ref<const std::string&>().c_str(), nullptr);
    const std::string instance = label(metric, "instance");
    if (!hosts.count(instance) && hosts.size() >= kMaxPrometheusHosts)
      throw PrometheusError(fmt::format("{}: more than {} hosts expose reveal_host_config_info; narrow the selector",
                                        where, kMaxPrometheusHosts));
    auto& slot = hosts[instance][key];
    if (slot.second.empty() || !(t < slot.first)) slot = {t, label(metric, "value")};
  }
  if (hosts.empty())
    throw PrometheusError(fmt::format("{}: no agent exposed reveal_host_config_info{} in the 5 minutes before {}", where,
                                      sel.empty() ? std::string() : " " + std::string(sel),
                                      format_utc(at_unix_ns)));
  std::vector<HostConfig> out;
  for (auto& [instance, keys] : hosts) {
    HostConfig h;
    h.host = instance.empty() ? "(no instance)" : instance;
    for (auto& [k, tv] : keys)
      if (!tv.second.empty()) h.config.emplace(k, std::move(tv.second));
    out.push_back(std::move(h));
  }
  // "" sorts first in the map: the host without an instance goes last, as prometheus_instances has it.
  if (!out.empty() && hosts.begin()->first.empty()) std::rotate(out.begin(), out.begin() + 1, out.end());
  return out;
}

}  // namespace reveal
