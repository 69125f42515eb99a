// Fleet reader: the raw channels that `reveal agent`s exposed on /metrics (reveal/agent.h),
// read back from a Prometheus server through its HTTP API, one Recording per host, for
// `reveal detect --prometheus` (one report per host, or --peers: hosts of one job compared).
//
// What is read: GET <url>/api/v1/series (to count series and size the requests; asked from
// 5 minutes before the start, as query_range fills steps from samples up to 5 minutes old), then
// GET <url>/api/v1/query_range for `selector` with the matcher channel!="" added, i.e. only the
// agents' raw channels (reveal_<source>_<field>[_total]{channel,subsystem,unit[,entity]}), never
// the detection or self metrics. The range is split into requests of at most 10000 steps (the
// server refuses more than 11000 points per series) and fewer when many series match (about
// 1 million points per request at most).
//
// Bounds (a broken or hostile server must neither exhaust memory nor hold the reader):
//   time      each HTTP request, from connecting to the last byte of the answer (redirects
//             included), must finish within q.timeout_s; connecting alone waits at most 10 s.
//   size      an answer may take at most 64 KiB + series × (16 KiB + steps × 128 bytes) (the
//             series /api/v1/series announced, the steps of that request), and never more than
//             256 MiB; the /api/v1/series answer at most 64 KiB + 16 KiB per series that fits
//             kMaxPrometheusPoints. Bytes are counted after decompression (gzip, deflate and
//             brotli answers are accepted), and an announced Content-Length over the bound is
//             refused before the body is read. Of an answer other than HTTP 200, 64 KiB are read.
//   counts    a query_range answer (and all of them together) may hold at most the series that
//             /api/v1/series announced, and a series at most as many points as the request has
//             steps; answers are parsed as they are read (no JSON document is built), so memory
//             is the answer's text plus 8 bytes per series × step of the result.
//   redirects followed only within the origin (same scheme, host and port; at most 5 per
//             request); one to another host or port, or from https to http, is refused.
//
// Shape of the result: series are grouped by their `instance` label (one host each, in
// instance order); series without one form a host named "(no instance)". Per host:
//   meta.hostname    = the instance label value
//   meta.interval_s  = step in seconds; with a step finer than the host's scrapes, the median
//                      spacing of the steps kept (repeats dropped, below), so that a 1-s step
//                      over 15-s scrapes gives 15 s; meta.command = "prometheus <url> <selector>"
//   meta.start_unix_ns / end_unix_ns = first / last step at which the host has any value
//   t_unix_ns        = the common grid start + k·step, trimmed to that span, less repeated
//                      steps: a step whose every value equals the previous step's is the same
//                      sample seen again (a scrape landing twice between two agent samples, or
//                      the server's 5-minute lookback after a host stopped reporting) and is
//                      dropped, so the counter rates around it stay right. This applies only
//                      when some channel of the host changes at most steps (a tick counter such
//                      as proc.stat:idle), so that identical steps cannot be genuine.
//   channels         = one per distinct `channel` label, sorted by name: name = `channel`,
//                      unit = `unit`, subsystem = `subsystem` (unknown → system), kind = counter
//                      when the metric name ends in `_total` (the raw running total, as stored
//                      by `reveal record`), gauge otherwise (state channels come back as
//                      gauges; counter width and wrap range are not exposed: 64 bits assumed)
//   values           = raw values; NaN where the series has no point at that step (Prometheus
//                      itself fills a step with the last sample up to 5 minutes old, and a
//                      stale or absent series gives no point) and where the value was NaN.
//   The same channel from two series of one instance (two jobs, say) is merged: the first
//   series' points win, the second fills its gaps.
// Units: times are Unix nanoseconds, rounded to milliseconds (Prometheus's resolution).
//
// Errors: every failure throws PrometheusError with one line naming the server ("Prometheus at
// <url>: ..."): an unusable URL or selector, a connection failure, no complete answer within
// the timeout, an HTTP status other than 200, a `"status":"error"` answer (its errorType and
// error message), malformed or unexpected JSON, an answer over its size bound, more series or
// points than announced or requested, a refused redirect or more than 5, no series matching in
// the range, or more than kMaxPrometheusPoints values in all.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "reveal/config_drift.h"
#include "reveal/recording.h"

