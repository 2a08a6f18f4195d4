#include "metrics_adapter/promql/label_matchers.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "promql/go_strings.h"

namespace metrics_adapter::promql {
namespace {

struct QuoteCase {
  std::string input;
  std::string quoted;  // what Go's strconv.Quote returns (except U+FFFD, see below)
};

void PrintTo(const QuoteCase& c, std::ostream* os) { *os << testing::PrintToString(c.input); }

class QuoteGoStringTest : public testing::TestWithParam<QuoteCase> {};

TEST_P(QuoteGoStringTest, QuotesLikeGo) {
  EXPECT_EQ(quoteGoString(GetParam().input), GetParam().quoted);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, QuoteGoStringTest,
    testing::Values(
        QuoteCase{"", R"("")"}, QuoteCase{"p1", R"("p1")"},
        QuoteCase{"a'b c~", R"("a'b c~")"},  // printable ASCII, single quote not escaped
        QuoteCase{"a\"b", R"("a\"b")"}, QuoteCase{"a\\b", R"("a\\b")"},
        QuoteCase{"\"}", R"("\"}")"},  // cannot close the literal and the selector
        QuoteCase{"x\"} or vector(1) # ", R"("x\"} or vector(1) # ")"},
        QuoteCase{"\a\b\f\n\r\t\v", R"("\a\b\f\n\r\t\v")"},
        QuoteCase{std::string("\0", 1), R"("\x00")"}, QuoteCase{"\x1b[0m", R"("\x1b[0m")"},
        QuoteCase{"\x7f", R"("\x7f")"}, QuoteCase{"\x1f", R"("\x1f")"},
        // Printable UTF-8 is kept.
        QuoteCase{"caf\xc3\xa9", "\"caf\xc3\xa9\""}, QuoteCase{"\xe6\x97\xa5", "\"\xe6\x97\xa5\""},
        QuoteCase{"\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""},  // U+1F600
        // Invalid UTF-8 bytes become \xNN one byte at a time.
        QuoteCase{"\xff", R"("\xff")"}, QuoteCase{"\xc3", R"("\xc3")"},
        QuoteCase{"\xc3(", R"("\xc3(")"}, QuoteCase{"\xc0\x80", R"("\xc0\x80")"},  // overlong
        QuoteCase{"\xe0\x80\xaf", R"("\xe0\x80\xaf")"},                            // overlong
        QuoteCase{"\xed\xa0\x80", R"("\xed\xa0\x80")"},                            // surrogate
        QuoteCase{"\xf4\x90\x80\x80", R"("\xf4\x90\x80\x80")"},                    // > U+10FFFF
        QuoteCase{"\xe6\x97", R"("\xe6\x97")"},                                    // truncated
        QuoteCase{"a\x80z", R"("a\x80z")"},
        // Valid but not printable: \u / \U escapes.
        QuoteCase{"\xc2\x85", R"("\u0085")"},      // C1 control NEL
        QuoteCase{"\xc2\xa0", R"("\u00a0")"},      // no-break space
        QuoteCase{"\xc2\xad", R"("\u00ad")"},      // soft hyphen
        QuoteCase{"\xe2\x80\x8b", R"("\u200b")"},  // zero-width space
        QuoteCase{"\xe2\x80\xa8", R"("\u2028")"},  // line separator
        QuoteCase{"\xe2\x80\xae", R"("\u202e")"},  // right-to-left override
        QuoteCase{"\xef\xbb\xbf", R"("\ufeff")"},  // byte order mark
        QuoteCase{"\xee\x80\x80", R"("\ue000")"},  // private use
        QuoteCase{"\xef\xbf\xbe", R"("\ufffe")"},  // noncharacter
        QuoteCase{"\xf4\x8f\xbf\xbf", R"("\U0010ffff")"},
        QuoteCase{"\xf3\xa0\x80\x81", R"("\U000e0001")"},  // language tag
        // Go keeps U+FFFD, but Prometheus's lexer rejects it as invalid UTF-8: we escape it.
        QuoteCase{"\xef\xbf\xbd", R"("\ufffd")"}));

// Decodes a PromQL double-quoted string literal the way Prometheus does (its lexer accepts a
// raw character unless it is invalid UTF-8 (including U+FFFD), a newline, an unescaped quote
// or backslash; strconv.Unquote then resolves escapes). nullopt when Prometheus would reject it.
std::optional<std::string> decodePromqlString(const std::string& literal) {
  if (literal.size() < 2 || literal.front() != '"' || literal.back() != '"') return std::nullopt;
  const std::string body = literal.substr(1, literal.size() - 2);
  std::string out;
  const auto hex_value = [&body](std::size_t pos, std::size_t digits) -> std::optional<uint32_t> {
    if (pos + digits > body.size()) return std::nullopt;
    uint32_t value = 0;
    for (std::size_t i = 0; i < digits; ++i) {
      const char ch = body[pos + i];
      int digit = -1;
      if (ch >= '0' && ch <= '9') digit = ch - '0';
      if (ch >= 'a' && ch <= 'f') digit = ch - 'a' + 10;
      if (ch >= 'A' && ch <= 'F') digit = ch - 'A' + 10;
      if (digit < 0) return std::nullopt;
      value = value * 16 + static_cast<uint32_t>(digit);
    }
    return value;
  };
  std::size_t pos = 0;
  while (pos < body.size()) {
    const auto byte = static_cast<unsigned char>(body[pos]);
    if (byte == '"' || byte == '\n') return std::nullopt;
    if (byte == '\\') {
      if (pos + 1 >= body.size()) return std::nullopt;
      const char kind = body[pos + 1];
      const std::string simple = "abfnrtv\\\"";
      const std::string decoded = "\a\b\f\n\r\t\v\\\"";
      if (simple.find(kind) != std::string::npos) {
        out += decoded[simple.find(kind)];
        pos += 2;
        continue;
      }
      const std::size_t digits = kind == 'x' ? 2 : kind == 'u' ? 4 : kind == 'U' ? 8 : 0;
      if (digits == 0) return std::nullopt;
      const auto value = hex_value(pos + 2, digits);
      if (!value) return std::nullopt;
      if (kind == 'x') {
        out += static_cast<char>(*value);
      } else {
        if (*value > 0x10FFFF || (*value >= 0xD800 && *value < 0xE000)) return std::nullopt;
        go::appendRune(out, *value);
      }
      pos += 2 + digits;
      continue;
    }
    // A raw character must be valid UTF-8 and must not be U+FFFD.
    std::size_t width = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2;
    if (byte >= 0x80 && (byte < 0xC2 || byte > 0xF4)) return std::nullopt;
    if (pos + width > body.size()) return std::nullopt;
    uint32_t rune = width == 1   ? byte
                    : width == 2 ? byte & 0x1F
                    : width == 3 ? byte & 0x0F
                                 : byte & 0x07;
    for (std::size_t i = 1; i < width; ++i) {
      const auto next = static_cast<unsigned char>(body[pos + i]);
      if ((next & 0xC0) != 0x80) return std::nullopt;
      rune = (rune << 6) | (next & 0x3F);
    }
    const uint32_t minimum = width == 2 ? 0x80 : width == 3 ? 0x800 : 0x10000;
    if (width > 1 && rune < minimum) return std::nullopt;
    if (rune > 0x10FFFF || (rune >= 0xD800 && rune < 0xE000) || rune == 0xFFFD) {
      return std::nullopt;
    }
    out.append(body, pos, width);
    pos += width;
  }
  return out;
}

// Empty when quoteGoString(input) is a valid PromQL literal that decodes back to `input`;
// otherwise what went wrong. A plain function so that a million calls stay fast.
std::string roundTripProblem(const std::string& input) {
  const std::string quoted = quoteGoString(input);
  const auto decoded = decodePromqlString(quoted);
  if (!decoded) return "not a valid PromQL string: " + quoted;
  if (*decoded != input) return "decodes to something else: " + quoted;
  return "";
}

TEST(QuoteGoStringSecurityTest, EveryShortByteStringIsAValidLiteralOfItself) {
  for (int first = 0; first < 256; ++first) {
    ASSERT_EQ(roundTripProblem(std::string(1, static_cast<char>(first))), "");
    for (int second = 0; second < 256; ++second) {
      const std::string input = {static_cast<char>(first), static_cast<char>(second)};
      const std::string problem = roundTripProblem(input);
      ASSERT_TRUE(problem.empty()) << problem;
    }
  }
}

// Code points are checked in blocks of 256 (one string each) to keep the test fast.
TEST(QuoteGoStringSecurityTest, EveryCodePointIsAValidLiteralOfItself) {
  for (uint32_t block = 0; block <= 0x10FFFF; block += 0x100) {
    if (block >= 0xD800 && block < 0xE000) continue;
    std::string input;
    for (uint32_t rune = block; rune < block + 0x100; ++rune) {
      if (rune < 0x80) {
        input += static_cast<char>(rune);
      } else if (rune < 0x800) {
        input += {static_cast<char>(0xC0 | (rune >> 6)), static_cast<char>(0x80 | (rune & 0x3F))};
      } else if (rune < 0x10000) {
        input +=
            {static_cast<char>(0xE0 | (rune >> 12)), static_cast<char>(0x80 | ((rune >> 6) & 0x3F)),
             static_cast<char>(0x80 | (rune & 0x3F))};
      } else {
        input += {static_cast<char>(0xF0 | (rune >> 18)),
                  static_cast<char>(0x80 | ((rune >> 12) & 0x3F)),
                  static_cast<char>(0x80 | ((rune >> 6) & 0x3F)),
                  static_cast<char>(0x80 | (rune & 0x3F))};
      }
    }
    const std::string problem = roundTripProblem(input);
    ASSERT_TRUE(problem.empty()) << "block U+" << std::hex << block << ": " << problem;
  }
}

TEST(QuoteGoStringSecurityTest, LongMixedInputsRoundTrip) {
  uint32_t state = 12345;  // fixed LCG seed: deterministic
  for (int round = 0; round < 2000; ++round) {
    std::string input;
    for (int i = 0; i < 24; ++i) {
      state = state * 1103515245U + 12345U;
      input += static_cast<char>((state >> 16) & 0xFF);
    }
    const std::string problem = roundTripProblem(input);
    ASSERT_TRUE(problem.empty()) << problem;
  }
}

struct EscapeCase {
  std::string input;
  std::string escaped;
};

void PrintTo(const EscapeCase& c, std::ostream* os) { *os << testing::PrintToString(c.input); }

class EscapeRegexTest : public testing::TestWithParam<EscapeCase> {};

TEST_P(EscapeRegexTest, EscapesMetacharactersAndMatchesLiterally) {
  EXPECT_EQ(escapeRegex(GetParam().input), GetParam().escaped);
  const RE2 pattern(escapeRegex(GetParam().input));
  ASSERT_TRUE(pattern.ok()) << pattern.error();
  EXPECT_TRUE(RE2::FullMatch(GetParam().input, pattern));
}

INSTANTIATE_TEST_SUITE_P(Cases, EscapeRegexTest,
                         testing::Values(EscapeCase{"", ""}, EscapeCase{"web-0_a", "web-0_a"},
                                         EscapeCase{"a.b", "a\\.b"},
                                         EscapeCase{"\\.+*?()|[]{}^$",
                                                    "\\\\\\.\\+\\*\\?\\(\\)\\|\\[\\]\\{\\}\\^\\$"},
                                         EscapeCase{"a|b", "a\\|b"}, EscapeCase{".*", "\\.\\*"}));

TEST(EscapeRegexTest, DotNoLongerMatchesAnyCharacter) {
  EXPECT_FALSE(RE2::FullMatch("axb", RE2(escapeRegex("a.b"))));
  EXPECT_FALSE(RE2::FullMatch("a", RE2(escapeRegex("a|b"))));
}

TEST(LabelMatcherTest, RendersEachOperator) {
  EXPECT_EQ((LabelMatcher{"pod", MatchOperator::kEqual, "p1"}).render(), R"(pod="p1")");
  EXPECT_EQ((LabelMatcher{"pod", MatchOperator::kNotEqual, ""}).render(), R"(pod!="")");
  EXPECT_EQ((LabelMatcher{"pod", MatchOperator::kRegexMatch, "a\\.b|c"}).render(),
            R"(pod=~"a\\.b|c")");
  EXPECT_EQ((LabelMatcher{"pod", MatchOperator::kRegexNoMatch, "a|b"}).render(), R"(pod!~"a|b")");
  EXPECT_EQ((LabelMatcher{"verb", MatchOperator::kEqual, "x\"}"}).render(), R"(verb="x\"}")");
}

struct SelectorMatchersCase {
  std::string selector;
  std::string matchers;  // joinMatchers of the result (docs/api-contract.md "prometheus-adapter:
                         // selector to PromQL")
};

void PrintTo(const SelectorMatchersCase& c, std::ostream* os) {
  *os << testing::PrintToString(c.selector);
}

class SelectorToMatchersTest : public testing::TestWithParam<SelectorMatchersCase> {};

TEST_P(SelectorToMatchersTest, MapsLikePrometheusAdapter) {
  EXPECT_EQ(joinMatchers(selectorToMatchers(parseLabelSelector(GetParam().selector))),
            GetParam().matchers);
}

INSTANTIATE_TEST_SUITE_P(
    Table, SelectorToMatchersTest,
    testing::Values(SelectorMatchersCase{"", ""}, SelectorMatchersCase{"verb=GET", R"(verb="GET")"},
                    SelectorMatchersCase{"verb==GET", R"(verb="GET")"},
                    SelectorMatchersCase{"verb!=GET", R"(verb!="GET")"},
                    SelectorMatchersCase{"tier in (b,a)", R"(tier=~"a|b")"},
                    SelectorMatchersCase{"tier in (a)", R"(tier=~"a")"},
                    SelectorMatchersCase{"tier notin (a,b)", R"(tier!~"a|b")"},
                    SelectorMatchersCase{"tier", R"(tier!="")"},
                    SelectorMatchersCase{"!tier", R"(tier="")"},
                    SelectorMatchersCase{"tier in ()", R"(tier=~"")"},
                    // Improvement: in/notin values are regex-escaped; = values stay exact.
                    SelectorMatchersCase{"v in (a.b,c)", R"(v=~"a\\.b|c")"},
                    SelectorMatchersCase{"v notin (a.b)", R"(v!~"a\\.b")"},
                    SelectorMatchersCase{"v=a.b", R"(v="a.b")"},
                    // Requirements in key order.
                    SelectorMatchersCase{"b=1,a=2,!c", R"(a="2",b="1",c="")"}));

TEST(SelectorToMatchersTest, RejectsIntegerComparisons) {
  for (const char* text : {"k>5", "k<5", "a=1,k>5"}) {
    try {
      selectorToMatchers(parseLabelSelector(text));
      ADD_FAILURE() << text;
    } catch (const SelectorError& error) {
      EXPECT_STREQ(error.what(), "operator not supported by prometheus");
    }
  }
}

// Combinations the parser never produces but a hand-built selector can
// (docs/api-contract.md "prometheus-adapter: selector to PromQL").
TEST(SelectorToMatchersTest, HandlesMalformedRequirements) {
  const auto single = [](Requirement requirement) {
    LabelSelector selector;
    selector.requirements.push_back(std::move(requirement));
    return selector;
  };
  EXPECT_EQ(
      joinMatchers(selectorToMatchers(single({"k", SelectorOperator::kEquals, {"a", "b.c"}}))),
      R"(k=~"a|b\\.c")");
  EXPECT_EQ(
      joinMatchers(selectorToMatchers(single({"k", SelectorOperator::kNotEquals, {"a", "b"}}))),
      R"(k!~"a|b")");
  const auto message = [&single](Requirement requirement) -> std::string {
    try {
      selectorToMatchers(single(std::move(requirement)));
    } catch (const SelectorError& error) {
      return error.what();
    }
    return "no error";
  };
  EXPECT_EQ(message({"k", SelectorOperator::kEquals, {}}), "operator requires values");
  EXPECT_EQ(message({"k", SelectorOperator::kIn, {}}), "operator requires values");
  EXPECT_EQ(message({"k", SelectorOperator::kNotIn, {}}), "operator requires values");
  EXPECT_EQ(message({"k", SelectorOperator::kExists, {"v"}}), "operator does not support values");
  EXPECT_EQ(message({"k", SelectorOperator::kDoesNotExist, {"v"}}),
            "operator does not support values");
  EXPECT_EQ(message({"", SelectorOperator::kEquals, {"v"}}), "label not specified");
}

struct NamesCase {
  std::vector<std::string> names;
  std::string matcher;  // docs/api-contract.md "prometheus-adapter: label matchers" table with
                        // docs/api-contract.md "Decisions: better on purpose" 1
};

void PrintTo(const NamesCase& c, std::ostream* os) { *os << testing::PrintToString(c.names); }

class ObjectNamesMatcherTest : public testing::TestWithParam<NamesCase> {};

TEST_P(ObjectNamesMatcherTest, RendersNameMatcher) {
  EXPECT_EQ(objectNamesMatcher("pod", GetParam().names).render(), GetParam().matcher);
}

INSTANTIATE_TEST_SUITE_P(Table, ObjectNamesMatcherTest,
                         testing::Values(NamesCase{{"p1"}, R"(pod="p1")"},
                                         NamesCase{{"a.b"}, R"(pod="a.b")"},
                                         NamesCase{{"p2", "p1"}, R"(pod=~"p1|p2")"},
                                         NamesCase{{"a.b", "c"}, R"(pod=~"a\\.b|c")"},
                                         NamesCase{{}, R"(pod="")"},
                                         NamesCase{{"p1", "p1"}, R"(pod="p1")"},
                                         NamesCase{{"b", "a", "b"}, R"(pod=~"a|b")"}));

TEST(JoinMatchersTest, JoinsWithCommasInOrder) {
  // docs/api-contract.md "prometheus-adapter: rendering by request shape": selector matchers, then
  // namespace, then resource names.
  std::vector<LabelMatcher> matchers = selectorToMatchers(parseLabelSelector("verb=GET"));
  matchers.push_back({"namespace", MatchOperator::kEqual, "ns"});
  matchers.push_back(objectNamesMatcher("pod", {"p1", "p2"}));
  EXPECT_EQ(joinMatchers(matchers), R"(verb="GET",namespace="ns",pod=~"p1|p2")");
  EXPECT_EQ(joinMatchers({}), "");
}

}  // namespace
}  // namespace metrics_adapter::promql
