// Prometheus text exposition scrapes -> Recording (reveal/ingest.h, "prometheus").
// Format: https://prometheus.io/docs/instrumenting/exposition_formats/ (text format 0.0.4).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <map>

#include "store/ingest/import_common.h"

namespace reveal {
namespace {

using importer::fail_at;
using importer::quote;

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
bool name_char(char c) { return name_start(c) || std::isdigit(static_cast<unsigned char>(c)); }
bool blank(char c) { return c == ' ' || c == '\t'; }

struct Sample {
  std::string metric;
  std::vector<std::pair<std::string, std::string>> labels;  // sorted by key
  double value = 0;
  std::optional<std::int64_t> timestamp_ms;
};

// A cursor over one line that reports errors at its position.
class LineParser {
 public:
  LineParser(const std::string& file, const importer::Line& line) : file_(file), line_(line), s_(line.text) {}

  [[noreturn]] void fail(const std::string& what, std::size_t at) const { fail_at(file_, line_.number, at + 1, what); }
  [[noreturn]] void fail(const std::string& what) const { fail(what, i_); }
  void skip_blanks() {
    while (i_ < s_.size() && blank(s_[i_])) ++i_;
  }
  bool at_end() const { return i_ >= s_.size(); }
  std::size_t pos() const { return i_; }
  char peek() const { return at_end() ? '\0' : s_[i_]; }

  std::string metric_name() {
    const std::size_t b = i_;
    if (at_end() || !name_start(s_[i_])) fail("expected a metric name");
    while (i_ < s_.size() && name_char(s_[i_])) ++i_;
    return std::string(s_.substr(b, i_ - b));
  }
  std::string token() {  // up to the next blank
    const std::size_t b = i_;
    while (i_ < s_.size() && !blank(s_[i_])) ++i_;
    return std::string(s_.substr(b, i_ - b));
  }
  std::string rest() { return std::string(importer::trim(s_.substr(std::min(i_, s_.size())))); }

  Sample sample() {
    Sample smp;
    smp.metric = metric_name();
    if (peek() == '{') {
      ++i_;
      while (true) {
        skip_blanks();
        if (peek() == '}') break;
        const std::size_t key_at = i_;
        if (at_end() || !(std::isalpha(static_cast<unsigned char>(peek())) || peek() == '_')) fail("expected a label name or '}'");
        while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
        std::string key(s_.substr(key_at, i_ - key_at));
        skip_blanks();
        if (peek() != '=') fail("expected '=' after label " + quote(key));
        ++i_;
        skip_blanks();
        if (peek() != '"') fail("expected '\"' to open the value of label " + quote(key));
        ++i_;
        std::string value;
        while (true) {
          if (at_end()) fail("unterminated value of label " + quote(key), key_at);
          const char c = s_[i_++];
          if (c == '"') break;
          if (c == '\\') {
            if (at_end()) fail("unterminated escape in label " + quote(key));
            const char e = s_[i_++];
            if (e == 'n') value += '\n';
            else if (e == '\\' || e == '"') value += e;
            else fail(std::string("unknown escape \\") + e, i_ - 2);
          } else {
            value += c;
          }
        }
        for (const auto& [k, v] : smp.labels)
          if (k == key) fail("label " + quote(key) + " given twice", key_at);
        smp.labels.emplace_back(std::move(key), std::move(value));
        skip_blanks();
        if (peek() == ',') {
          ++i_;
          continue;
        }
        if (peek() != '}') fail("expected ',' or '}' after a label");
        break;
      }
      ++i_;  // '}'
      std::sort(smp.labels.begin(), smp.labels.end());
    }
    if (!at_end() && !blank(peek())) fail("expected a blank before the value");
    skip_blanks();
    const std::size_t value_at = i_;
    const std::string v = token();
    if (v.empty()) fail("missing value");
    if (v == "+Inf" || v == "-Inf" || v == "Inf") {
      smp.value = std::nan("");  // not a measurement a store can keep: a gap
    } else {
      const auto d = importer::parse_value(v, false);
      if (!d && v != "NaN") fail(quote(v) + " is not a sample value", value_at);
      smp.value = d ? *d : std::nan("");
    }
    skip_blanks();
    if (!at_end()) {
      const std::size_t ts_at = i_;
      const std::string ts = token();
      const auto ms = importer::parse_int(ts);
      if (!ms || *ms < 0 || *ms > 9'000'000'000'000'000'000 / 1'000'000) fail(quote(ts) + " is not a timestamp in ms", ts_at);
      smp.timestamp_ms = *ms;
      skip_blanks();
      if (!at_end()) fail("unexpected text after the timestamp");
    }
    return smp;
  }

