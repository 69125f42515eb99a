// JSON pieces shared by `reveal detect --json` (schema reveal.detect/1) and the agent's
// /incidents (schema reveal.incidents/1): one incident object, fields as in docs/DETECT_JSON.md.
#pragma once

#include <nlohmann/json.hpp>

#include "reveal/incident.h"

namespace reveal::report {

// A finite number, or null.
nlohmann::json json_number(double v);

// One element of reveal.detect/1 `incidents`: start, end, start_unix_ns, end_unix_ns, start_s,
// end_s, peak_score, subsystem, confidence, subsystem_shares, focus, focus_share, top_channels,
// action.
nlohmann::json incident_json(const Incident& inc);

}  // namespace reveal::report
