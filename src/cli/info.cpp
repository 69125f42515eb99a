// `reveal info RUN [--json]`: what a store holds without scoring it — host, time range,
// samples, channels per probe and subsystem, size on disk and bytes per second, events and
// configuration changes. Exit 3 on a missing or corrupt store (same messages as detect).
// `reveal info MODEL [--json]`: a model file's metadata (reveal/baseline_model.h): format and
// reveal version, creation time, training stores, options, channels; --json prints the
// metadata block itself under "metadata" (schema reveal.model-info/1).
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "file_args.h"
#include "reveal/baseline_model.h"
#include "reveal/store.h"
#include "reveal/store_reader.h"
#include "reveal/units.h"

namespace reveal::cli {
namespace {

// Bytes of the store and its side files (store_side_files: WAL, SHM, head log), if any.
std::uintmax_t store_bytes(const std::string& path) {
  std::error_code ec;
  std::uintmax_t total = std::filesystem::file_size(path, ec);
  if (ec) total = 0;
  for (const auto& side : store_side_files()) {
    const auto n = std::filesystem::file_size(path + side.suffix, ec);
    if (!ec) total += n;
  }
  return total;
}

std::string source_of(const std::string& channel) {
  const auto colon = channel.find(':');
  return colon == std::string::npos ? channel : channel.substr(0, colon);
}

int model_info(const std::string& path, bool json) {
  const BaselineModel m = BaselineModel::load(path);
  std::error_code ec;
  const std::uintmax_t bytes = std::filesystem::file_size(path, ec);
  if (json) {
    const nlohmann::json doc = {{"schema", "reveal.model-info/1"}, {"model", path}, {"size_bytes", bytes},
                                {"metadata", nlohmann::json::parse(m.metadata_json())}};
    write_stdout(doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return kExitOk;
  }
  const DetectOptions& d = m.options();
  std::string o = fmt::format("Reveal baseline model — {}\n", path);
  o += fmt::format("format      version {}, written by reveal {} on {}; {} bytes\n", m.format_version(),
                   m.reveal_version(), format_utc(m.created_unix_ns()), bytes);
  o += fmt::format("trained on  {} known-good store{}\n", m.training().size(), m.training().size() == 1 ? "" : "s");
  for (const auto& t : m.training())
    o += fmt::format("  {}  host {}, {} samples every {:g} s, {} → {}, {} windows\n", t.path.empty() ? "(in memory)" : t.path,
                     t.hostname, t.samples, t.interval_s, format_utc(t.start_unix_ns), format_utc(t.end_unix_ns),
                     t.windows);
  o += fmt::format("windows     {} samples, stride {}, trailing mean {} samples; {} reference windows\n",
                   d.window.length, d.window.stride, d.window.trail, m.reference_windows());
  o += fmt::format("detectors   robust z cut {:g}, Isolation Forest cut {:g} over {} channels (Pearson |r| < {:g}, seed {}), "
                   "PCA residual {} ({} component{}, {:g} of the variance, cut {:g})\n",
                   d.z_cut, d.if_cut, m.model_channels(), d.prune_r, d.seed,
                   d.pca == PcaUse::off ? "off" : d.pca == PcaUse::fuse ? "fused" : "reported", m.pca_components(),
                   m.pca_components() == 1 ? "" : "s", d.pca_variance, d.pca_cut);
  std::map<std::string, std::size_t> by_source, by_subsystem;
  for (const auto& c : m.channels()) {
    ++by_source[source_of(c.name)];
    ++by_subsystem[std::string(to_string(c.subsystem))];
  }
  o += fmt::format("channels    {}\n", m.channels().size());
  for (const auto& [src, k] : by_source) o += fmt::format("  {:<16} {}\n", src, k);
  o += "by subsystem:";
  for (const auto& [sub, k] : by_subsystem) o += fmt::format(" {} {};", sub, k);
  o.back() = '\n';
  write_stdout(o);
  return kExitOk;
}

int info(const std::string& path, bool json) {
  check_input_path("store", path);
  if (is_model_file(path)) return model_info(path, json);
  // What a store holds, read in bounded memory: its tables, and the samples' times a chunk at a
  // time (no channel kept, so no value is decoded).
  Recording rec;
  std::size_t n = 0;
  std::int64_t first_ns = 0, last_ns = 0;
  {
    StoreReader reader(path);
    rec.meta = reader.meta();
    rec.channels = reader.channels();
    rec.events = reader.events();
    reader.config(rec.config, rec.config_changes);
    StoreReader times(path, [](const ChannelInfo&) { return false; });
    SampleBlock block;
    times.begin_samples();
    while (times.next_samples(block)) {
      if (!n) first_ns = block.t_unix_ns.front();
      last_ns = block.t_unix_ns.back();
      n += block.t_unix_ns.size();
    }
    // A recorder that was killed never wrote its end: take it from the last sample (as load_recording()).
    if (!rec.meta.complete && n) rec.meta.end_unix_ns = last_ns;
  }
  const RunMetadata& m = rec.meta;
  const double span_s = n >= 2 ? double(last_ns - first_ns) * 1e-9 : 0.0;
  const double covered_s = span_s + (n ? m.interval_s : 0.0);  // n samples cover n intervals
  const std::uintmax_t bytes = store_bytes(path);
  const double bytes_per_s = covered_s > 0 ? double(bytes) / covered_s : 0.0;
  std::map<std::string, std::size_t> by_source, by_subsystem;
  for (const auto& c : rec.channels) {
    ++by_source[source_of(c.name)];
    ++by_subsystem[std::string(to_string(c.subsystem))];
  }
  std::size_t available = 0;
  for (const auto& p : m.probes) available += p.available;

  if (json) {
    nlohmann::json probes = nlohmann::json::array();
    for (const auto& p : m.probes)
      probes.push_back({{"name", p.name}, {"available", p.available}, {"channels", p.n_channels},
                        {"reason", p.reason}});
    nlohmann::json doc = {
        {"schema", "reveal.info/1"},
        {"store", path},
        {"host", {{"hostname", m.hostname}, {"kernel", m.kernel}, {"cpu_model", m.cpu_model}, {"cores", m.cores}}},
        {"start", n ? format_utc(first_ns) : ""},
        {"end", n ? format_utc(last_ns) : ""},
        {"start_unix_ns", n ? first_ns : 0},
        {"end_unix_ns", n ? last_ns : 0},
        {"interval_s", m.interval_s},
        {"samples", n},
        {"duration_s", covered_s},
        {"complete", m.complete},
        {"command", m.command},
        {"exit_code", m.exit_code},
        {"root", m.root},
        {"reveal_version", m.reveal_version},
        {"channels", rec.channels.size()},
        {"channels_by_source", by_source},
        {"channels_by_subsystem", by_subsystem},
        {"probes", probes},
        {"events", rec.events.size()},
        {"config_keys", rec.config.size()},
        {"config_changes", rec.config_changes.size()},
        {"size_bytes", bytes},
        {"bytes_per_second", bytes_per_s},
    };
    write_stdout(doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return kExitOk;
  }
  std::string o = fmt::format("Reveal store — {}\n", path);
  // Imported stores (SMD, CSV, nvidia-smi logs) know no CPU model, core count or kernel: show
  // only what the store holds.
  std::vector<std::string> hw;
  if (!m.cpu_model.empty()) hw.push_back(m.cpu_model);
  if (m.cores > 0) hw.push_back(fmt::format("{} cores", m.cores));
  if (!m.kernel.empty()) hw.push_back("kernel " + m.kernel);
  o += fmt::format("host        {}{}\n", m.hostname.empty() ? "(unknown)" : m.hostname,
                   hw.empty() ? "" : fmt::format(" ({})", fmt::join(hw, ", ")));
  if (n)
    o += fmt::format("time        {} → {} ({:.0f} s, {} samples every {:g} s){}\n", format_utc(first_ns),
                     format_utc(last_ns), covered_s, n, m.interval_s,
                     m.complete ? "" : "; the recorder did not finish cleanly");
  else
    o += "time        no samples\n";
  if (!m.command.empty()) o += fmt::format("command     {} (exit {})\n", m.command, m.exit_code);
  o += fmt::format("size        {} bytes, {:.0f} bytes/s\n", bytes, bytes_per_s);
  o += fmt::format("channels    {} from {} of {} probes\n", rec.channels.size(), available, m.probes.size());
  for (const auto& [src, k] : by_source) o += fmt::format("  {:<16} {}\n", src, k);
  o += "by subsystem:";
  for (const auto& [sub, k] : by_subsystem) o += fmt::format(" {} {};", sub, k);
  o.back() = '\n';
  o += fmt::format("events      {}\nconfig      {} keys, {} changes during the run\n", rec.events.size(),
                   rec.config.size(), rec.config_changes.size());
  for (const auto& p : m.probes)
    if (!p.available) o += fmt::format("unavailable {}: {}\n", p.name, p.reason);
  write_stdout(o);
  return kExitOk;
}

}  // namespace

Action add_info(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto* sub = app.add_subcommand("info", "Describe a store (host, time range, channels, size, bytes per second) or a model file");
  set_help_footer(sub, {"reveal info run.db", "reveal info good.model --json"});
  sub->add_option("store", *path, "Store written by `reveal record`, or a model file from `reveal train`")->required();
  sub->add_flag("--json", *json, "Emit JSON instead of text");
  return [path, json]() { return info(*path, *json); };
}

}  // namespace reveal::cli
