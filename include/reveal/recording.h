// A recording: run metadata, the channel list and the samples, as stored by `reveal record`
// and read back by `reveal detect`.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "reveal/channel.h"
#include "reveal/matrix.h"

namespace reveal {

struct ProbeRecord {
  std::string name;
  bool available = false;
  std::string reason;  // why unavailable; empty otherwise
  std::size_t n_channels = 0;
};

struct RunMetadata {
  std::string hostname, kernel, cpu_model;
  int cores = 0;
  double interval_s = 1.0;
  std::int64_t start_unix_ns = 0;  // CLOCK_REALTIME at the first sample
  std::int64_t end_unix_ns = 0;    // at the last sample; 0 while recording
  bool complete = true;            // false when the recorder never finished (killed, crashed):
                                   // load_recording then sets end_unix_ns from the last sample
  std::string command;             // the monitored command line, "" if none
  int exit_code = 0;               // the command's exit status (or 128+signal)
  std::string root = "/";          // --root the probes read under
  std::string reveal_version;
  std::vector<ProbeRecord> probes;
};

// Whether probe `name` was selected for the run (available or not).
inline bool has_probe(const RunMetadata& meta, const std::string& name) {
  for (const auto& p : meta.probes)
    if (p.name == name) return true;
  return false;
}

// A discrete occurrence reported by a probe or the recorder, kept with its time: a GPU XID
// error, a link going down, a configuration change. Not a time series.
struct Event {
  std::int64_t t_unix_ns = 0;
  std::string source;  // probe or component, e.g. "nvml", "config"
  std::string kind;    // e.g. "xid", "link_down", "config_change"
  double value = 0;    // kind-specific number (XID code, new value), 0 if none
  std::string detail;  // one human-readable line
};

// Host configuration (see reveal/host_config.h): key -> value, e.g. "net.eth0.mtu" -> "9000".
using ConfigSnapshot = std::map<std::string, std::string>;

// One configuration key that changed during a run. `value` is "" when the key disappeared,
// `old_value` is "" when it appeared.
struct ConfigChange {
  std::int64_t t_unix_ns = 0;
  std::string key, old_value, value;
};

// Per-cgroup scans (reveal/tenants.h says what they are for and where they come from).
// One cgroup's cumulative counters at one scan, microseconds since the cgroup was created
// (they never decrease while it lives; a cgroup removed and created again under the same path
// starts again at 0, which the rate code treats as a restart). NaN: the file was not readable.
struct TenantCounters {
  double cpu_usage_us = std::numeric_limits<double>::quiet_NaN();    // cpu.stat usage_usec
  double cpu_some_us = std::numeric_limits<double>::quiet_NaN();     // cpu.pressure "some" total
  double memory_some_us = std::numeric_limits<double>::quiet_NaN();  // memory.pressure "some" total
  double io_some_us = std::numeric_limits<double>::quiet_NaN();      // io.pressure "some" total
};

// One walk of the hierarchy: every leaf cgroup found, by id (an index into
// TenantTimeline::paths), with its counters. ids and counters are parallel.
struct TenantScan {
  std::int64_t t_unix_ns = 0;  // CLOCK_REALTIME when the walk started
  std::vector<std::uint32_t> ids;
  std::vector<TenantCounters> counters;
};

// Scans of one recording, in time order. paths[id] is the cgroup's path relative to the v2
// root, '/'-separated ("kubepods.slice/kubepods-burstable.slice/.../cri-containerd-ab12.scope").
// The path "/" (kOutsideTenants) is no cgroup but everything outside the tenants: the host's
// process CPU time (/proc/stat user + nice + system) no tenant was charged
// (src/telemetry/cgroup/tenants.h); its pressure totals are NaN.
inline constexpr std::string_view kOutsideTenants = "/";
struct TenantTimeline {
  std::vector<std::string> paths;
  std::vector<TenantScan> scans;
};

struct Recording {
  RunMetadata meta;
  std::vector<ChannelInfo> channels;
  std::vector<std::int64_t> t_unix_ns;  // one per sample (row of `values`)
  Matrix values;                        // samples × channels, raw values, NaN = gap
  std::vector<Event> events;            // in time order
  ConfigSnapshot config;                // host configuration at the start of the run
  std::vector<ConfigChange> config_changes;  // in time order
  TenantTimeline tenants;               // per-cgroup scans; empty in stores without them
};

}  // namespace reveal
