// JSON pieces shared by `reveal detect --json` (schema reveal.detect/1) and the agent's
// /incidents (schema reveal.incidents/1): one incident object, fields as in docs/DETECT_JSON.md.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "reveal/incident.h"

namespace reveal::report {

// A finite number, or null.
nlohmann::json json_number(double v);

// One element of reveal.detect/1 `incidents`: start, end, start_unix_ns, end_unix_ns, start_s,
// end_s, peak_score, subsystem, confidence, subsystem_shares, focus, focus_share, top_channels,
// action.
nlohmann::json incident_json(const Incident& inc);

// A container holding a GPU (Incident::gpu_pods, the agent's /incidents gpu_pods): gpu, uuid,
// namespace, pod, container, resource.
nlohmann::json gpu_pod_json(const GpuPod& p);

// A random token for markers that a document holds in place of text spliced in later: no
// string of the document (a channel name from a crafted store) can pass for one.
std::string marker_token();

// `write` with every line but the first indented by `indent`, and the final line feed dropped:
// a document written as the value of a key or an element of an array that dump(2) writes at
// that depth.
std::function<void(std::string_view)> indented(std::string indent, std::function<void(std::string_view)> write);

}  // namespace reveal::report
