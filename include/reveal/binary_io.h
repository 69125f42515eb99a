// Little-endian binary encoding of fitted models (the model file, reveal/baseline_model.h).
//
// ByteWriter appends fixed-width integers and IEEE-754 doubles (their bit patterns, so every
// value, NaN and ±inf included, round-trips exactly), length-prefixed strings and arrays.
// ByteReader reads them back in the same order from a buffer it does not own (the bytes must
// outlive it); every read is checked against the end of its buffer and a length prefix against the bytes left before anything is allocated, so a truncated
// or corrupt buffer throws DecodeError instead of reading out of bounds or allocating wildly.
// Encoding: u8/u32/u64/i32/i64 little-endian two's complement; f64 = the u64 of its bits;
// string and arrays = u64 count, then the elements.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace reveal {

class DecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ByteWriter {
 public:
  void u8(std::uint8_t v) { buf_.push_back(char(v)); }
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void i32(std::int32_t v) { put(std::uint32_t(v), 4); }
  void i64(std::int64_t v) { put(std::uint64_t(v), 8); }
  void f64(double v) { put(std::bit_cast<std::uint64_t>(v), 8); }
  void boolean(bool v) { u8(v ? 1 : 0); }
  void str(std::string_view s) {
    u64(s.size());
    buf_.append(s);
  }
  void f64s(std::span<const double> v) {
    u64(v.size());
    for (double x : v) f64(x);
  }
  void u64s(std::span<const std::size_t> v) {
    u64(v.size());
    for (std::size_t x : v) u64(x);
  }
  const std::string& bytes() const { return buf_; }
  std::string take() { return std::move(buf_); }

 private:
  void put(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) buf_.push_back(char((v >> (8 * i)) & 0xff));
  }
  std::string buf_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : p_(bytes) {}
  std::uint8_t u8() { return std::uint8_t(get(1)); }
  std::uint32_t u32() { return std::uint32_t(get(4)); }
  std::uint64_t u64() { return get(8); }
  std::int32_t i32() { return std::int32_t(std::uint32_t(get(4))); }
  std::int64_t i64() { return std::int64_t(get(8)); }
  double f64() { return std::bit_cast<double>(get(8)); }
  bool boolean() {
    const std::uint8_t v = u8();
    if (v > 1) throw DecodeError("corrupt model data: a flag is neither 0 nor 1");
    return v == 1;
  }
  std::string str() {
    const std::size_t n = count(1);
    std::string s(p_.substr(at_, n));
    at_ += n;
    return s;
  }
  // As str(), without a copy: the view points into the reader's buffer.
  std::string_view str_view() {
    const std::size_t n = count(1);
    const std::string_view s = p_.substr(at_, n);
    at_ += n;
    return s;
  }
  std::vector<double> f64s() {
    std::vector<double> v(count(8));
    for (double& x : v) x = f64();
    return v;
  }
  std::vector<std::size_t> u64s() {
    std::vector<std::size_t> v(count(8));
    for (std::size_t& x : v) x = std::size_t(u64());
    return v;
  }
  // A u64 element count, checked against the bytes left at `elem_bytes` each (≥ 1).
  std::size_t count(std::size_t elem_bytes) {
    const std::uint64_t n = u64();
    if (n > (p_.size() - at_) / elem_bytes) throw DecodeError("corrupt model data: a length runs past the end");
    return std::size_t(n);
  }
  std::size_t remaining() const { return p_.size() - at_; }
  // Throws unless every byte was read.
  void expect_end() const {
    if (at_ != p_.size()) throw DecodeError("corrupt model data: unexpected bytes after the end");
  }

 private:
  std::uint64_t get(std::size_t n) {
    if (p_.size() - at_ < n) throw DecodeError("model data is truncated");
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t(std::uint8_t(p_[at_ + i])) << (8 * i);
    at_ += n;
    return v;
  }
  std::string_view p_;
  std::size_t at_ = 0;
};

}  // namespace reveal
