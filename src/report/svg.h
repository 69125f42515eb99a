// Inline SVG charts for the HTML report (html_report.h): a plot area with linear scales, nice
// axis ticks, shaded spans and bands, threshold lines and polylines. Output is a string of one
// `<svg class="chart ...">` element, sized in CSS pixels, with no scripts and no external
// references. Long series are reduced to at most two points (min and max) per pixel column,
// so a chart's size is bounded by its width, not by the run's length, and no peak is lost.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace reveal::report {

// Text escaped for HTML/XML content and attribute values (& < > " ').
std::string esc(std::string_view s);

// A duration in seconds for an axis or a label: "45 s", "2m30s", "1h05m".
std::string format_seconds(double s);

// About `n` round tick values covering [lo, hi] (steps 1, 2 or 5 × 10^k).
std::vector<double> nice_ticks(double lo, double hi, int n);

class SvgChart {
 public:
  // `id` may be empty; `cls` is added after "chart" in the class attribute. Sizes in pixels;
  // the margins hold the axes' labels.
  SvgChart(std::string id, std::string cls, double width, double height, double left = 46, double right = 10,
           double top = 8, double bottom = 22);

  void x_domain(double lo, double hi);
  void y_domain(double lo, double hi);
  double x(double v) const;  // data → pixels (clamped to the plot area)
  double y(double v) const;

  // Axes with ticks; the x labels use format_seconds() when `seconds`, else numbers; y ticks
  // and grid lines unless `y_ticks` is false.
  void axes(bool seconds, std::string_view y_label = {}, bool y_ticks = true);
  // A shaded vertical span [x0, x1] (an incident), with a tooltip.
  void span(double x0, double x1, std::string_view cls, std::string_view title);
  // A shaded horizontal band [y0, y1] (a reference band).
  void band(double y0, double y1, std::string_view cls, std::string_view title);
  // A horizontal line at y (a threshold, a median), labelled at its right end when `label` is set.
  void hline(double yv, std::string_view cls, std::string_view label = {});
  // A line through (xs[i], ys[i]); NaN values break it. Reduced to min/max per pixel column.
  void line(std::span<const double> xs, std::span<const double> ys, std::string_view cls,
            std::string_view title = {}, std::string_view color = {});
  // A filled rectangle in pixels (heatmap cells) with an optional tooltip.
  void rect_px(double x, double y, double w, double h, std::string_view fill, std::string_view title = {});
  // Text in pixels.
  void text_px(double x, double y, std::string_view s, std::string_view cls = {}, std::string_view anchor = "start");
  // Raw SVG content (already escaped).
  void raw(std::string_view s) { body_ += s; }

  double plot_left() const { return left_; }
  double plot_right() const { return width_ - right_; }
  double plot_top() const { return top_; }
  double plot_bottom() const { return height_ - bottom_; }

  std::string str() const;

 private:
  std::string id_, cls_, body_;
  double width_, height_, left_, right_, top_, bottom_;
  double x0_ = 0, x1_ = 1, y0_ = 0, y1_ = 1;
};

}  // namespace reveal::report
