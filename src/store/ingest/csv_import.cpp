// Wide CSV -> Recording (reveal/ingest.h, "csv"): the inverse of `reveal export --csv`, and plain
// CSV whose first column is a timestamp.
#include <algorithm>
#include <cmath>
#include <set>

#include "store/ingest/import_common.h"

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

}  // namespace

Recording import_wide_csv(const ImportInput& in, const ImportOptions& opt) {
  const std::vector<Line> lines = importer::split_lines(in.data);
  std::size_t li = 0;
  while (li < lines.size() && importer::trim(lines[li].text).empty()) ++li;
  if (li == lines.size()) fail_at(in.name, 1, 1, "no header line (empty input)");
  const std::vector<CsvField> header = split_csv(in.name, lines[li]);
  const std::size_t header_line = lines[li].number;
  if (header.size() < 2) fail_at(in.name, header_line, 1, "a header needs a time column and at least one value column");
  const bool export_form = header.size() >= 2 && header[0].text == "t_unix_ns" && header[1].text == "t_s";
  const std::size_t first_value = export_form ? 2 : 1;
  if (header.size() <= first_value)
    fail_at(in.name, header_line, 1, "no value column after t_unix_ns,t_s");

  Recording rec;
  std::set<std::string> seen;
  for (std::size_t c = first_value; c < header.size(); ++c) {
    const std::string_view h = importer::trim(header[c].text);
    if (h.empty()) fail_at(in.name, header_line, header[c].col, "empty column name");
    ChannelInfo ch;
    ch.name = channel_name(h);
    if (!seen.insert(ch.name).second)
      fail_at(in.name, header_line, header[c].col, "duplicate column " + quote(ch.name));
    ch.unit = "";
    ch.kind = Kind::gauge;
    ch.subsystem = guess_subsystem(ch.name);
    ch.help = "imported from CSV column " + quote(h);
    rec.channels.push_back(std::move(ch));
  }

  TimeFormat tf{false, 1};
  bool first_row = true;
  importer::TimeOrder order(opt, rec.events);
  std::vector<double> row(rec.channels.size());
  for (++li; li < lines.size(); ++li) {
    const Line& line = lines[li];
    if (importer::trim(line.text).empty()) continue;
    const std::vector<CsvField> fields = split_csv(in.name, line);
    if (fields.size() != header.size()) {
      importer::tolerate(opt, &ImportNotes::ragged_rows, &ImportNotes::first_ragged, in.name, line.number,
                         fields.size() > header.size() ? fields[header.size()].col : line.text.size() + 1,
                         fmt::format("{} fields, the header has {}", fields.size(), header.size()));
      continue;
    }
    if (first_row && !export_form) tf = importer::detect_time_format(fields[0].text);
    const auto t = importer::parse_time(fields[0].text, tf);
    if (!t) {
      importer::tolerate(opt, &ImportNotes::bad_time_rows, &ImportNotes::first_bad_time, in.name, line.number,
                         fields[0].col,
                         quote(fields[0].text) + (export_form ? " is not a time in unix nanoseconds"
                                                  : tf.iso  ? " is not an ISO-8601 UTC time like the first row's"
                                                            : " is not a unix time like the first row's"));
      continue;
    }
    first_row = false;
    const auto verdict = order.next(*t, in.name, line.number, fields[0].col, fields[0].text, "row");
    if (verdict == importer::TimeOrder::Verdict::drop) continue;
    for (std::size_t c = first_value; c < fields.size(); ++c) {
      auto v = importer::parse_value(fields[c].text);
      if (!v) {
        importer::tolerate(opt, &ImportNotes::gap_values, &ImportNotes::first_gap, in.name, line.number, fields[c].col,
                           quote(fields[c].text) + " is not a number (column " + quote(header[c].text) + ")");
        v = std::nan("");
      }
      row[c - first_value] = *v;
    }
    if (verdict == importer::TimeOrder::Verdict::replace_last) {
      std::copy(row.begin(), row.end(), rec.values.row(rec.values.rows() - 1).begin());
      continue;
    }
    rec.t_unix_ns.push_back(*t);
    rec.values.append_row(row);
  }
  if (rec.t_unix_ns.empty())
    fail_at(in.name, lines.back().number + 1, 1, "no data rows after the header");
  importer::finish_metadata(rec, "csv", importer::file_stem(in.name), {in.name}, opt.interval_s);
  return rec;
}

}  // namespace reveal
