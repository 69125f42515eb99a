// The CLI's spool (src/cli/spool.h): pieces written once, read back in any order, whole.
#include "cli/spool.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace reveal::cli {
namespace {

std::string read_back(Spool& s, const std::string& name) {
  std::string out;
  s.replay(name, [&](std::string_view p) {
    EXPECT_LE(p.size(), std::size_t(1) << 20);
    out += p;
  });
  return out;
}

TEST(Spool, PiecesComeBackWholeInAnyOrder) {
  Spool s;
  s.add("a", [](const Spool::Writer& w) {
    w("first ");
    w("");
    w("second");
  });
  std::string big(3 * (std::size_t(1) << 20) + 17, 'x');
  for (std::size_t i = 0; i < big.size(); i += 4099) big[i] = char('a' + i % 26);
  s.add("b", [&](const Spool::Writer& w) { w(big); });
  s.add("empty", [](const Spool::Writer&) {});
  EXPECT_EQ(read_back(s, "b"), big);
  EXPECT_EQ(read_back(s, "a"), "first second");
  EXPECT_EQ(read_back(s, "empty"), "");
  // Written after a read: appended, the others unharmed.
  s.add("c", [](const Spool::Writer& w) { w("third"); });
  EXPECT_EQ(read_back(s, "c"), "third");
  EXPECT_EQ(read_back(s, "a"), "first second");
}

TEST(Spool, ANameTwiceOrUnknownIsAnError) {
  Spool s;
  s.add("a", [](const Spool::Writer& w) { w("x"); });
  EXPECT_THROW(s.add("a", [](const Spool::Writer& w) { w("y"); }), std::runtime_error);
  EXPECT_THROW(s.replay("nope", [](std::string_view) {}), std::runtime_error);
  EXPECT_EQ(read_back(s, "a"), "x");
}

}  // namespace
}  // namespace reveal::cli
