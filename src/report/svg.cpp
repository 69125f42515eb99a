#include "svg.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace reveal::report {

std::string esc(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string format_seconds(double s) {
  if (!std::isfinite(s)) return "n/a";
  const char* sign = s < 0 ? "−" : "";
  s = std::fabs(s);
  if (s < 120) return fmt::format("{}{:g} s", sign, std::round(s * 10) / 10);
  const long t = std::lround(s);
  if (t < 3600) return fmt::format("{}{}m{:02}s", sign, t / 60, t % 60);
  return fmt::format("{}{}h{:02}m", sign, t / 3600, (t % 3600) / 60);
}

std::vector<double> nice_ticks(double lo, double hi, int n) {
  std::vector<double> t;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || n < 1) return t;
  const double raw = (hi - lo) / n;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) { step = m * mag; break; }
  // At most 101 ticks, on multiples of step that doubles can still count: a span of a few ulps
  // at a large value gets none rather than a loop where k += 1 no longer changes k.
  const double first = std::ceil(lo / step), last = std::floor(hi / step + 1e-9);
  if (!(last - first <= 100) || std::fabs(first) > 0x1p52 || std::fabs(last) > 0x1p52) return t;
  for (double k = first; k <= last; k += 1) t.push_back(k == 0 ? 0.0 : k * step);
  return t;
}

namespace {
// hi when it is above lo, else a little above lo: also where lo + 1 == lo.
double above(double lo, double hi) { return hi > lo ? hi : lo + std::max(1.0, std::fabs(lo) * 1e-9); }
}  // namespace

SvgChart::SvgChart(std::string id, std::string cls, double width, double height, double left, double right,
                   double top, double bottom)
    : id_(std::move(id)), cls_(std::move(cls)), width_(width), height_(height), left_(left), right_(right),
      top_(top), bottom_(bottom) {}

void SvgChart::x_domain(double lo, double hi) {
  x0_ = lo;
  x1_ = above(lo, hi);
}
void SvgChart::y_domain(double lo, double hi) {
  y0_ = lo;
  y1_ = above(lo, hi);
}
double SvgChart::x(double v) const {
  const double p = left_ + (v - x0_) / (x1_ - x0_) * (plot_right() - left_);
  return std::isnan(p) ? left_ : std::clamp(p, left_, plot_right());  // never "nan" in the SVG
}
double SvgChart::y(double v) const {
  const double p = plot_bottom() - (v - y0_) / (y1_ - y0_) * (plot_bottom() - top_);
  return std::isnan(p) ? plot_bottom() : std::clamp(p, top_, plot_bottom());
}

namespace {
// "2.5 M", "120 k", "0.25": a tick value in at most 4 significant digits with an SI prefix.
std::string tick_label(double v) {
  const double a = std::fabs(v);
  if (a >= 1e9) return fmt::format("{:.4g}G", v / 1e9);
  if (a >= 1e6) return fmt::format("{:.4g}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:.4g}k", v / 1e3);
  return fmt::format("{:.4g}", v);
}
}  // namespace

void SvgChart::axes(bool seconds, std::string_view y_label, bool y_ticks) {
  std::string o = fmt::format(R"(<g class="axis"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", left_,
                              plot_bottom(), plot_right(), plot_bottom());
  o += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", left_, top_, left_, plot_bottom());
  const int nx = std::max(2, int((plot_right() - left_) / 90));
  for (double v : nice_ticks(x0_, x1_, nx)) {
    const double px = x(v);
    o += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"/>)", px, plot_bottom(),
                     plot_bottom() + 4);
    o += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", px, plot_bottom() + 15,
                     esc(seconds ? "+" + format_seconds(v) : fmt::format("{:g}", v)));
  }
  const int ny = std::max(2, int((plot_bottom() - top_) / 28));
  for (double v : y_ticks ? nice_ticks(y0_, y1_, ny) : std::vector<double>{}) {
    const double py = y(v);
    o += fmt::format(R"(<line class="grid" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", left_, py,
                     plot_right(), py);
    o += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", left_ - 4, py + 4,
                     esc(tick_label(v)));
  }
  if (!y_label.empty())
    o += fmt::format(R"(<text class="ylabel" x="{:.1f}" y="{:.1f}">{}</text>)", left_ + 4, top_ + 10, esc(y_label));
  body_ += o + "</g>";
}

