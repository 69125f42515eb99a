// Wide CSV -> Recording (reveal/ingest.h, "csv"): the inverse of `reveal export --csv`, and plain
// CSV whose first column is a timestamp.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <set>
#include <span>

#include "reveal/progress.h"
#include "reveal/store.h"
#include "store/ingest/atomic_store.h"
#include "store/ingest/import_common.h"
#include "store/ingest/line_reader.h"

namespace reveal {
namespace {

using importer::fail_at;
using importer::Line;
using importer::quote;
using importer::TimeFormat;

struct CsvField {
  std::string text;
  std::size_t col = 1;  // of the field's first byte
};

// Splits one line at commas; a field that starts with '"' runs to the matching quote ("" is a
// quote inside) and must end there.
std::vector<CsvField> split_csv(const std::string& file, const Line& line) {
  std::vector<CsvField> fields;
  const std::string_view s = line.text;
  std::size_t i = 0;
  while (true) {
    CsvField f;
    f.col = i + 1;
    if (i < s.size() && s[i] == '"') {
      std::size_t j = i + 1;
      while (true) {
        if (j >= s.size()) fail_at(file, line.number, i + 1, "unterminated quoted field");
        if (s[j] == '"') {
          if (j + 1 < s.size() && s[j + 1] == '"') {
            f.text += '"';
            j += 2;
            continue;
          }
          break;
        }
        f.text += s[j++];
      }
      i = j + 1;
      if (i < s.size() && s[i] != ',') fail_at(file, line.number, i + 1, "text after a closing quote");
    } else {
      const std::size_t comma = s.find(',', i);
      const std::size_t end = comma == std::string_view::npos ? s.size() : comma;
      f.text = std::string(s.substr(i, end - i));
      i = end;
    }
    fields.push_back(std::move(f));
    if (i >= s.size()) break;
    ++i;  // the comma; a trailing comma makes a last, empty field
  }
  return fields;
}

std::string channel_name(std::string_view header) {
  if (header.find(':') != std::string_view::npos) return std::string(header);
  return "csv:" + importer::sanitise(header, ".:-");
}

// Where parse_wide_csv() puts the rows: a Recording (import_wide_csv) or a store being written
// (import_wide_csv_file).
class CsvSink {
 public:
  virtual ~CsvSink() = default;
  virtual void begin(std::vector<ChannelInfo> channels) = 0;
  virtual void add(std::int64_t t, std::span<const double> row) = 0;
  virtual void replace_last(std::span<const double> row) = 0;  // a row at the previous row's time
};

// The wide CSV whose lines `next` gives (see reveal/ingest.h), into `sink`; clock steps into
// `events`. Throws ImportError as import_wide_csv documents.
void parse_wide_csv(const std::string& name, const std::function<bool(Line&)>& next, const ImportOptions& opt,
                    std::vector<Event>& events, CsvSink& sink) {
  Line line;
  bool have = next(line);
  while (have && importer::trim(line.text).empty()) have = next(line);
  if (!have) fail_at(name, 1, 1, "no header line (empty input)");
  const std::vector<CsvField> header = split_csv(name, line);
  const std::size_t header_line = line.number;
  if (header.size() < 2) fail_at(name, header_line, 1, "a header needs a time column and at least one value column");
  const bool export_form = header.size() >= 2 && header[0].text == "t_unix_ns" && header[1].text == "t_s";
  const std::size_t first_value = export_form ? 2 : 1;
  if (header.size() <= first_value)
    fail_at(name, header_line, 1, "no value column after t_unix_ns,t_s");

  std::vector<ChannelInfo> channels;
  std::set<std::string> seen;
  for (std::size_t c = first_value; c < header.size(); ++c) {
    const std::string_view h = importer::trim(header[c].text);
    if (h.empty()) fail_at(name, header_line, header[c].col, "empty column name");
    ChannelInfo ch;
    ch.name = channel_name(h);
    if (!seen.insert(ch.name).second)
      fail_at(name, header_line, header[c].col, "duplicate column " + quote(ch.name));
    ch.unit = "";
    ch.kind = Kind::gauge;
    ch.subsystem = guess_subsystem(ch.name);
    ch.help = "imported from CSV column " + quote(h);
    channels.push_back(std::move(ch));
  }
  std::vector<double> row(channels.size());
  sink.begin(std::move(channels));

  TimeFormat tf{false, 1};
  bool first_row = true;
  std::size_t rows = 0, last_line = line.number;
  importer::TimeOrder order(opt, events);
  while (next(line)) {
    last_line = line.number;
    if (importer::trim(line.text).empty()) continue;
    const std::vector<CsvField> fields = split_csv(name, line);
    if (fields.size() != header.size()) {
      importer::tolerate(opt, &ImportNotes::ragged_rows, &ImportNotes::first_ragged, name, line.number,
                         fields.size() > header.size() ? fields[header.size()].col : line.text.size() + 1,
                         fmt::format("{} fields, the header has {}", fields.size(), header.size()));
      continue;
    }
    if (first_row && !export_form) tf = importer::detect_time_format(fields[0].text);
    const auto t = importer::parse_time(fields[0].text, tf);
    if (!t) {
      importer::tolerate(opt, &ImportNotes::bad_time_rows, &ImportNotes::first_bad_time, name, line.number,
                         fields[0].col,
                         quote(fields[0].text) + (export_form ? " is not a time in unix nanoseconds"
                                                  : tf.iso  ? " is not an ISO-8601 UTC time like the first row's"
                                                            : " is not a unix time like the first row's"));
      continue;
    }
    first_row = false;
    const auto verdict = order.next(*t, name, line.number, fields[0].col, fields[0].text, "row");
    if (verdict == importer::TimeOrder::Verdict::drop) continue;
    for (std::size_t c = first_value; c < fields.size(); ++c) {
      auto v = importer::parse_value(fields[c].text);
      if (!v) {
        importer::tolerate(opt, &ImportNotes::gap_values, &ImportNotes::first_gap, name, line.number, fields[c].col,
                           quote(fields[c].text) + " is not a number (column " + quote(header[c].text) + ")");
        v = std::nan("");
      }
      row[c - first_value] = *v;
    }
    if (verdict == importer::TimeOrder::Verdict::replace_last) {
      sink.replace_last(row);
      continue;
    }
    sink.add(*t, row);
    ++rows;
  }
  if (rows == 0) fail_at(name, last_line + 1, 1, "no data rows after the header");
}

class RecordingSink final : public CsvSink {
 public:
  explicit RecordingSink(Recording& rec) : rec_(rec) {}
  void begin(std::vector<ChannelInfo> channels) override { rec_.channels = std::move(channels); }
  void add(std::int64_t t, std::span<const double> row) override {
    rec_.t_unix_ns.push_back(t);
    rec_.values.append_row(row);
  }
  void replace_last(std::span<const double> row) override {
    std::copy(row.begin(), row.end(), rec_.values.row(rec_.values.rows() - 1).begin());
  }

