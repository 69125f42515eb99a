// A recording: run metadata, the channel list and the samples, as stored by `reveal record`
// and read back by `reveal detect`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
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

struct Recording {
  RunMetadata meta;
  std::vector<ChannelInfo> channels;
  std::vector<std::int64_t> t_unix_ns;  // one per sample (row of `values`)
  Matrix values;                        // samples × channels, raw values, NaN = gap
  std::vector<Event> events;            // in time order
  ConfigSnapshot config;                // host configuration at the start of the run
  std::vector<ConfigChange> config_changes;  // in time order
};

}  // namespace reveal
