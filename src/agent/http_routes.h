// The agent's HTTP routes over the shared snapshot (the server itself: http_server.h).
//   GET /metrics    Prometheus text exposition (render_metrics), rendered at most once per
//                   sample and served from that cache to every scrape until the next one
//   GET /incidents  reveal.incidents/1 JSON (render_incidents_json)
//   GET /healthz    "ok" (200) while samples arrive (the last one younger than 3 intervals
//                   + 2 s) or after a replay ended, and the store takes them; 503 with the
//                   reason otherwise ("store write failed, ...: <error>" once a write failed)
//   GET /           the list of paths
//   any other path: 404. HEAD as GET without the body. Every other method is answered by the
//   server before routing, its body unread: 405 with "Allow: GET, HEAD" on the paths above
//   (served_path()), 404 on others.
#pragma once

#include "agent/http_server.h"
#include "agent/snapshot.h"

namespace reveal::agent {

// The handler of the routes above; it reads `shared` under its mutex (`shared` must outlive
// the server that calls it).
HttpHandler routes(SharedState& shared);
// Whether `path` is one of the routes above.
bool served_path(std::string_view path);

}  // namespace reveal::agent
