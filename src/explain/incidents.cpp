#include "reveal/incident.h"

namespace reveal {

std::vector<std::pair<std::size_t, std::size_t>> find_incidents(std::span<const bool> anomalous,
                                                                IncidentRule rule) {
  const std::size_t k = rule.min_windows < 1 ? 1 : rule.min_windows;
  const std::size_t m = rule.end_after < 1 ? 1 : rule.end_after;
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t run = 0;        // current streak of anomalous windows
  std::size_t quiet = 0;      // current streak of normal windows while open
  bool open = false;
  std::size_t first = 0, last = 0;
  for (std::size_t w = 0; w < anomalous.size(); ++w) {
    if (anomalous[w]) {
      ++run;
      quiet = 0;
      if (open) {
        last = w;
      } else if (run >= k) {
        open = true;
        first = w + 1 - run;
        last = w;
      }
    } else {
      run = 0;
      if (open && ++quiet >= m) {
        out.emplace_back(first, last);
        open = false;
      }
    }
  }
  if (open) out.emplace_back(first, last);
  return out;
}

std::string channel_label(const std::string& name) {
  const auto colon = name.find(':');
  const auto dot = name.find('.', colon == std::string::npos ? 0 : colon + 1);
  return dot == std::string::npos ? std::string() : name.substr(dot + 1);
}

}  // namespace reveal
