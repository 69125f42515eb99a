#include "reveal/channel.h"

#include <array>
#include <utility>

namespace reveal {
namespace {
constexpr std::array<std::pair<Kind, std::string_view>, 3> kKinds{{
    {Kind::counter, "counter"}, {Kind::gauge, "gauge"}, {Kind::state, "state"}}};
constexpr std::array<std::pair<Subsystem, std::string_view>, 8> kSubsystems{{
    {Subsystem::cpu, "cpu"},
    {Subsystem::memory, "memory"},
    {Subsystem::network, "network"},
    {Subsystem::storage, "storage"},
    {Subsystem::gpu, "gpu"},
    {Subsystem::interconnect, "interconnect"},
    {Subsystem::power_thermal, "power/thermal"},
    {Subsystem::system, "system"}}};
}  // namespace

std::string_view to_string(Kind k) {
  for (auto& [v, s] : kKinds) if (v == k) return s;
  return "unknown";
}
std::string_view to_string(Subsystem x) {
  for (auto& [v, s] : kSubsystems) if (v == x) return s;
  return "unknown";
}
std::optional<Kind> parse_kind(std::string_view s) {
  for (auto& [v, n] : kKinds) if (n == s) return v;
  return std::nullopt;
}
std::optional<Subsystem> parse_subsystem(std::string_view s) {
  for (auto& [v, n] : kSubsystems) if (n == s) return v;
  return std::nullopt;
}

}  // namespace reveal