void SvgChart::span(double a, double b, std::string_view cls, std::string_view title) {
  const double px0 = x(a), px1 = std::max(x(b), px0 + 1.5);
  body_ += fmt::format(R"(<rect class="{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}">)", cls, px0, top_,
                       px1 - px0, plot_bottom() - top_);
  if (!title.empty()) body_ += fmt::format("<title>{}</title>", esc(title));
  body_ += "</rect>";
}

void SvgChart::band(double a, double b, std::string_view cls, std::string_view title) {
  const double py0 = y(std::max(a, b)), py1 = std::max(y(std::min(a, b)), py0 + 1);
  body_ += fmt::format(R"(<rect class="{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}">)", cls, left_, py0,
                       plot_right() - left_, py1 - py0);
  if (!title.empty()) body_ += fmt::format("<title>{}</title>", esc(title));
  body_ += "</rect>";
}

void SvgChart::hline(double yv, std::string_view cls, std::string_view label) {
  const double py = y(yv);
  body_ += fmt::format(R"(<line class="{}" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", cls, left_, py,
                       plot_right(), py);
  if (!label.empty())
    body_ += fmt::format(R"(<text class="{}-label" x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", cls,
                         plot_right() - 2, py - 3, esc(label));
}

void SvgChart::line(std::span<const double> xs, std::span<const double> ys, std::string_view cls,
                    std::string_view title, std::string_view color) {
  // Per pixel column: the first, min, max and last point, in x order, so spikes survive.
  std::string d;
  const std::size_t n = std::min(xs.size(), ys.size());
  long col = -1;
  double lo = 0, hi = 0, first = 0, last = 0, px = 0;
  bool pen = false, have = false;
  const auto flush = [&] {
    if (!have) return;
    d += fmt::format("{}{:.1f},{:.1f}", pen ? "L" : "M", px, y(first));
    pen = true;
    if (hi != lo) d += fmt::format("L{:.1f},{:.1f}L{:.1f},{:.1f}", px, y(lo), px, y(hi));
    if (last != hi || hi == lo) d += fmt::format("L{:.1f},{:.1f}", px, y(last));
    have = false;
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(xs[i]) || !std::isfinite(ys[i])) {
      flush();
      pen = false;
      continue;
    }
    const double p = x(xs[i]);
    const long c = std::lround(p);
    if (have && c != col) flush();
    if (!have) {
      col = c;
      px = p;
      first = lo = hi = last = ys[i];
      have = true;
    } else {
      lo = std::min(lo, ys[i]);
      hi = std::max(hi, ys[i]);
      last = ys[i];
    }
  }
  flush();
  if (d.empty()) return;
  body_ += fmt::format(R"(<path class="{}" d="{}")", cls, d);
  if (!color.empty()) body_ += fmt::format(R"( stroke="{}")", color);
  body_ += title.empty() ? "/>" : fmt::format("><title>{}</title></path>", esc(title));
}

void SvgChart::rect_px(double px, double py, double w, double h, std::string_view fill, std::string_view title) {
  body_ += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}")", px, py, w, h, fill);
  body_ += title.empty() ? "/>" : fmt::format("><title>{}</title></rect>", esc(title));
}

void SvgChart::text_px(double px, double py, std::string_view s, std::string_view cls, std::string_view anchor) {
  body_ += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="{}")", px, py, anchor);
  if (!cls.empty()) body_ += fmt::format(R"( class="{}")", cls);
  body_ += fmt::format(">{}</text>", esc(s));
}

std::string SvgChart::str() const {
  std::string o = "<svg";
  if (!id_.empty()) o += fmt::format(R"( id="{}")", esc(id_));
  o += fmt::format(R"( class="chart{}{}" width="{:.0f}" height="{:.0f}" viewBox="0 0 {:.0f} {:.0f}" role="img">)",
                   cls_.empty() ? "" : " ", esc(cls_), width_, height_, width_, height_);
  return o + body_ + "</svg>";
}

}  // namespace reveal::report
