#include "reveal/incident.h"

#include <fmt/format.h>

namespace reveal {

namespace {
double span_s(const Incident& inc, double interval_s) {
  const std::int64_t to = inc.symptom_end_unix_ns > 0 ? inc.symptom_end_unix_ns : inc.end_unix_ns;
  return double(to - inc.start_unix_ns) * 1e-9 + (interval_s > 0 ? interval_s : 0.0);
}
}  // namespace

bool is_transient(const IncidentRule& rule, const Incident& inc, double interval_s) {
  return span_s(inc, interval_s) < rule.min_duration_s;
}

std::string transient_text(const IncidentRule& rule, const Incident& inc, double interval_s) {
  return fmt::format("a transient: its symptoms lasted {:.1f} s, under the {:g} s an incident must last (min_duration)",
                     span_s(inc, interval_s), rule.min_duration_s);
}

IncidentTracker::IncidentTracker(IncidentRule rule) { set_rule(rule); }

void IncidentTracker::set_rule(IncidentRule rule) {
  k_ = rule.min_windows < 1 ? 1 : std::size_t(rule.min_windows);
  m_ = rule.end_after < 1 ? 1 : std::size_t(rule.end_after);
  settle_ = rule.settle_windows;
}

IncidentTracker::Change IncidentTracker::push(std::size_t w, bool anomalous, bool sustained) {
  if (anomalous) {
    ++run_;
    quiet_ = 0;
    if (open_) {
      last_ = w;
      return Change::extended;
    }
    if (run_ >= (sustained ? k_ : k_ + 1) && w >= settle_) {
      open_ = true;
      first_ = w + 1 - run_;
      last_ = w;
      return Change::opened;
    }
    return Change::none;
  }
  run_ = 0;
  if (open_ && ++quiet_ >= m_) {
    open_ = false;
    quiet_ = 0;
    return Change::closed;
  }
  return Change::none;
}

std::vector<std::pair<std::size_t, std::size_t>> find_incidents(std::span<const bool> anomalous,
                                                                IncidentRule rule,
                                                                std::span<const bool> sustained) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  IncidentTracker t(rule);
  for (std::size_t w = 0; w < anomalous.size(); ++w) {
    const bool sus = sustained.empty() || (w < sustained.size() && sustained[w]);
    if (t.push(w, anomalous[w], sus) == IncidentTracker::Change::closed) out.emplace_back(t.first(), t.last());
  }
  if (t.open()) out.emplace_back(t.first(), t.last());
  return out;
}

std::string channel_label(const std::string& name) {
  const auto colon = name.find(':');
  const auto dot = name.find('.', colon == std::string::npos ? 0 : colon + 1);
  return dot == std::string::npos ? std::string() : name.substr(dot + 1);
}

}  // namespace reveal