 private:
  Recording& rec_;
};

// Rows into a store as they come, one behind (a row at the same time may still replace it).
class StoreSink final : public CsvSink {
 public:
  StoreSink(const std::filesystem::path& out, RunMetadata meta, const std::vector<ChannelInfo>& known,
            double fallback_interval_s, Progress* progress, const importer::LineReader& lines)
      : store_(out), meta_(std::move(meta)), known_(known), fallback_interval_s_(fallback_interval_s),
        progress_(progress), lines_(lines) {}
  void begin(std::vector<ChannelInfo> channels) override {
    rec_.channels = std::move(channels);
    adopted_ = adopt_channel_info(rec_, known_);
    meta_.probes = {{meta_.probes.at(0).name, true, "", rec_.channels.size()}};
    pending_.resize(rec_.channels.size());
  }
  void add(std::int64_t t, std::span<const double> row) override {
    if (!writer_) {
      meta_.start_unix_ns = t;
      meta_.interval_s = fallback_interval_s_;  // the median spacing once every row is in
      writer_ = std::make_unique<StoreWriter>(store_.temp(), meta_, rec_.channels);
    } else {
      writer_->append(pending_t_, pending_);
      gaps_.push_back(std::uint64_t(t) - std::uint64_t(pending_t_));  // times increase
    }
    pending_t_ = t;
    std::copy(row.begin(), row.end(), pending_.begin());
    if (progress_ && ++rows_ % 4096 == 0) progress_->update("import", std::size_t(lines_.bytes_read() >> 10),
                                                            std::size_t(lines_.size() >> 10));
  }
  void replace_last(std::span<const double> row) override { std::copy(row.begin(), row.end(), pending_.begin()); }
  // After the last row: the store finished and renamed over `out`.
  CsvImported finish(const std::vector<Event>& events) {
    writer_->append(pending_t_, pending_);
    writer_->set_interval(importer::median_interval_s(gaps_, fallback_interval_s_));
    for (const auto& e : events) writer_->append_event(e);
    writer_->finish(pending_t_, 0);
    writer_.reset();
    store_.commit();
    return {gaps_.size() + 1, rec_.channels.size(), adopted_};
  }

 private:
  importer::AtomicStore store_;
  RunMetadata meta_;
  const std::vector<ChannelInfo>& known_;
  double fallback_interval_s_;
  Progress* progress_;
  const importer::LineReader& lines_;
  Recording rec_;  // the channels only
  std::size_t adopted_ = 0, rows_ = 0;
  std::unique_ptr<StoreWriter> writer_;
  std::int64_t pending_t_ = 0;
  std::vector<double> pending_;
  std::vector<std::uint64_t> gaps_;
};

}  // namespace

Recording import_wide_csv(const ImportInput& in, const ImportOptions& opt) {
  const std::vector<Line> lines = importer::split_lines(in.data);
  std::size_t li = 0;
  Recording rec;
  RecordingSink sink(rec);
  parse_wide_csv(
      in.name,
      [&](Line& line) {
        if (li == lines.size()) return false;
        line = lines[li++];
        return true;
      },
      opt, rec.events, sink);
  importer::finish_metadata(rec, "csv", importer::file_stem(in.name), {in.name}, opt.interval_s);
  return rec;
}

CsvImported import_wide_csv_file(const std::string& path, const std::filesystem::path& out, const ImportOptions& opt,
                                 const std::vector<ChannelInfo>& known, int cores, Progress* progress) {
  importer::LineReader lines(path);
  RunMetadata meta;
  importer::set_import_metadata(meta, "csv", importer::file_stem(path), {path}, 0);
  meta.cores = cores;
  std::vector<Event> events;
  StoreSink sink(out, std::move(meta), known, opt.interval_s, progress, lines);
  parse_wide_csv(path, [&](Line& line) { return lines.next(line); }, opt, events, sink);
  return sink.finish(events);
}

}  // namespace reveal