 private:
  const std::string& file_;
  const importer::Line& line_;
  std::string_view s_;
  std::size_t i_ = 0;
};

std::string strip_suffix(std::string_view s, std::string_view suffix) {
  return std::string(s.ends_with(suffix) ? s.substr(0, s.size() - suffix.size()) : s);
}

Kind kind_of(const std::string& metric, const std::map<std::string, std::string>& types) {
  const auto type = [&](const std::string& name) -> std::string {
    const auto it = types.find(name);
    return it == types.end() ? "" : it->second;
  };
  const std::string t = type(metric);
  if (t == "counter") return Kind::counter;
  if (!t.empty()) return Kind::gauge;  // gauge, untyped, summary quantiles, ...
  for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (!metric.ends_with(suffix)) continue;
    const std::string family = type(strip_suffix(metric, suffix));
    if (family == "histogram" || family == "summary") return Kind::counter;
  }
  if (metric.ends_with("_total")) return Kind::counter;  // untyped by convention, or OpenMetrics
  return Kind::gauge;
}

std::string unit_of(const std::string& metric) {
  if (metric.ends_with("_count")) return "count";
  std::string base = metric;
  for (std::string_view suffix : {"_total", "_sum", "_bucket"}) base = strip_suffix(base, suffix);
  static const std::pair<std::string_view, std::string_view> kUnits[] = {
      {"_seconds", "s"}, {"_bytes", "bytes"}, {"_celsius", "C"}, {"_joules", "J"}, {"_watts", "W"},
      {"_hertz", "Hz"}, {"_volts", "V"},    {"_amperes", "A"}};
  for (const auto& [suffix, unit] : kUnits)
    if (base.ends_with(suffix)) return std::string(unit);
  return "";
}

std::string series_key(const Sample& s) {
  std::string key = s.metric + "{";
  for (const auto& [k, v] : s.labels) key += k + "=\"" + v + "\",";
  return key + "}";
}

std::string channel_name(const Sample& s) {
  std::string name = "prom:" + s.metric;
  for (std::size_t i = 0; i < s.labels.size(); ++i)
    name += (i == 0 ? "." : "+") + s.labels[i].first + "=" + importer::sanitise(s.labels[i].second, ":-");
  return name;
}

}  // namespace

Recording import_prometheus(std::span<const ImportInput> scrapes, const ImportOptions& opt) {
  if (scrapes.empty()) throw ImportError("prometheus: no input");
  const std::int64_t t0 = importer::start_ns(opt), dt = importer::interval_ns(opt);
  Recording rec;
  std::map<std::string, std::string> types, helps;  // by metric family name
  std::map<std::string, std::size_t> column;        // channel name -> column
  std::map<std::string, std::string> key_of;        // channel name -> the series it stands for
  std::vector<std::map<std::size_t, double>> rows;
  std::vector<std::string> names;
  for (std::size_t k = 0; k < scrapes.size(); ++k) {
    const ImportInput& in = scrapes[k];
    names.push_back(in.name);
    std::map<std::size_t, double> row;
    std::optional<std::int64_t> latest_ms;
    std::size_t last_line = 1;
    for (const importer::Line& line : importer::split_lines(in.data)) {
      last_line = line.number;
      LineParser p(in.name, line);
      p.skip_blanks();
      if (p.at_end()) continue;
      if (p.peek() == '#') {
        const std::string_view t = importer::trim(line.text);
        const bool is_type = t.starts_with("# TYPE ") || t.starts_with("#\tTYPE");
        const bool is_help = t.starts_with("# HELP ") || t.starts_with("#\tHELP");
        if (!is_type && !is_help) continue;  // a comment
        p.token();  // '#'
        p.skip_blanks();
        p.token();  // TYPE / HELP
        p.skip_blanks();
        const std::string family = p.metric_name();
        if (!p.at_end() && !blank(p.peek())) p.fail("expected a blank after the metric name");
        p.skip_blanks();
        if (is_help) {
          helps[family] = p.rest();
          continue;
        }
        const std::size_t type_at = p.pos();
        const std::string type = p.token();
        static const std::string_view kTypes[] = {"counter", "gauge", "histogram", "summary", "untyped"};
        if (std::find(std::begin(kTypes), std::end(kTypes), type) == std::end(kTypes))
          p.fail(quote(type) + " is not a metric type (counter, gauge, histogram, summary, untyped)", type_at);
        p.skip_blanks();
        if (!p.at_end()) p.fail("unexpected text after the metric type");
        types[family] = type;
        continue;
      }
      const Sample s = p.sample();
      const std::string name = channel_name(s), key = series_key(s);
      auto [it, fresh] = column.emplace(name, rec.channels.size());
      if (fresh) {
        key_of[name] = key;
        ChannelInfo ch;
        ch.name = name;
        ch.kind = kind_of(s.metric, types);
        ch.unit = unit_of(s.metric);
        ch.subsystem = guess_subsystem(s.metric);
        const auto help = helps.find(s.metric);
        ch.help = help != helps.end() && !help->second.empty() ? help->second : "Prometheus series " + key;
        rec.channels.push_back(std::move(ch));
      } else if (key_of[name] != key) {
        fail_at(in.name, line.number, 1,
                "series " + quote(key) + " and " + quote(key_of[name]) + " both become channel " + quote(name));
      }
      if (!row.emplace(it->second, s.value).second)
        fail_at(in.name, line.number, 1, "series " + quote(key) + " appears twice in this scrape");
      if (s.timestamp_ms) latest_ms = std::max(latest_ms.value_or(0), *s.timestamp_ms);
    }
    std::int64_t t = 0;
    if (latest_ms) {
      t = *latest_ms * 1'000'000;
    } else if (__builtin_mul_overflow(std::int64_t(k), dt, &t) || __builtin_add_overflow(t, t0, &t)) {
      throw ImportError(in.name + ": its synthetic time overflows the clock");
    }
    if (!rec.t_unix_ns.empty() && t <= rec.t_unix_ns.back())
      fail_at(in.name, last_line, 1, "this scrape's time is not after the previous scrape's (files must be in time order)");
    rec.t_unix_ns.push_back(t);
    rows.push_back(std::move(row));
  }
  if (rec.channels.empty()) throw ImportError(scrapes.front().name + ": no samples in any scrape");
  rec.values = Matrix(rows.size(), rec.channels.size(), std::nan(""));
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (const auto& [c, v] : rows[r]) rec.values(r, c) = v;
  importer::finish_metadata(rec, "prometheus", importer::file_stem(scrapes.front().name), names, opt.interval_s);
  return rec;
}

}  // namespace reveal
