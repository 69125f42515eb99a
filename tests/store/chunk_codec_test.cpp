#include "store/chunk_codec.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <stdexcept>

namespace reveal::store {
namespace {

// n × nc values: channel c is a ramp, a constant, or random bits, so every group sees a mix.
std::vector<double> data(std::size_t n, std::size_t nc) {
  std::mt19937_64 rng(7);
  std::vector<double> v(n * nc);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < nc; ++c)
      v[i * nc + c] = c % 3 == 0 ? double(i * c) : c % 3 == 1 ? 42.0 : std::bit_cast<double>(rng());
  v[3] = std::nan("");
  return v;
}

TEST(ChunkCodec, RoundTripsEveryBitOverSeveralGroups) {
  const std::size_t n = 17, nc = 2 * kGroupChannels + 5;  // three groups, the last partial
  const auto v = data(n, nc);
  ChunkCodec codec;
  std::vector<char> blob;
  codec.encode_columns(v, n, nc, 3, blob);
  std::vector<double> back(n * nc, 0.0);
  codec.decode_columns(blob, n, nc, {}, back.data(), nc);
  for (std::size_t k = 0; k < v.size(); ++k)
    ASSERT_EQ(std::bit_cast<std::uint64_t>(back[k]), std::bit_cast<std::uint64_t>(v[k])) << k;
}

TEST(ChunkCodec, DecodesOnlyWantedChannelsAndLeavesTheRestAlone) {
  const std::size_t n = 4, nc = kGroupChannels + 3;
  const auto v = data(n, nc);
  ChunkCodec codec;
  std::vector<char> blob;
  codec.encode_columns(v, n, nc, 1, blob);
  std::vector<std::uint8_t> wanted(nc, 0);
  wanted[kGroupChannels + 1] = 1;
  const std::size_t stride = nc + 2;  // a wider destination row
  std::vector<double> back(n * stride, -1.0);
  codec.decode_columns(blob, n, nc, wanted, back.data(), stride);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < stride; ++c) {
      if (c == kGroupChannels + 1)
        EXPECT_EQ(std::bit_cast<std::uint64_t>(back[i * stride + c]), std::bit_cast<std::uint64_t>(v[i * nc + c]));
      else
        EXPECT_EQ(back[i * stride + c], -1.0) << i << "," << c;
    }
}

TEST(ChunkCodec, TimesRoundTripIncludingBackwardSteps) {
  const std::vector<std::int64_t> t = {INT64_MIN + 5, 0, 1'700'000'000'000'000'000, 1'699'999'999'000'000'000, INT64_MAX};
  ChunkCodec codec;
  std::vector<char> blob;
  codec.encode_times(t, 3, blob);
  std::vector<std::int64_t> back;
  codec.decode_times(blob, t.size(), back);
  EXPECT_EQ(back, t);
}

TEST(ChunkCodec, DamagedBlobsAreErrorsNotCrashes) {
  const std::size_t n = 8, nc = 70;
  const auto v = data(n, nc);
  ChunkCodec codec;
  std::vector<char> blob;
  codec.encode_columns(v, n, nc, 1, blob);
  std::vector<double> back(n * nc);
  EXPECT_THROW(codec.decode_columns(blob, n + 1, nc, {}, back.data(), nc), std::runtime_error);  // other shape
  EXPECT_THROW(codec.decode_columns(std::span<const char>(blob).first(10), n, nc, {}, back.data(), nc),
               std::runtime_error);
  EXPECT_THROW(codec.decode_columns(std::span<const char>(blob).first(blob.size() - 4), n, nc, {}, back.data(), nc),
               std::runtime_error);
  auto bad = blob;
  bad[16] = '\x7f';  // first frame's length
  bad[17] = '\x7f';
  EXPECT_THROW(codec.decode_columns(bad, n, nc, {}, back.data(), nc), std::runtime_error);
  std::vector<std::int64_t> t;
  EXPECT_THROW(codec.decode_times(std::span<const char>(blob).first(12), 3, t), std::runtime_error);
}

}  // namespace
}  // namespace reveal::store
