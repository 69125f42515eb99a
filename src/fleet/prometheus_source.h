// Internals of the Prometheus fleet reader (public contract: include/reveal/prometheus_source.h),
// exposed for the unit tests: URL splitting, the step grid and its request pieces, the bounds on
// an answer, the redirect policy, and the assembly of query_range answers into per-host
// recordings.
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

// Bounds on one answer (issue #18: a broken or hostile server must not exhaust memory). Bytes
// are counted after decompression (the client accepts gzip, deflate and brotli answers).
//   query_range: kAnswerBaseBytes + series × (kBytesPerSeries + steps × kBytesPerPoint), at
//     most kMaxAnswerBytes. A point is `[1800000000.123,"-1.2345678901234567e+308"],`, 45 bytes
//     at most without spaces; the labels of a series take far less than 16 KiB.
//   /api/v1/series: kAnswerBaseBytes + (max_series + 1) × kBytesPerSeries, at most
//     kMaxAnswerBytes.
//   an answer other than HTTP 200: its first kMaxErrorAnswerBytes only (for the message).
inline constexpr std::size_t kBytesPerPoint = 128;
inline constexpr std::size_t kBytesPerSeries = 16 * 1024;
inline constexpr std::size_t kAnswerBaseBytes = 64 * 1024;
inline constexpr std::size_t kMaxAnswerBytes = 256 * 1024 * 1024;
inline constexpr std::size_t kMaxErrorAnswerBytes = 64 * 1024;
std::size_t max_range_answer_bytes(std::size_t series, std::size_t steps);
std::size_t max_series_answer_bytes(std::size_t max_series);

// /api/v1/series is asked from this long before the range's start: query_range fills a step
// from the last sample up to 5 minutes old (Prometheus's default lookback), so a series that
// ended just before the start still comes back and must be counted.
inline constexpr std::int64_t kLookbackMs = 5 * 60 * 1000;

// Redirects followed per request: at most kMaxRedirects, each within the same origin.
inline constexpr int kMaxRedirects = 5;
// The path (and query) to request next when the server at `origin` ("scheme://host[:port]", as
// parse_url gives it), asked for `path`, answers a redirect to `location` (the Location header:
// an absolute URL, //host/path, /path or a relative path). Throws PrometheusError (one line,
// without the server's name) when the redirect leaves the origin (scheme, host or port differ;
// ports default to 80/443) and, in particular, when it goes from https to http, or when
// `location` is empty or not a usable URL.
std::string redirect_target(std::string_view origin, std::string_view path, std::string_view location);

// Counts the series of an /api/v1/series answer (HTTP 200 body) without building a document.
// Stops counting at `max_series` + 1 (the caller refuses that many). Throws PrometheusError
// naming `where` for malformed JSON, a "status":"error" answer or data that is not an array.
std::size_t count_series(std::string_view body, const std::string& where, std::size_t max_series);

// How many series the query_range answers may hold when /api/v1/series announced `announced`:
// those plus the series that began between that answer and the last query_range answer (a new
// pod's agent scraped for the first time while `detect --prometheus --end now` reads up to the
// present), a quarter more plus 16, and never more than `cap` (the point budget:
// kMaxPrometheusPoints / grid steps). A server sending more than that is refused.
inline constexpr std::size_t kNewSeriesSlack = 16;
std::size_t series_allowed(std::size_t announced, std::size_t cap);

// Collects the series of query_range answers on a grid and builds one Recording per instance.
// `announced`: the number of series /api/v1/series announced; no answer, and not all answers
// together, may hold more distinct (instance, channel) pairs than series_allowed(announced,
// cap), so that the grid arrays stay within that many × grid steps.
class MatrixAssembler {
 public:
  MatrixAssembler(Grid g, std::size_t announced, std::size_t cap = SIZE_MAX)
      : grid_(g), announced_(announced), max_series_(series_allowed(announced, cap)) {}
  std::size_t max_series() const { return max_series_; }
  // Parses one /api/v1/query_range answer (HTTP 200 body) for a request of `steps` steps and
  // stores its points, streaming (no document is built: memory is the grid arrays plus one
  // series' points). Throws PrometheusError naming `where` for malformed JSON, a
  // "status":"error" answer, a result that is not a matrix of [time, "value"] pairs, more
  // series than max_series(), or a series with more than `steps` points.
  void add(std::string_view body, const std::string& where, std::size_t steps);
  std::size_t series() const { return series_.size(); }
  // One Recording per instance, in instance order (see the public header for the shape).
  // `command` goes to meta.command.
  std::vector<Recording> finish(const std::string& command);

 private:
  struct RangeHandler;  // the SAX handler of add()
  struct Series {
    ChannelInfo info;
    std::vector<double> v;  // one per grid step, NaN = no point
  };
  Grid grid_;
  std::size_t announced_, max_series_;
  std::map<std::pair<std::string, std::string>, Series> series_;  // (instance, channel)
};

// "<errorType>: <error>" when `body` is a Prometheus API error answer
// ({"status":"error","errorType":..,"error":..}), "" otherwise.
std::string prometheus_error_text(std::string_view body);

}  // namespace reveal::fleet
