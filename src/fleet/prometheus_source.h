// Internals of the Prometheus fleet reader (public contract: include/reveal/prometheus_source.h),
// exposed for the unit tests: URL splitting, the step grid and its request pieces, and the
// assembly of query_range answers into per-host recordings.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reveal/prometheus_source.h"

namespace reveal::fleet {

// "http://host:port/prefix/" -> {"http://host:port", "/prefix"}. Throws PrometheusError for a
// scheme other than http/https, an empty host, a bad port, or a query string or fragment.
struct Endpoint {
  std::string origin;  // scheme://host[:port], what httplib::Client takes
  std::string prefix;  // "" or "/path" without a trailing '/'
};
Endpoint parse_url(std::string_view url);

// The common grid: start + k·step for k in [0, n). Times in Unix ns, multiples of 1 ms.
struct Grid {
  std::int64_t start_ns = 0, step_ns = 0;
  std::size_t n = 0;
};
// Rounds start, end and step to milliseconds; throws PrometheusError when end < start or the
// step is below 1 ms.
Grid make_grid(std::int64_t start_ns, std::int64_t end_ns, std::int64_t step_ns);

// [first, last] grid indices of each request: at most `max_steps` points each, in order.
std::vector<std::pair<std::size_t, std::size_t>> split_grid(const Grid& g, std::size_t max_steps);

// Steps per request for `n_series` matching series: at most 10000 and at most about
// kPointsPerRequest points in all, at least 1.
inline constexpr std::size_t kMaxStepsPerRequest = 10000;
inline constexpr std::size_t kPointsPerRequest = 1'000'000;
std::size_t steps_per_request(std::size_t n_series);

// Collects the series of query_range answers on a grid and builds one Recording per instance.
class MatrixAssembler {
 public:
  explicit MatrixAssembler(Grid g) : grid_(g) {}
  // Parses one /api/v1/query_range answer (HTTP 200 body) and stores its points. Throws
  // PrometheusError naming `where` for malformed JSON, a "status":"error" answer or a result
  // that is not a matrix of [time, "value"] pairs with a `channel` label.
  void add(std::string_view body, const std::string& where);
  std::size_t series() const { return series_.size(); }
  // One Recording per instance, in instance order (see the public header for the shape).
  // `command` goes to meta.command.
  std::vector<Recording> finish(const std::string& command);

 private:
  struct Series {
    ChannelInfo info;
    std::vector<double> v;  // one per grid step, NaN = no point
  };
  Grid grid_;
  std::map<std::pair<std::string, std::string>, Series> series_;  // (instance, channel)
};

// "<errorType>: <error>" when `body` is a Prometheus API error answer
// ({"status":"error","errorType":..,"error":..}), "" otherwise.
std::string prometheus_error_text(std::string_view body);

}  // namespace reveal::fleet
