#include "telemetry/procfs/vmstat.h"

#include <cmath>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "proc.vmstat";

ChannelInfo make_channel(std::string_view key) {
  ChannelInfo c;
  c.name = channel_name(kSource, key);
  c.help = "/proc/vmstat " + std::string(key);
  if (key.substr(0, 3) == "nr_") {
    c.unit = "pages";
    c.kind = Kind::gauge;
    c.subsystem = Subsystem::memory;
  } else if (key == "pgpgin" || key == "pgpgout") {
    c.unit = "kB";
    c.kind = Kind::counter;
    c.subsystem = Subsystem::storage;
  } else {
    c.unit = "count";
    c.kind = Kind::counter;
    c.subsystem = Subsystem::memory;
  }
  return c;
}
}  // namespace

ProbeStatus ProcVmstatProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  keys_ = {};
  std::string err;
  if (!file_.open(root / "proc/vmstat", &err)) return {false, err};
  auto text = file_.read();
  if (!text) return {false, file_.path().string() + ": unreadable or too large"};
  std::string_view rest = *text;
  while (!rest.empty()) {
    std::string_view line = next_line(rest);
    std::string_view key = next_token(line);
    if (key.empty() || !parse_i64(next_token(line))) continue;
    keys_.add(std::string(key), channels_.size());
    channels_.push_back(make_channel(key));
  }
  if (channels_.empty()) return {false, file_.path().string() + ": no keys"};
  return {true, {}};
}

void ProcVmstatProbe::sample(std::span<double> out) {
  for (double& v : out) v = std::nan("");
  auto text = file_.read();
  if (!text) return;
  std::string_view rest = *text;
  while (!rest.empty()) {
    std::string_view line = next_line(rest);
    std::size_t i = keys_.match_next(line);  // the layout seen at open: no tokenising
    if (i == KeyIndex::npos) i = keys_.find(next_token(line));
    // Signed: a few nr_* gauges can transiently read negative on some kernels.
    if (i != KeyIndex::npos) out[keys_[i].slot] = next_i64_as_double(line);
  }
}

}  // namespace reveal::telemetry
