// Dense row-major matrix of doubles, the currency between pipeline stages.
// Rows are samples or windows, columns are channels or features. NaN marks a gap.
#pragma once

#include <cassert>
#include <cstddef>
#include <span>
#include <vector>

namespace reveal {

class Matrix {
 public:
  Matrix() = default;
  Matrix(std::size_t rows, std::size_t cols, double fill = 0.0)
      : rows_(rows), cols_(cols), data_(rows * cols, fill) {}

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  double& operator()(std::size_t r, std::size_t c) { assert(r < rows_ && c < cols_); return data_[r * cols_ + c]; }
  double operator()(std::size_t r, std::size_t c) const { assert(r < rows_ && c < cols_); return data_[r * cols_ + c]; }
  std::span<double> row(std::size_t r) { return {data_.data() + r * cols_, cols_}; }
  std::span<const double> row(std::size_t r) const { return {data_.data() + r * cols_, cols_}; }
  // Appends one row; `values.size()` must equal cols() (or set cols on the first row).
  void append_row(std::span<const double> values) {
    if (rows_ == 0 && cols_ == 0) cols_ = values.size();
    assert(values.size() == cols_);
    data_.insert(data_.end(), values.begin(), values.end());
    ++rows_;
  }
  // No rows, `cols` columns; the storage keeps its capacity (a reader's block, reused).
  void reset(std::size_t cols) {
    rows_ = 0;
    cols_ = cols;
    data_.clear();
  }
  std::vector<double>& data() { return data_; }
  const std::vector<double>& data() const { return data_; }

 private:
  std::size_t rows_ = 0, cols_ = 0;
  std::vector<double> data_;
};

}  // namespace reveal
