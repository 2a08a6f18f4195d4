#include "metrics_adapter/text/ascii.h"

#include <gtest/gtest.h>

#include <string>

namespace metrics_adapter::text {
namespace {

struct CompareCase {
  const char* name;
  std::string a;
  std::string b;
  bool equal;
};

class EqualsIgnoringAsciiCaseTest : public ::testing::TestWithParam<CompareCase> {};

TEST_P(EqualsIgnoringAsciiCaseTest, FoldsOnlyAsciiLetters) {
  EXPECT_EQ(equalsIgnoringAsciiCase(GetParam().a, GetParam().b), GetParam().equal);
  EXPECT_EQ(equalsIgnoringAsciiCase(GetParam().b, GetParam().a), GetParam().equal);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, EqualsIgnoringAsciiCaseTest,
    ::testing::Values(CompareCase{"Empty", "", "", true},
                      CompareCase{"SameCase", "Bearer", "Bearer", true},
                      CompareCase{"OtherCase", "Authorization", "aUTHORIZATION", true},
                      CompareCase{"DifferentLength", "Bearer", "Bearer ", false},
                      CompareCase{"DifferentLetter", "bearer", "beaver", false},
                      // '@' (0x40) and '`' (0x60) differ by the case bit but are not letters.
                      CompareCase{"CaseBitOfNonLetters", "@[", "`{", false},
                      CompareCase{"NonAsciiNotFolded", "\xC3\xA9", "\xC3\x89", false},
                      CompareCase{"NonAsciiSame", "caf\xC3\xA9", "CAF\xC3\xA9", true},
                      CompareCase{"Digits", "x-1", "X-1", true}),
    [](const auto& info) { return std::string(info.param.name); });

struct MapCase {
  const char* name;
  std::string input;
  std::string lower;
  std::string upper;
};

class AsciiCaseMappingTest : public ::testing::TestWithParam<MapCase> {};

TEST_P(AsciiCaseMappingTest, MapsOnlyAsciiLetters) {
  EXPECT_EQ(lowerAscii(GetParam().input), GetParam().lower);
  EXPECT_EQ(upperAscii(GetParam().input), GetParam().upper);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AsciiCaseMappingTest,
    ::testing::Values(MapCase{"Empty", "", "", ""}, MapCase{"Verb", "Post", "post", "POST"},
                      MapCase{"Boundaries", "@AZ[`az{", "@az[`az{", "@AZ[`AZ{"},
                      MapCase{"NonAsciiKept", "\xC3\xA9X", "\xC3\xA9x", "\xC3\xA9X"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(StartsWithIgnoringAsciiCaseTest, ComparesThePrefixOnly) {
  EXPECT_TRUE(startsWithIgnoringAsciiCase("X-Remote-Group-Admin", "x-remote-group-"));
  EXPECT_TRUE(startsWithIgnoringAsciiCase("abc", ""));
  EXPECT_FALSE(startsWithIgnoringAsciiCase("x-remote", "x-remote-group-"));
  EXPECT_FALSE(startsWithIgnoringAsciiCase("y-remote-group-a", "x-remote-group-"));
}

TEST(TrimAsciiSpaceTest, TrimsTheEndsOnly) {
  EXPECT_EQ(trimAsciiSpace(" \t gzip\r\n"), "gzip");
  EXPECT_EQ(trimAsciiSpace("a b"), "a b");
  EXPECT_EQ(trimAsciiSpace(" \t\r\n"), "");
  EXPECT_EQ(trimAsciiSpace(""), "");
  EXPECT_EQ(trimAsciiSpace("\vx\f"), "\vx\f");  // only space, tab, CR and LF
}

static_assert(toLowerAscii('Q') == 'q' && toUpperAscii('q') == 'Q' && toLowerAscii('1') == '1');

}  // namespace
}  // namespace metrics_adapter::text
