// Renderers for a DetectResult. Both carry the same content; the JSON schema is documented
// in docs/DETECT_JSON.md (schema "reveal.detect/1").
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "reveal/offline.h"

namespace reveal {

// Human-readable report: a one-screen summary first, then one section per incident.
std::string render_text(const DetectResult& r, const std::string& source);
// JSON document, pretty-printed with 2-space indent.
std::string render_json(const DetectResult& r, const std::string& source);
// The same text handed to `write` in pieces of about 1 MiB, in order: the per-window arrays (a
// week holds 600 000 windows) are written element by element rather than built as a document,
// so memory is the result's, not a multiple of the text's.
void write_json(const DetectResult& r, const std::string& source, const std::function<void(std::string_view)>& write);

}  // namespace reveal
