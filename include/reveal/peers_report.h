// Renderers for the peers comparison of `reveal detect --peers` (a PeersResult, reveal/peers.h).
// Both carry the same content; `source` names what the hosts were read from (the store paths,
// or the Prometheus query).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "reveal/peers.h"

namespace reveal {

// Human-readable: the alignment and its notes, the ranking table (rank, host, score, anomalous
// windows of all, incidents, peak), then the odd host with its strongest channels (value vs
// the peers' median, robust z) and its full text report (render_text), or why no host stands
// out.
std::string render_peers_text(const PeersResult& pr, const std::string& source);

// JSON document of schema "reveal.peers/1" (fields in docs/FLEET.md), pretty-printed with a
// 2-space indent and a final newline; each host's `report` is its reveal.detect/1 document
// (render_json), non-finite numbers are null.
std::string render_peers_json(const PeersResult& pr, const std::string& source);
// The same text handed to `write` in pieces, a host's report at a time (written as it is
// rendered: reveal/report.h write_json), so that a fleet's reports are never one document.
// `host_report`, when given, writes a host's reveal.detect/1 document instead of write_json(h.result,
// h.name, ...): the text that call would have written, e.g. spooled when the host was scored
// before its per-window traces were dropped (reveal/peers.h PeerScored).
using PeerReportWriter = std::function<void(const PeerHost&, const std::function<void(std::string_view)>&)>;
void write_peers_json(const PeersResult& pr, const std::string& source,
                      const std::function<void(std::string_view)>& write, const PeerReportWriter& host_report = {});

}  // namespace reveal
