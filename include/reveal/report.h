// Renderers for a DetectResult. Both carry the same content; the JSON schema is documented
// in docs/DETECT_JSON.md (schema "reveal.detect/1").
#pragma once

#include <string>

#include "reveal/offline.h"

namespace reveal {

// Human-readable report: a one-screen summary first, then one section per incident.
std::string render_text(const DetectResult& r, const std::string& source);
// JSON document, pretty-printed with 2-space indent.
std::string render_json(const DetectResult& r, const std::string& source);

}  // namespace reveal
