// The agent's HTTP side: its routes over the shared snapshot and how it binds its address.
//   GET /metrics    Prometheus text exposition (render_metrics), rendered at most once per
//                   sample and served from that cache to every scrape until the next one
//   GET /incidents  reveal.incidents/1 JSON (render_incidents_json)
//   GET /healthz    "ok" (200) while samples arrive (the last one younger than 3 intervals
//                   + 2 s) or after a replay ended; 503 with the reason otherwise
//   GET /           the list of paths
//   POST/PUT/PATCH/DELETE on those paths: 405 with "Allow: GET, HEAD"
// Server settings: SO_REUSEADDR only (no SO_REUSEPORT: a second agent cannot share the port),
// 16 worker threads, 1 s read and keep-alive timeouts.
#pragma once

#include <string>
#include <utility>

#include <httplib.h>

#include "agent/snapshot.h"

namespace reveal::agent {

// Registers the routes and the server settings above; the handlers read `shared` under its
// mutex (it must outlive the server).
void add_routes(httplib::Server& server, SharedState& shared);

// Binds `server` to `address` (host, port) without serving yet. Throws std::runtime_error (one
// line naming `listen`, the configured text) when the host does not resolve or the port
// cannot be bound.
void bind_address(httplib::Server& server, const std::pair<std::string, int>& address, const std::string& listen);

}  // namespace reveal::agent
