// Invariants every successfully imported Recording must hold; a violation traps so libFuzzer
// reports it like a crash.
#pragma once

#include "reveal/ingest.h"

inline void check_recording(const reveal::Recording& r) {
  const auto require = [](bool ok) {
    if (!ok) __builtin_trap();
  };
  require(!r.t_unix_ns.empty());
  require(r.values.rows() == r.t_unix_ns.size());
  require(r.values.cols() == r.channels.size());
  for (std::size_t i = 1; i < r.t_unix_ns.size(); ++i) require(r.t_unix_ns[i] > r.t_unix_ns[i - 1]);
  require(r.meta.start_unix_ns == r.t_unix_ns.front() && r.meta.end_unix_ns == r.t_unix_ns.back());
  for (const auto& ch : r.channels) require(!ch.name.empty() && ch.name.find('\n') == std::string::npos);
}
