// Renderers for a DetectResult. Both carry the same content; the JSON schema is documented
// in docs/DETECT_JSON.md (schema "reveal.detect/1").
#pragma once

#include <string>

#include "reveal/detect.h"

namespace reveal {

// Human-readable report: a one-screen summary first, then one section per incident.
std::string render_text(const DetectResult& r, const std::string& source);
// JSON document, pretty-printed with 2-space indent.
std::string render_json(const DetectResult& r, const std::string& source);
// "41.2 %", "12.3 MiB/s", "1.52 k/s": a value with its unit, compact.
std::string format_value(double v, const std::string& unit);
// ISO 8601 UTC, e.g. "2026-11-30T12:00:45Z".
std::string format_utc(std::int64_t unix_ns);

}  // namespace reveal
