#include "telemetry/procfs/meminfo.h"

#include <cmath>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "proc.meminfo";

// "MemTotal:       24683656 kB" -> key "MemTotal", rest "       24683656 kB".
bool split_key(std::string_view line, std::string_view& key, std::string_view& rest) {
  const auto colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  key = line.substr(0, colon);
  rest = line.substr(colon + 1);
  return true;
}
}  // namespace

ProbeStatus ProcMeminfoProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  keys_ = {};
  std::string err;
  if (!file_.open(root / "proc/meminfo", &err)) return {false, err};
  auto text = file_.read();
  if (!text) return {false, file_.path().string() + ": unreadable or too large"};
  std::string_view rest = *text;
  while (!rest.empty()) {
    std::string_view key, values;
    if (!split_key(next_line(rest), key, values)) continue;
    if (!parse_u64(next_token(values))) continue;
    const bool kb = next_token(values) == "kB";
    keys_.add(std::string(key), channels_.size());
    channels_.push_back({channel_name(kSource, key), kb ? "kB" : "count", Kind::gauge,
                         Subsystem::memory, 64, "/proc/meminfo " + std::string(key)});
  }
  if (channels_.empty()) return {false, file_.path().string() + ": no keys"};
  return {true, {}};
}

void ProcMeminfoProbe::sample(std::span<double> out) {
  for (double& v : out) v = std::nan("");
  auto text = file_.read();
  if (!text) return;
  std::string_view rest = *text;
  while (!rest.empty()) {
    std::string_view key, values;
    if (!split_key(next_line(rest), key, values)) continue;
    const std::size_t i = keys_.find(key);
    if (i != KeyIndex::npos) out[keys_[i].slot] = next_u64_as_double(values);
  }
}

}  // namespace reveal::telemetry
