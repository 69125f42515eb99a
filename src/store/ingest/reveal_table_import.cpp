// The public Reveal dataset's whitespace-separated tables -> Recording (reveal/ingest.h,
// "reveal-table").
#include <cmath>
#include <set>

#include "store/ingest/import_common.h"

namespace reveal {
namespace {

using importer::fail_at;
using importer::Field;
using importer::quote;

std::vector<Field> split_blanks(std::string_view s) {
  std::vector<Field> tokens;
  std::size_t i = 0;
  while (true) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i >= s.size()) break;
    const std::size_t b = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    tokens.push_back({s.substr(b, i - b), b + 1});
  }
  return tokens;
}

// "<Source>:<Field>[.<idx>].<host>[<unit>]" split into its parts; nullopt when it is not one.
struct ColumnName {
  std::string channel, host, unit;  // channel = "<Source>:<Field>[.<idx>]"
};
std::optional<ColumnName> parse_column(std::string_view h) {
  const std::size_t colon = h.find(':'), open = h.find('[');
  if (colon == std::string_view::npos || colon == 0 || open == std::string_view::npos || !h.ends_with(']') ||
      open < colon)
    return std::nullopt;
  const std::string_view body = h.substr(0, open);  // Source:Field[.idx].host
  const std::size_t dot = body.find_last_of('.');
  if (dot == std::string_view::npos || dot <= colon + 1 || dot + 1 == body.size()) return std::nullopt;
  ColumnName c;
  c.channel = std::string(body.substr(0, dot));
  c.host = std::string(body.substr(dot + 1));
  c.unit = std::string(h.substr(open + 1, h.size() - open - 2));
  if (c.unit.find_first_of("[]") != std::string::npos) return std::nullopt;
  return c;
}

}  // namespace

Recording import_reveal_table(const ImportInput& in, const ImportOptions& opt) {
  std::vector<importer::Line> lines = importer::split_lines(in.data);
  std::erase_if(lines, [](const importer::Line& l) { return importer::trim(l.text).empty(); });
  if (lines.empty()) fail_at(in.name, 1, 1, "no header line (empty input)");
  const std::vector<Field> header = split_blanks(lines[0].text);
  // A first column that is not a channel holds the time; without one, times are synthetic.
  const bool time_column = !header.empty() && !parse_column(header[0].text);
  std::vector<ColumnName> names(header.size());
  std::set<std::string> hosts;
  for (std::size_t c = time_column ? 1 : 0; c < header.size(); ++c) {
    const auto n = parse_column(header[c].text);
    if (!n)
      fail_at(in.name, lines[0].number, header[c].col,
              quote(header[c].text) + " is not a <Source>:<Field>[.<idx>].<host>[<unit>] column");
    names[c] = *n;
    hosts.insert(n->host);
  }
  if (hosts.empty()) fail_at(in.name, lines[0].number, 1, "no <Source>:<Field>.<host>[<unit>] column");
  std::string host = opt.host;
  if (host.empty()) {
    if (hosts.size() > 1) {
      std::string list;
      for (const auto& h : hosts) list += (list.empty() ? "" : ", ") + h;
      fail_at(in.name, lines[0].number, 1, "columns of " + std::to_string(hosts.size()) + " hosts (" + list +
                                               "): choose one with --host");
    }
    host = *hosts.begin();
  } else if (!hosts.count(host)) {
    fail_at(in.name, lines[0].number, 1, "no column of host " + quote(host));
  }

  Recording rec;
  std::vector<std::size_t> keep;  // header columns of the chosen host
  std::set<std::string> seen;
  for (std::size_t c = time_column ? 1 : 0; c < header.size(); ++c) {
    if (names[c].host != host) continue;
    if (!seen.insert(names[c].channel).second)
      fail_at(in.name, lines[0].number, header[c].col, "duplicate column " + quote(header[c].text));
    ChannelInfo ch;
    ch.name = names[c].channel;
    ch.unit = names[c].unit;
    ch.kind = Kind::gauge;
    ch.subsystem = guess_subsystem(ch.name);
    ch.help = "Reveal dataset column " + std::string(header[c].text);
    rec.channels.push_back(std::move(ch));
    keep.push_back(c);
  }

  const std::int64_t t0 = importer::start_ns(opt), dt = importer::interval_ns(opt);
  importer::TimeFormat tf;
  std::vector<double> row(keep.size());
  for (std::size_t l = 1; l < lines.size(); ++l) {
    const std::vector<Field> cells = split_blanks(lines[l].text);
    if (cells.size() != header.size())
      fail_at(in.name, lines[l].number, cells.size() > header.size() ? cells[header.size()].col : lines[l].text.size() + 1,
              fmt::format("{} fields, the header has {}", cells.size(), header.size()));
    std::int64_t t = 0;
    if (time_column) {
      if (l == 1) tf = importer::detect_time_format(cells[0].text);
      const auto parsed = importer::parse_time(cells[0].text, tf);
      if (!parsed) fail_at(in.name, lines[l].number, cells[0].col, quote(cells[0].text) + " is not a time like the first row's");
      t = *parsed;
    } else if (__builtin_mul_overflow(std::int64_t(l - 1), dt, &t) || __builtin_add_overflow(t, t0, &t)) {
      fail_at(in.name, lines[l].number, 1, "the synthetic time of this row overflows the clock");
    }
    if (!rec.t_unix_ns.empty() && t <= rec.t_unix_ns.back())
      fail_at(in.name, lines[l].number, cells[0].col, "time " + quote(cells[0].text) + " is not after the previous row's");
    for (std::size_t k = 0; k < keep.size(); ++k) {
      const Field& cell = cells[keep[k]];
      const auto v = importer::parse_value(cell.text);
      if (!v) fail_at(in.name, lines[l].number, cell.col, quote(cell.text) + " is not a number (column " + quote(header[keep[k]].text) + ")");
      row[k] = *v;
    }
    rec.t_unix_ns.push_back(t);
    rec.values.append_row(row);
  }
  if (rec.t_unix_ns.empty()) fail_at(in.name, lines.back().number + 1, 1, "no data rows after the header");
  importer::finish_metadata(rec, "reveal-table", host, {in.name}, opt.interval_s);
  return rec;
}

}  // namespace reveal
