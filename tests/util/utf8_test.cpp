#include <gtest/gtest.h>

#include <string>

#include "util/utf8.h"

namespace reveal {
namespace {

TEST(Utf8, SequenceLengthsFollowRfc3629) {
  EXPECT_EQ(utf8_sequence(""), 0u);
  EXPECT_EQ(utf8_sequence("a"), 1u);
  EXPECT_EQ(utf8_sequence("\xc3\xa9x"), 2u);          // é
  EXPECT_EQ(utf8_sequence("\xe6\xb8\xa9"), 3u);       // 温
  EXPECT_EQ(utf8_sequence("\xf0\x9f\x94\xa5"), 4u);   // U+1F525
  EXPECT_EQ(utf8_sequence("\xc0\xaf"), 0u);           // overlong '/'
  EXPECT_EQ(utf8_sequence("\xe0\x80\xaf"), 0u);       // overlong, 3 bytes
  EXPECT_EQ(utf8_sequence("\xed\xa0\x80"), 0u);       // surrogate U+D800
  EXPECT_EQ(utf8_sequence("\xf4\x90\x80\x80"), 0u);   // past U+10FFFF
  EXPECT_EQ(utf8_sequence("\xc3"), 0u);               // cut short
  EXPECT_EQ(utf8_sequence("\xe6\xb8"), 0u);
  EXPECT_EQ(utf8_sequence("\x80"), 0u);               // a lone continuation byte
  EXPECT_EQ(utf8_sequence("\xff"), 0u);
}

TEST(Utf8, InvalidBytesAreEscapedLosslesslyAndValidTextIsKept) {
  EXPECT_TRUE(is_valid_utf8("eth0 \xc3\xa9t\xc3\xa9"));
  EXPECT_FALSE(is_valid_utf8("eth\xff"));
  EXPECT_EQ(escape_invalid_utf8("eth0"), "eth0");
  EXPECT_EQ(escape_invalid_utf8("\xc3\xa9"), "\xc3\xa9");
  EXPECT_EQ(escape_invalid_utf8("eth\xff"), "eth\\xff");
  EXPECT_EQ(escape_invalid_utf8("a\xc3"), "a\\xc3");                 // cut short at the end
  EXPECT_EQ(escape_invalid_utf8("\xed\xa0\x80z"), "\\xed\\xa0\\x80z");  // each byte of a surrogate
  EXPECT_NE(escape_invalid_utf8("eth\xfe"), escape_invalid_utf8("eth\xff"));
  EXPECT_TRUE(is_valid_utf8(escape_invalid_utf8(std::string("x\x80\xc0\xf5\0y", 6))));
}

}  // namespace
}  // namespace reveal
