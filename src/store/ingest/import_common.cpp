// Shared importer helpers, time parsing and subsystem guesses (no store code: the fuzzers link
// this without SQLite).
#include "store/ingest/import_common.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>

#include "reveal/units.h"
#include "reveal/version.h"
#include "util/utf8.h"

namespace reveal {
namespace importer {

std::vector<Line> split_lines(std::string_view data) {
  if (data.starts_with("\xEF\xBB\xBF")) data.remove_prefix(3);
  std::vector<Line> lines;
  std::size_t number = 1;
  while (!data.empty()) {
    const std::size_t nl = data.find('\n');
    std::string_view text = data.substr(0, nl);
    if (text.ends_with('\r')) text.remove_suffix(1);
    lines.push_back({text, number++});
    if (nl == std::string_view::npos) break;
    data.remove_prefix(nl + 1);
  }
  return lines;
}

void fail_at(const std::string& file, std::size_t line, std::size_t col, const std::string& message) {
  throw ImportError(fmt::format("{}:{}:{}: {}", file, line, col, message));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<double> parse_value(std::string_view s, bool allow_gap) {
  s = trim(s);
  if (s.empty() || s == "nan" || s == "NaN" || s == "NAN") {
    if (allow_gap) return std::nan("");
    return std::nullopt;
  }
  if (s.front() == '+') s.remove_prefix(1);
  if (s.empty() || s.front() == '+') return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string sanitise(std::string_view s, std::string_view extra) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (const std::size_t n = utf8_sequence(s.substr(i)); n > 1) {  // "é", "温度": kept, so they stay distinct
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || extra.find(c) != std::string_view::npos ? c : '_';
    ++i;
  }
  return out;
}

std::string quote(std::string_view s) {
  std::string out = "'";
  for (std::size_t i = 0; i < s.size() && i < 40; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    out += std::isprint(c) ? std::string(1, char(c)) : fmt::format("\\x{:02x}", c);
  }
  return out + (s.size() > 40 ? "...'" : "'");
}

std::int64_t start_ns(const ImportOptions& opt) { return opt.start_unix_ns.value_or(kDefaultImportStartNs); }

std::int64_t interval_ns(const ImportOptions& opt) {
  if (!std::isfinite(opt.interval_s) || opt.interval_s <= 0 || opt.interval_s > 1e6)
    throw ImportError(fmt::format("interval {} s is not a positive duration", opt.interval_s));
  return std::max<std::int64_t>(1, std::llround(opt.interval_s * 1e9));
}

std::string file_stem(std::string_view path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
  const std::size_t dot = path.find_last_of('.');
  if (dot != std::string_view::npos && dot > 0) path = path.substr(0, dot);
  return std::string(path);
}

void set_import_metadata(RunMetadata& m, const std::string& format, const std::string& hostname,
                         const std::vector<std::string>& inputs, std::size_t channels) {
  m.hostname = hostname;
  m.command = "reveal import " + format;
  for (const auto& in : inputs) m.command += " " + in;
  m.root = "";
  m.reveal_version = kVersion;
  m.probes = {{"import." + format, true, "", channels}};
  m.complete = true;
}

double median_interval_s(std::vector<std::uint64_t>& gaps, double fallback_interval_s) {
  if (gaps.empty()) return fallback_interval_s;
  std::nth_element(gaps.begin(), gaps.begin() + std::ptrdiff_t(gaps.size() / 2), gaps.end());
  return double(gaps[gaps.size() / 2]) * 1e-9;
}

void finish_metadata(Recording& rec, const std::string& format, const std::string& hostname,
                     const std::vector<std::string>& inputs, double fallback_interval_s) {
  RunMetadata& m = rec.meta;
  set_import_metadata(m, format, hostname, inputs, rec.channels.size());
  m.start_unix_ns = rec.t_unix_ns.front();
  m.end_unix_ns = rec.t_unix_ns.back();
  std::vector<std::uint64_t> gaps;  // times increase, so the unsigned difference is exact
  for (std::size_t i = 1; i < rec.t_unix_ns.size(); ++i)
    gaps.push_back(std::uint64_t(rec.t_unix_ns[i]) - std::uint64_t(rec.t_unix_ns[i - 1]));
  m.interval_s = median_interval_s(gaps, fallback_interval_s);
}

TimeFormat detect_time_format(std::string_view first) {
  if (parse_utc_time(first)) return {true, 1};
  const auto v = importer::parse_value(first, false);
  if (!v) return {false, 1};  // reported by parse_time
  const double a = std::fabs(*v);
  if (a < 1e11) return {false, 1'000'000'000};
  if (a < 1e14) return {false, 1'000'000};
  if (a < 1e17) return {false, 1'000};
  return {false, 1};
}

namespace {
std::optional<std::int64_t> parse_unix_or_iso(std::string_view text, const TimeFormat& tf) {
  if (tf.iso) return parse_utc_time(text);
  if (const auto i = importer::parse_int(text)) {
    std::int64_t ns = 0;
    if (__builtin_mul_overflow(*i, tf.mult, &ns)) return std::nullopt;
    return ns;
  }
  const auto d = tf.mult == 1 ? std::nullopt : importer::parse_value(text, false);  // ns are whole
  if (!d) return std::nullopt;
  const double ns = *d * double(tf.mult);
  if (!(std::fabs(ns) < 9.2e18)) return std::nullopt;
  return std::llround(ns);
}

}  // namespace

std::optional<std::int64_t> parse_time(std::string_view text, const TimeFormat& tf) {
  std::optional<std::int64_t> t = parse_unix_or_iso(text, tf);
  if (t && *t < 0) return std::nullopt;
  return t;
}

}  // namespace importer

Subsystem guess_subsystem(std::string_view name) {
  // Reveal's own sources (docs/METRICS.md), by the part before ':'.
  static const std::map<std::string_view, Subsystem, std::less<>> kSources{
      {"proc.stat", Subsystem::cpu},           {"proc.loadavg", Subsystem::cpu},
      {"sys.cpufreq", Subsystem::power_thermal}, {"sys.cpuidle", Subsystem::cpu},
      {"perf", Subsystem::cpu},                {"proc.meminfo", Subsystem::memory},
      {"proc.vmstat", Subsystem::memory},      {"proc.net.dev", Subsystem::network},
      {"proc.net.snmp", Subsystem::network},   {"sys.net", Subsystem::network},
      {"ethtool", Subsystem::network},         {"proc.diskstats", Subsystem::storage},
      {"sys.rapl", Subsystem::power_thermal},  {"sys.hwmon", Subsystem::power_thermal},
      {"sys.thermal", Subsystem::power_thermal}, {"rdma", Subsystem::interconnect},
      {"nvml", Subsystem::gpu},                {"proc.pressure", Subsystem::system},
      {"cgroup", Subsystem::system},           {"derived", Subsystem::system},
      {"reveal.sampler", Subsystem::cpu}};
  const std::size_t colon = name.find(':');
  if (colon != std::string_view::npos) {
    const std::string_view source = name.substr(0, colon);
    // As the proc.diskstats probe classifies its devices: zram (compressed RAM) is memory.
    if (source == "proc.diskstats" && name.find(".zram", colon) != std::string_view::npos) return Subsystem::memory;
    if (auto it = kSources.find(source); it != kSources.end()) return it->second;
  }
  // Otherwise the first word (split at anything but letters and digits) that names a part.
  std::size_t i = 0;
  while (i < name.size()) {
    while (i < name.size() && !std::isalnum(static_cast<unsigned char>(name[i]))) ++i;
    std::string w;
    while (i < name.size() && std::isalnum(static_cast<unsigned char>(name[i])))
      w += char(std::tolower(static_cast<unsigned char>(name[i++])));
    if (w.empty()) break;
    const auto is = [&](std::initializer_list<std::string_view> words) {
      return std::find(words.begin(), words.end(), w) != words.end();
    };
    const auto digits_after = [&](std::string_view prefix) {
      return w.starts_with(prefix) &&
             std::all_of(w.begin() + prefix.size(), w.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (digits_after("gpu") || is({"nvml", "dcgm", "nvidia"})) return Subsystem::gpu;
    if (is({"infiniband", "rdma", "nvlink", "pcie"})) return Subsystem::interconnect;
    if (is({"rapl", "hwmon", "thermal", "temp", "temperature", "power", "energy", "watts", "joules", "fan",
            "celsius"}))
      return Subsystem::power_thermal;
    if (w.starts_with("disk") || digits_after("nvme") || is({"block", "filesystem", "iops"})) return Subsystem::storage;
    if (digits_after("eth") || is({"network", "net", "netstat", "sockstat", "tcp", "udp", "icmp", "packets"}))
      return Subsystem::network;
    if (w.starts_with("mem") || is({"memory", "vmstat", "swap", "oom", "shmem"})) return Subsystem::memory;
    if (digits_after("cpu") || is({"load", "loadavg", "perf", "sched", "turbostat", "instructions", "cycles"}))
      return Subsystem::cpu;
  }
  return Subsystem::system;
}

namespace importer {

std::string at(const std::string& file, std::size_t line, std::size_t col, const std::string& what) {
  return fmt::format("{}:{}:{}: {}", file, line, col, what);
}

void tolerate(const ImportOptions& opt, std::size_t ImportNotes::*count, std::string ImportNotes::*first,
              const std::string& file, std::size_t line, std::size_t col, const std::string& what) {
  if (opt.strict) fail_at(file, line, col, what);
  if (!opt.notes) return;
  ++(opt.notes->*count);
  if ((opt.notes->*first).empty()) opt.notes->*first = at(file, line, col, what);
}

TimeOrder::Verdict TimeOrder::next(std::int64_t t, const std::string& file, std::size_t line, std::size_t col,
                                   std::string_view text, const char* what_row) {
  if (!last_ || t > *last_) {
    last_ = t;
    stepped_back_ = false;
    return Verdict::append;
  }
  const std::string what = "time " + quote(text) + " is not after the previous " + what_row + "'s";
  if (opt_.strict) fail_at(file, line, col, what);
  if (t == *last_) {
    if (opt_.notes) ++opt_.notes->duplicate_times;
    return Verdict::replace_last;
  }
  if (opt_.notes) {
    ++opt_.notes->backward_rows;
    if (opt_.notes->first_backward.empty()) opt_.notes->first_backward = at(file, line, col, what);
  }
  if (!stepped_back_) {
    stepped_back_ = true;
    if (opt_.notes) ++opt_.notes->clock_steps;
    const double step_s = double(t - *last_) * 1e-9;
    events_.push_back({*last_, "import", "clock_step", step_s,
                       fmt::format("the time went back {:.3f} s at {}:{}; rows dropped until it passed the last kept "
                                   "row's",
                                   -step_s, file, line)});
  }
  return Verdict::drop;
}

}  // namespace importer

std::string ImportNotes::summary() const {
  std::vector<std::string> parts;
  const auto add = [&](std::size_t n, const char* one, const char* many, const std::string& first) {
    if (n == 0) return;
    parts.push_back(fmt::format("{} {}", n, n == 1 ? one : many) + (first.empty() ? "" : " (first: " + first + ")"));
  };
  add(gap_values, "value became a gap", "values became gaps", first_gap);
  add(ragged_rows, "ragged row skipped", "ragged rows skipped", first_ragged);
  add(bad_time_rows, "row without a readable time skipped", "rows without a readable time skipped", first_bad_time);
  add(duplicate_times, "row at its predecessor's time replaced it", "rows at their predecessor's time replaced it", "");
  add(backward_rows, "row whose time went back dropped", "rows whose time went back dropped", first_backward);
  add(clock_steps, "clock step (event clock_step)", "clock steps (events clock_step)", "");
  add(gpus_lost, "GPU lost (event gpu_lost)", "GPUs lost (events gpu_lost)", "");
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

}  // namespace reveal
