// Probe: one telemetry source (a /proc file, a /sys tree, perf_event, ...).
//
// Lifecycle: construct -> open(root) once -> sample(out) at every tick.
//  * open() discovers the channels present on this host under `root` (default "/";
//    a fixture tree or a host mount such as "/host" in tests and containers). It never
//    throws for host conditions: a missing file, EACCES or an absent PMU yields
//    ProbeStatus{available=false, reason="..."} with a one-line reason.
//  * The channel list is fixed after open(); instances appearing later are ignored.
//  * sample() writes exactly channels().size() values into `out`. A value that could
//    not be read this tick (file vanished, short read, parse error) is NaN: a gap,
//    never a zero. sample() must not allocate: open files once, re-read with pread. The
//    exceptions are rare and bounded, and documented by the probe: a file that outgrew its
//    buffer (telemetry/file_reader.h), a NIC driver whose statistics set changed size
//    (ethtool.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reveal/channel.h"
#include "reveal/recording.h"

namespace reveal {

struct ProbeStatus {
  bool available = false;
  std::string reason;  // empty when available; otherwise why not, e.g. "no PMU exposed"
};

class Probe {
 public:
  virtual ~Probe() = default;
  // Dotted probe name, e.g. "proc.stat"; usually also the source prefix of its channels
  // (the perf probes, "perf.software", "perf.hardware" and "perf.uncore", all produce "perf:<event>").
  virtual std::string_view name() const = 0;
  // One line for `reveal probes`, e.g. "CPU time per state, host and per CPU (/proc/stat)".
  virtual std::string_view description() const = 0;
  virtual ProbeStatus open(const std::filesystem::path& root) = 0;
  virtual const std::vector<ChannelInfo>& channels() const = 0;
  virtual void sample(std::span<double> out) = 0;
  // Appends discrete events seen since the last call (e.g. GPU XID errors), stamped `now`
  // unless the source gives its own time. Called after every sample(); events are rare, so
  // this may allocate. Default: none.
  virtual void poll_events(std::int64_t now_unix_ns, std::vector<Event>& out) {}
};

}  // namespace reveal
