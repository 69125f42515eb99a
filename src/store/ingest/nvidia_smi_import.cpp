// nvidia-smi --query-gpu=... --format=csv[,nounits] logs -> Recording (reveal/ingest.h,
// "nvidia-smi").
#include <algorithm>
#include <cmath>
#include <map>

#include "reveal/units.h"
#include "store/ingest/import_common.h"

namespace reveal {
namespace {

using importer::fail_at;
using importer::Field;
using importer::quote;

// Query fields with an nvml probe channel of the same meaning (src/telemetry/nvml/nvml_reads.cpp).
struct Mapping {
  std::string_view query, field, unit;  // nvidia-smi field, nvml channel field, nvml unit
  std::string_view header_unit;         // the unit nvidia-smi must report for the mapping to hold
  double scale;                         // nvidia-smi value × scale = nvml value
  Kind kind;
  Subsystem subsystem;
};
constexpr double kMiB = 1024.0 * 1024.0;
constexpr auto G = Subsystem::gpu, PT = Subsystem::power_thermal, IC = Subsystem::interconnect;
constexpr Mapping kMappings[] = {
    {"utilization.gpu", "utilization_gpu", "%", "%", 1, Kind::gauge, G},
    {"utilization.memory", "utilization_memory", "%", "%", 1, Kind::gauge, G},
    {"memory.used", "memory_used", "bytes", "MiB", kMiB, Kind::gauge, G},
    {"memory.free", "memory_free", "bytes", "MiB", kMiB, Kind::gauge, G},
    {"memory.total", "memory_total", "bytes", "MiB", kMiB, Kind::gauge, G},
    {"power.draw", "power_usage", "W", "W", 1, Kind::gauge, PT},
    {"enforced.power.limit", "enforced_power_limit", "W", "W", 1, Kind::gauge, PT},
    {"power.limit", "enforced_power_limit", "W", "W", 1, Kind::gauge, PT},
    {"temperature.gpu", "temperature_gpu", "C", "", 1, Kind::gauge, PT},
    {"fan.speed", "fan_speed", "%", "%", 1, Kind::gauge, PT},
    {"clocks.sm", "clocks_sm", "MHz", "MHz", 1, Kind::gauge, G},
    {"clocks.current.sm", "clocks_sm", "MHz", "MHz", 1, Kind::gauge, G},
    {"clocks.mem", "clocks_mem", "MHz", "MHz", 1, Kind::gauge, G},
    {"clocks.current.memory", "clocks_mem", "MHz", "MHz", 1, Kind::gauge, G},
    {"pcie.link.gen.current", "pcie_link_gen_current", "gen", "", 1, Kind::gauge, IC},
    {"pcie.link.gen.max", "pcie_link_gen_max", "gen", "", 1, Kind::gauge, IC},
    {"pcie.link.width.current", "pcie_link_width_current", "lanes", "", 1, Kind::gauge, IC},
    {"pcie.link.width.max", "pcie_link_width_max", "lanes", "", 1, Kind::gauge, IC},
    {"pstate", "pstate", "pstate", "", 1, Kind::state, G},
};

struct Column {
  std::string query, unit;  // "utilization.gpu", "%"
  const Mapping* mapping = nullptr;
  bool text = false;        // a label like name or pci.bus_id (or a field always [N/A]): not imported
};

std::vector<Field> split_commas(std::string_view s) {
  std::vector<Field> cells;
  std::size_t i = 0;
  while (true) {
    const std::size_t comma = s.find(',', i);
    const std::string_view raw = s.substr(i, comma == std::string_view::npos ? std::string_view::npos : comma - i);
    std::size_t lead = 0;
    while (lead < raw.size() && (raw[lead] == ' ' || raw[lead] == '\t')) ++lead;
    cells.push_back({importer::trim(raw), i + lead + 1});
    if (comma == std::string_view::npos) break;
    i = comma + 1;
  }
  return cells;
}

bool not_available(std::string_view v) {
  return v.empty() || v == "N/A" || (v.starts_with('[') && v.ends_with(']'));  // [N/A], [Not Supported], ...
}

// The number in "45 %", "1024 MiB", "250.00 W", "P0" (pstate), "62".
std::optional<double> number(std::string_view v, bool pstate) {
  v = v.substr(0, v.find(' '));
  if (pstate) {
    if (v.size() < 2 || v[0] != 'P') return std::nullopt;
    v.remove_prefix(1);
  }
  return importer::parse_value(v, false);
}

// A line nvidia-smi prints instead of a GPU's row when it cannot reach the GPU, e.g. "Unable to
// determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system to recover
// this GPU".
bool gpu_lost_line(std::string_view line) { return line.find("GPU is lost") != std::string_view::npos; }

// The unit a value carries after its number ("45 %" -> "%"), "" when none.
std::string_view value_unit(std::string_view v) {
  const std::size_t space = v.find(' ');
  return space == std::string_view::npos ? std::string_view{} : importer::trim(v.substr(space + 1));
}

}  // namespace

Recording import_nvidia_smi(const ImportInput& in, const ImportOptions& opt) {
  std::vector<importer::Line> lines = importer::split_lines(in.data);
  std::erase_if(lines, [](const importer::Line& l) { return importer::trim(l.text).empty(); });
  const bool headerless = !opt.fields.empty();
  if (lines.empty()) fail_at(in.name, 1, 1, headerless ? "no data rows (empty input)" : "no header line (empty input)");
  std::vector<Field> header;
  if (headerless) {
    for (const auto& f : opt.fields) header.push_back({f, 1});
  } else {
    header = split_commas(lines[0].text);
  }
  const std::size_t header_line = headerless ? 0 : lines[0].number;
  std::vector<Column> cols;
  std::optional<std::size_t> time_col, index_col;
  for (std::size_t c = 0; c < header.size(); ++c) {
    std::string_view h = header[c].text;
    Column col;
    if (const std::size_t bracket = h.find(" ["); bracket != std::string_view::npos && h.ends_with(']')) {
      col.unit = std::string(h.substr(bracket + 2, h.size() - bracket - 3));
      h = h.substr(0, bracket);
    }
    col.query = std::string(h);
    if (col.query.empty() || col.query.find_first_of(" \"") != std::string::npos) {
      if (headerless) throw ImportError("--fields: " + quote(header[c].text) + " is not an nvidia-smi query field");
      fail_at(in.name, header_line, header[c].col, quote(header[c].text) + " is not an nvidia-smi query field");
    }
    if (col.query == "timestamp") time_col = c;
    if (col.query == "index") index_col = c;
    cols.push_back(std::move(col));
  }
  if (!time_col) {
    if (headerless) throw ImportError("--fields: no timestamp field (the log must have been written with timestamp first)");
    fail_at(in.name, header_line, 1, "no timestamp column (query timestamp first: --query-gpu=timestamp,index,...)");
  }

  // Rows, and the "GPU is lost" lines between them (by the row they precede).
  struct Lost {
    std::size_t before_row;
    std::size_t line;
    std::string text;
  };
  std::vector<Lost> lost;
  std::vector<std::vector<Field>> rows;
  std::vector<std::size_t> row_line;
  for (std::size_t l = headerless ? 0 : 1; l < lines.size(); ++l) {
    if (gpu_lost_line(lines[l].text) && !opt.strict) {
      lost.push_back({rows.size(), lines[l].number, std::string(importer::trim(lines[l].text))});
      continue;
    }
    std::vector<Field> cells = split_commas(lines[l].text);
    if (cells.size() != header.size()) {
      importer::tolerate(opt, &ImportNotes::ragged_rows, &ImportNotes::first_ragged, in.name, lines[l].number,
                         cells.size() > header.size() ? cells[header.size()].col : lines[l].text.size() + 1,
                         fmt::format("{} fields, the header has {}", cells.size(), header.size()));
      continue;
    }
    rows.push_back(std::move(cells));
    row_line.push_back(lines[l].number);
  }
  if (rows.empty()) fail_at(in.name, lines.back().number + 1, 1, "no data rows after the header");
  // Headerless: a column's unit is the one its values carry ("45 %"), else nvidia-smi's own
  // for the field (nounits logs: MiB, W, MHz, %).
  for (std::size_t c = 0; headerless && c < cols.size(); ++c) {
    for (const auto& r : rows)
      if (!not_available(r[c].text)) {
        cols[c].unit = std::string(value_unit(r[c].text));
        break;
      }
    if (cols[c].unit.empty())
      for (const Mapping& m : kMappings)
        if (m.query == cols[c].query) cols[c].unit = std::string(m.header_unit);
  }
  for (auto& col : cols)
    for (const Mapping& m : kMappings)
      if (m.query == col.query && m.header_unit == col.unit) col.mapping = &m;
  // A column none of whose values is a number is a label (name, pci.bus_id, ...): not imported.
  // A known numeric field is one unless every value is [N/A]: "nan %" or "inf W" in it is a bad
  // value below, not a reason to drop the column.
  for (std::size_t c = 0; c < cols.size(); ++c) {
    const auto numeric = [&](const std::vector<Field>& r) { return number(r[c].text, cols[c].query == "pstate").has_value(); };
    const auto missing = [&](const std::vector<Field>& r) { return not_available(r[c].text); };
    cols[c].text = c == *time_col || (cols[c].mapping ? std::all_of(rows.begin(), rows.end(), missing)
                                                      : std::none_of(rows.begin(), rows.end(), numeric));
  }

  Recording rec;
  importer::TimeOrder order(opt, rec.events);
  std::map<std::pair<std::size_t, std::int64_t>, std::size_t> channel;  // (column, gpu) -> channel
  std::vector<std::map<std::size_t, double>> samples;
  std::vector<std::int64_t> gpus_in_sample;
  bool skipping = false;  // the current pass is dropped (its time unreadable or gone back)
  std::size_t next_lost = 0;
  const auto note_lost = [&](std::size_t upto_row) {
    for (; next_lost < lost.size() && lost[next_lost].before_row <= upto_row; ++next_lost) {
      if (opt.notes) ++opt.notes->gpus_lost;
      rec.events.push_back({rec.t_unix_ns.empty() ? 0 : rec.t_unix_ns.back(), "nvidia-smi", "gpu_lost", 0,
                            importer::at(in.name, lost[next_lost].line, 1, lost[next_lost].text)});
    }
  };
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::vector<Field>& row = rows[r];
    const std::size_t line = row_line[r];
    std::int64_t gpu = 0;
    if (index_col) {
      const auto i = importer::parse_int(row[*index_col].text);
      if (!i || *i < 0 || *i > 1'000'000) {
        importer::tolerate(opt, &ImportNotes::ragged_rows, &ImportNotes::first_ragged, in.name, line,
                           row[*index_col].col, quote(row[*index_col].text) + " is not a GPU index");
        continue;
      }
      gpu = *i;
    }
    // A sample is one pass over the GPUs: it ends when a GPU index repeats.
    if (samples.empty() || std::find(gpus_in_sample.begin(), gpus_in_sample.end(), gpu) != gpus_in_sample.end()) {
      gpus_in_sample.clear();
      const Field& tc = row[*time_col];
      const auto t = parse_utc_time(tc.text);
      if (!t) {
        importer::tolerate(opt, &ImportNotes::bad_time_rows, &ImportNotes::first_bad_time, in.name, line, tc.col,
                           quote(tc.text) + " is not a time like 2024/01/31 12:00:00.123");
        skipping = true;
      } else {
        switch (order.next(*t, in.name, line, tc.col, tc.text, "sample")) {
          case importer::TimeOrder::Verdict::append:
            rec.t_unix_ns.push_back(*t);
            samples.emplace_back();
            skipping = false;
            break;
          case importer::TimeOrder::Verdict::replace_last:  // the later pass at the same time wins
            samples.back().clear();
            skipping = false;
            break;
          case importer::TimeOrder::Verdict::drop: skipping = true; break;
        }
      }
    }
    gpus_in_sample.push_back(gpu);
    note_lost(r);
    if (skipping) continue;
    for (std::size_t c = 0; c < cols.size(); ++c) {
      const Column& col = cols[c];
      if (col.text || (index_col && c == *index_col)) continue;
      double v = std::nan("");
      if (!not_available(row[c].text)) {
        const auto n = number(row[c].text, col.query == "pstate");
        if (n) {
          v = *n * (col.mapping ? col.mapping->scale : 1.0);
        } else {
          importer::tolerate(opt, &ImportNotes::gap_values, &ImportNotes::first_gap, in.name, line, row[c].col,
                             quote(row[c].text) + " is not a number (" + col.query + ")");
        }
      }
      auto [it, fresh] = channel.emplace(std::pair(c, gpu), rec.channels.size());
      if (fresh) {
        ChannelInfo ch;
        if (col.mapping) {
          ch.name = fmt::format("nvml:{}.gpu{}", col.mapping->field, gpu);
          ch.unit = std::string(col.mapping->unit);
          ch.kind = col.mapping->kind;
          ch.subsystem = col.mapping->subsystem;
        } else {
          ch.name = fmt::format("nvidia_smi:{}.gpu{}", importer::sanitise(col.query, "-"), gpu);
          ch.unit = col.unit;
          const Subsystem guess = guess_subsystem(col.query);
          ch.subsystem = guess == Subsystem::power_thermal || guess == Subsystem::interconnect ? guess : Subsystem::gpu;
        }
        ch.help = fmt::format("nvidia-smi {}{} of GPU {}", col.query, col.unit.empty() ? "" : " [" + col.unit + "]", gpu);
        rec.channels.push_back(std::move(ch));
      }
      samples.back()[it->second] = v;
    }
  }
  note_lost(rows.size());
  if (rec.t_unix_ns.empty()) fail_at(in.name, lines.back().number + 1, 1, "no data rows with a readable time");
  for (auto& e : rec.events)  // a GPU lost before the first sample: at the first sample
    if (e.t_unix_ns == 0) e.t_unix_ns = rec.t_unix_ns.front();
  if (rec.channels.empty()) fail_at(in.name, header_line, 1, "no numeric column to import");
  rec.values = Matrix(samples.size(), rec.channels.size(), std::nan(""));
  for (std::size_t s = 0; s < samples.size(); ++s)
    for (const auto& [c, v] : samples[s]) rec.values(s, c) = v;
  importer::finish_metadata(rec, "nvidia-smi", importer::file_stem(in.name), {in.name}, opt.interval_s);
  return rec;
}

}  // namespace reveal