namespace reveal {

class PrometheusError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PrometheusQuery {
  std::string url;        // "http://host:port" or "https://host:port", optionally with a path
                          // prefix ("http://host:9090/prometheus"); no query string
  std::string selector;   // a series selector: {job="reveal"}, metric{a="b"} or metric
  std::int64_t start_unix_ns = 0, end_unix_ns = 0;  // inclusive; start <= end
  std::int64_t step_ns = 1'000'000'000;             // grid step, >= 1 ms
  double timeout_s = 60;  // seconds each HTTP request may take in all (connecting, redirects,
                          // the whole answer); connecting alone waits at most 10 s
};

// Upper bound on points read in all (series × steps), about 4 GiB of JSON text.
inline constexpr std::size_t kMaxPrometheusPoints = 200'000'000;

// Reads the raw channels of every host matching q.selector. Throws PrometheusError.
std::vector<Recording> read_prometheus(const PrometheusQuery& q);

// --- A fleet a host at a time (issue #19: memory bounded per host, hosts read in parallel) ---
//
// The hosts whose raw channels match q.selector in q's range (from 5 minutes before the start,
// as above): the values of their `instance` label, sorted, from GET
// <url>/api/v1/label/instance/values?match[]=<selector,channel!="">; then "" when some matching
// series has no instance label (counted with /api/v1/series; read as the host "(no instance)").
// The answer may take at most 16 MiB and hold at most kMaxPrometheusHosts names. Throws
// PrometheusError (as read_prometheus: one line naming the server), and when no series matches.
inline constexpr std::size_t kMaxPrometheusHosts = 100'000;
std::vector<std::string> prometheus_instances(const PrometheusQuery& q);

// q restricted to one host: q.selector with instance="<instance>" added (the value escaped as
// PromQL strings are; "" selects the series without an instance label).
PrometheusQuery host_query(const PrometheusQuery& q, const std::string& instance);

// Reads each of `instances` with read_prometheus(host_query(q, instance)) — every bound above
// applies per host — on `jobs` threads at once (at least 1; each with its own connection), in
// list order, and hands each host's Recording to `use(index into instances, recording)` on the
// thread that read it; `use` must be safe to call from several threads at once. Memory: at most
// `jobs` hosts' recordings at a time, plus whatever `use` keeps. A host none of whose series
// has a sample in the range (the listing is by storage block, so a host whose series ended
// shortly before the range is listed too) is handed over as a Recording without samples:
// meta.hostname set, t_unix_ns empty. After each host is used,
// `done(hosts done so far)` is called, one call at a time. The first exception (a read's
// PrometheusError, prefixed "host <instance>: ", or whatever `use` throws) stops handing out
// hosts; the hosts being read are finished, and it is rethrown.
void for_each_prometheus_host(const PrometheusQuery& q, const std::vector<std::string>& instances, unsigned jobs,
                              const std::function<void(std::size_t, Recording&&)>& use,
                              const std::function<void(std::size_t)>& done = {});

// --- The hosts' configuration snapshots (issue #22: configuration drift across a fleet) ---
//
// What each agent exposed as reveal_host_config_info{key="<key>",value="<value>"} 1 (reveal/agent.h;
// keys of reveal/host_config.h), read with one instant query at `at_unix_ns`:
// GET <url>/api/v1/query?query=timestamp(reveal_host_config_info{<selector's matchers>}). Prometheus
// answers the series that had a sample in the 5 minutes before `at_unix_ns` and were not marked
// stale since, i.e. the agents that reported then. `selector` holds label matchers only ("",
// {job="reveal"}); a metric name in it is refused.
//
// Result: one HostConfig per `instance` label value (sorted; series without one: the host
// "(no instance)"), host = the instance, config = key -> value. A key that comes back with two
// values (a change within the 5 minutes, in data without staleness markers such as backfilled
// blocks) takes the value whose sample is newer.
// Bounds: one request within `timeout_s` (as PrometheusQuery::timeout_s), an answer of at most
// 64 MiB (after decompression), at most kMaxPrometheusHosts hosts; series without a `key` label
// are ignored. Errors: PrometheusError, one line naming the server, as read_prometheus; also when
// no series matches ("no agent exposed reveal_host_config_info ...").
std::vector<HostConfig> read_prometheus_configs(const std::string& url, const std::string& selector,
                                                std::int64_t at_unix_ns, double timeout_s = 60);

// The check read_prometheus_configs makes of its `selector` before asking (a usage error for a
// command line): label matchers only. Throws PrometheusError (one line, without the server) for
// a metric name or what is not a series selector.
void check_config_selector(std::string_view selector);

// `selector` with `matcher` (e.g. channel!="") added to its label matchers:
//   {job="x"} -> {job="x",channel!=""};  up -> up{channel!=""};  "" or {} -> {channel!=""}.
// Throws PrometheusError when `selector` is not a plain series selector (a range, a function).
std::string add_matcher(std::string_view selector, std::string_view matcher);

}  // namespace reveal
