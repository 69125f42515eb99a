// Parser for one line of a pressure-stall file (Documentation/accounting/psi.rst), as found
// in cgroup v2 <cgroup>/{cpu,memory,io}.pressure and /proc/pressure/*:
//   "some avg10=0.12 avg60=0.05 avg300=0.01 total=12345"
//   "full avg10=0.00 avg60=0.00 avg300=0.00 total=0"
// avg* are percentages of wall time stalled, total is cumulative stall time in microseconds.
//
// The proc.pressure probe has an equivalent parser private to procfs/pressure.cpp; sharing it
// would mean moving procfs code, so the cgroup probe keeps this small copy of the contract.
// Allocation-free.
#pragma once

#include <cmath>
#include <string_view>

#include "telemetry/file_reader.h"

namespace reveal::telemetry::psi {

// 0 for "some", 1 for "full", -1 otherwise.
inline int line_kind(std::string_view tok) { return tok == "some" ? 0 : tok == "full" ? 1 : -1; }

struct Avg10Total {
  double avg10 = std::nan("");
  double total = std::nan("");
};

// Parses the stats after the "some"/"full" token: the avg10 (%) and total (us) fields; a field
// absent or malformed stays NaN. Other fields (avg60, avg300, unknown ones) are ignored.
inline Avg10Total parse_avg10_total(std::string_view stats) {
  Avg10Total r;
  for (std::string_view tok = next_token(stats); !tok.empty(); tok = next_token(stats)) {
    if (tok.starts_with("avg10=")) {
      if (auto v = parse_double(tok.substr(6))) r.avg10 = *v;
    } else if (tok.starts_with("total=")) {
      if (auto v = parse_u64(tok.substr(6))) r.total = static_cast<double>(*v);
    }
  }
  return r;
}

}  // namespace reveal::telemetry::psi
