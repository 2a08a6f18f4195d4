#include "metrics_adapter/text/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace metrics_adapter::text {
namespace {

struct SequenceCase {
  const char* name;
  std::string text;
  std::size_t at;
  std::size_t expected_length;  // 0: invalid
};

class Utf8SequenceLengthTest : public ::testing::TestWithParam<SequenceCase> {};

TEST_P(Utf8SequenceLengthTest, MeasuresWellFormedSequences) {
  const auto& param = GetParam();
  EXPECT_EQ(utf8SequenceLength(param.text, param.at), param.expected_length);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Utf8SequenceLengthTest,
    ::testing::Values(
        SequenceCase{"Ascii", "a", 0, 1}, SequenceCase{"Nul", std::string("\0", 1), 0, 1},
        SequenceCase{"Delete", "\x7F", 0, 1}, SequenceCase{"AtOffset", "ab\xC3\xA9", 2, 2},
        SequenceCase{"PastTheEnd", "a", 1, 0}, SequenceCase{"TwoBytes", "\xC3\xA9", 0, 2},
        SequenceCase{"SmallestTwoBytes", "\xC2\x80", 0, 2},
        SequenceCase{"OverlongTwoBytesC0", "\xC0\x80", 0, 0},
        SequenceCase{"OverlongTwoBytesC1", "\xC1\xBF", 0, 0},
        SequenceCase{"ThreeBytes", "\xE2\x82\xAC", 0, 3},
        SequenceCase{"SmallestThreeBytes", "\xE0\xA0\x80", 0, 3},
        SequenceCase{"OverlongThreeBytes", "\xE0\x9F\xBF", 0, 0},
        SequenceCase{"LastBeforeSurrogates", "\xED\x9F\xBF", 0, 3},
        SequenceCase{"Surrogate", "\xED\xA0\x80", 0, 0},
        SequenceCase{"LastSurrogate", "\xED\xBF\xBF", 0, 0},
        SequenceCase{"AfterSurrogates", "\xEE\x80\x80", 0, 3},
        SequenceCase{"FourBytes", "\xF0\x9F\x98\x80", 0, 4},
        SequenceCase{"SmallestFourBytes", "\xF0\x90\x80\x80", 0, 4},
        SequenceCase{"OverlongFourBytes", "\xF0\x8F\xBF\xBF", 0, 0},
        SequenceCase{"LargestCodePoint", "\xF4\x8F\xBF\xBF", 0, 4},
        SequenceCase{"AboveLargestCodePoint", "\xF4\x90\x80\x80", 0, 0},
        SequenceCase{"LeadF5", "\xF5\x80\x80\x80", 0, 0}, SequenceCase{"LeadFF", "\xFF", 0, 0},
        SequenceCase{"StrayContinuation", "\x80", 0, 0},
        SequenceCase{"TruncatedTwoBytes", "\xC3", 0, 0},
        SequenceCase{"TruncatedFourBytes", "\xF0\x9F\x98", 0, 0},
        SequenceCase{"AsciiWhereContinuationExpected",
                     "\xE2\x82"
                     "a",
                     0, 0},
        SequenceCase{"LeadWhereContinuationExpected", "\xC3\xC3\xA9", 0, 0}),
    [](const auto& info) { return std::string(info.param.name); });

struct ValidCase {
  const char* name;
  std::string text;
  bool valid;
};

class IsValidUtf8Test : public ::testing::TestWithParam<ValidCase> {};

TEST_P(IsValidUtf8Test, AcceptsOnlyWellFormedText) {
  EXPECT_EQ(isValidUtf8(GetParam().text), GetParam().valid);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, IsValidUtf8Test,
    ::testing::Values(ValidCase{"Empty", "", true}, ValidCase{"Ascii", "node_load1", true},
                      ValidCase{"Mixed", "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", true},
                      ValidCase{"InvalidInTheMiddle",
                                "ab\xFF"
                                "cd",
                                false},
                      ValidCase{"TruncatedAtTheEnd", "caf\xC3", false},
                      ValidCase{"Surrogate", "\xED\xA0\x80", false}),
    [](const auto& info) { return std::string(info.param.name); });

static_assert(utf8SequenceLength("\xE2\x82\xAC", 0) == 3, "usable in constant expressions");
static_assert(!isValidUtf8("\xC0\x80"));

}  // namespace
}  // namespace metrics_adapter::text
