// save()/load() of the detectors (src/detectors/model_io.cpp): a loaded detector scores exactly as
// the saved one, and malformed data is a DecodeError, never an out-of-bounds read.
#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "reveal/binary_io.h"
#include "reveal/isolation_forest.h"
#include "reveal/pca_residual.h"
#include "reveal/robust_z.h"
#include "reveal/spot.h"

namespace reveal {
namespace {

Matrix data(std::size_t n, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  Matrix m(n, d);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < d; ++c) m(r, c) = g(rng) * double(c + 1) + (c ? 0.5 * m(r, 0) : 0.0);
  m(3, 1) = std::nan("");
  return m;
}

bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

template <class T>
T round_trip(const T& x) {
  ByteWriter w;
  x.save(w);
  T y;
  ByteReader r(w.bytes());
  y.load(r);
  r.expect_end();
  return y;
}

TEST(ModelIo, BinaryEncodingIsLittleEndianAndExact) {
  ByteWriter w;
  w.u32(0x01020304);
  w.f64(-0.0);
  w.f64(std::nan(""));
  w.str("ab");
  const std::string& b = w.bytes();
  ASSERT_EQ(b.size(), 4u + 8 + 8 + 8 + 2);
  EXPECT_EQ(b[0], 0x04);
  EXPECT_EQ(b[3], 0x01);
  ByteReader r(b);
  EXPECT_EQ(r.u32(), 0x01020304u);
  EXPECT_TRUE(std::signbit(r.f64()));
  EXPECT_TRUE(std::isnan(r.f64()));
  EXPECT_EQ(r.str(), "ab");
  EXPECT_THROW(r.u8(), DecodeError);
  const std::string past("\xff\xff\xff\xff\xff\xff\xff\x7f", 8);  // a length past the end
  ByteReader huge(past);
  EXPECT_THROW(huge.f64s(), DecodeError);
}

TEST(ModelIo, RobustZRoundTrip) {
  RobustZ z({.rel_floor = 0.02, .abs_floor = 1e-6});
  z.fit(data(50, 4, 1));
  const RobustZ y = round_trip(z);
  const std::vector<double> x{1.0, -2.0, std::nan(""), 3.0};
  std::vector<double> a(4), b(4);
  z.z(x, a);
  y.z(x, b);
  for (std::size_t j = 0; j < 4; ++j) EXPECT_TRUE(same(a[j], b[j]));
}

TEST(ModelIo, IsolationForestRoundTripAndBadNodes) {
  IsolationForest f({.n_trees = 20, .max_samples = 64, .seed = 3});
  const Matrix X = data(200, 5, 2);
  f.fit(X);
  const IsolationForest g = round_trip(f);
  std::vector<double> ca(5), cb(5);
  for (std::size_t r = 0; r < X.rows(); ++r) {
    ASSERT_TRUE(same(f.score(X.row(r)), g.score(X.row(r))));
    f.feature_contributions(X.row(r), ca);
    g.feature_contributions(X.row(r), cb);
    for (std::size_t j = 0; j < 5; ++j) ASSERT_TRUE(same(ca[j], cb[j]));
  }
  // Damage the root of the first tree (its fields follow options, n_features, c(ψ), the fill
  // values, the tree count, 21 root offsets, 20 heights and the node count; a node is u64 key,
  // u32 feature·8, u32 right child, ...): its feature, then its right child.
  ByteWriter w;
  f.save(w);
  const std::size_t node0 = 4 + 4 + 8 + 8 + 8 + (8 + 5 * 8) + 8 + 21 * 8 + 20 * 4 + 8;
  const auto damaged = [&](std::size_t at, std::int32_t v) {
    std::string b = w.bytes();
    std::memcpy(b.data() + at, &v, 4);
    IsolationForest h;
    ByteReader r(b);
    h.load(r);
  };
  EXPECT_NO_THROW(damaged(node0 + 8, 0));  // feature 0: in range
  EXPECT_THROW(damaged(node0 + 8, 5 * 8), DecodeError);  // feature 5 of 5
  EXPECT_THROW(damaged(node0 + 8, 3), DecodeError);      // not a feature offset
  EXPECT_THROW(damaged(node0 + 8, -8), DecodeError);
  EXPECT_THROW(damaged(node0 + 12, 0), DecodeError);  // children at or before their parent
  EXPECT_THROW(damaged(node0 + 12, 1 << 20), DecodeError);  // outside the tree
  for (std::size_t cut = 0; cut < w.bytes().size(); cut += 97) {
    IsolationForest h;
    ByteReader r(std::string_view(w.bytes()).substr(0, cut));
    EXPECT_THROW(h.load(r), DecodeError) << cut;
  }
}

TEST(ModelIo, PcaResidualRoundTrip) {
  PcaResidual p({.variance = 0.8, .max_components = 3});
  const Matrix X = data(80, 6, 4);
  p.fit(X);
  const PcaResidual q = round_trip(p);
  EXPECT_EQ(q.components(), p.components());
  std::vector<double> ra(6), rb(6);
  for (std::size_t r = 0; r < X.rows(); ++r) {
    const PcaScore a = p.score(X.row(r), ra), b = q.score(X.row(r), rb);
    ASSERT_TRUE(same(a.spe, b.spe) && same(a.t2, b.t2));
    for (std::size_t j = 0; j < 6; ++j) ASSERT_TRUE(same(ra[j], rb[j]));
  }
  PcaResidual cleared = p;
  cleared.clear();
  EXPECT_FALSE(round_trip(cleared).fitted());
}

TEST(ModelIo, SpotTailRoundTripAndBadSizes) {
  std::mt19937_64 rng(5);
  std::exponential_distribution<double> e(1.0);
  std::vector<double> ref(500);
  for (double& v : ref) v = e(rng);
  SpotTail t;
  t.fit(ref);
  const SpotTail u = round_trip(t);
  for (double x : {0.1, 1.0, 3.0, 6.0, 20.0}) EXPECT_TRUE(same(t.tail_probability(x), u.tail_probability(x)));
  EXPECT_TRUE(same(t.threshold(1e-4), u.threshold(1e-4)));
  ByteWriter w;
  t.save(w);
  std::string b = w.bytes();
  const std::uint64_t peaks = 501;  // more peaks than reference values
  // initial_level, min_peaks, min_gamma, min_sigma, t, γ, σ, n, then peaks
  std::memcpy(b.data() + 8 + 8 + 2 * 8 + 3 * 8 + 8, &peaks, 8);
  SpotTail v;
  ByteReader r(b);
  EXPECT_THROW(v.load(r), DecodeError);
}

}  // namespace
}  // namespace reveal
