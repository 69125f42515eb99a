#include "telemetry/procfs/loadavg.h"

#include <array>
#include <cmath>

namespace reveal::telemetry {
namespace {
constexpr std::string_view kSource = "proc.loadavg";
constexpr std::size_t kChannels = 5;

// Fills out[0..4]; returns false if the text does not look like /proc/loadavg.
bool parse(std::string_view text, std::span<double> out) {
  bool ok = true;
  for (std::size_t i = 0; i < 3; ++i) {
    auto v = parse_double(next_token(text));
    out[i] = v ? *v : std::nan("");
    ok = ok && v.has_value();
  }
  std::string_view frac = next_token(text);
  const auto slash = frac.find('/');
  auto run = parse_u64(frac.substr(0, slash));
  auto all = slash == std::string_view::npos ? std::nullopt : parse_u64(frac.substr(slash + 1));
  out[3] = run ? static_cast<double>(*run) : std::nan("");
  out[4] = all ? static_cast<double>(*all) : std::nan("");
  return ok && run && all;
}
}  // namespace

ProbeStatus ProcLoadavgProbe::open(const std::filesystem::path& root) {
  channels_.clear();
  std::string err;
  if (!file_.open(root / "proc/loadavg", &err)) return {false, err};
  auto text = file_.read();
  std::array<double, kChannels> tmp{};
  if (!text || !parse(*text, tmp))
    return {false, file_.path().string() + ": unreadable or malformed"};
  const auto add = [&](std::string_view field, std::string_view help) {
    channels_.push_back({channel_name(kSource, field), "count", Kind::gauge, Subsystem::cpu, 64,
                         std::string(help)});
  };
  add("load1", "load average over 1 minute (runnable + uninterruptible tasks)");
  add("load5", "load average over 5 minutes");
  add("load15", "load average over 15 minutes");
  add("running", "currently runnable scheduling entities (threads)");
  add("threads", "scheduling entities (threads) that currently exist");
  return {true, {}};
}

void ProcLoadavgProbe::sample(std::span<double> out) {
  for (double& v : out) v = std::nan("");
  if (auto text = file_.read()) parse(*text, out);
}

}  // namespace reveal::telemetry
