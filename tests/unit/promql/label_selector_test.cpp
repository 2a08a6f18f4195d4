#include "metrics_adapter/promql/label_selector.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace metrics_adapter::promql {
namespace {

struct CanonicalCase {
  std::string input;
  std::string canonical;  // labels.Selector.String() of the parsed selector (docs/api-contract.md
                          // "Label selector strings")
};

void PrintTo(const CanonicalCase& c, std::ostream* os) { *os << testing::PrintToString(c.input); }

class ParseCanonicalTest : public testing::TestWithParam<CanonicalCase> {};

TEST_P(ParseCanonicalTest, ParsesToCanonicalString) {
  const LabelSelector selector = parseLabelSelector(GetParam().input);
  EXPECT_EQ(toString(selector), GetParam().canonical);
}

const std::string kName63(63, 'a');
const std::string kPrefix253 = std::string(126, 'a') + "." + std::string(126, 'b');

INSTANTIATE_TEST_SUITE_P(
    Selectors, ParseCanonicalTest,
    testing::Values(
        // What the HPA sends (docs/api-contract.md "Label selector strings").
        CanonicalCase{"", ""},
        CanonicalCase{"app=bert-intent-detection", "app=bert-intent-detection"},
        CanonicalCase{"app=web,tier in (backend,cache)", "app=web,tier in (backend,cache)"},
        // Requirements sorted by key, values sorted and de-duplicated
        // (docs/api-contract.md "Label selector strings" and
        // docs/api-contract.md "prometheus-adapter: sharp edges we decided", 6).
        CanonicalCase{"tier in (cache,backend,cache),app=web", "app=web,tier in (backend,cache)"},
        CanonicalCase{"k==v", "k==v"}, CanonicalCase{"k!=v", "k!=v"}, CanonicalCase{"!k", "!k"},
        CanonicalCase{"k", "k"}, CanonicalCase{"k notin (b,a)", "k notin (a,b)"},
        CanonicalCase{"k>5", "k>5"}, CanonicalCase{"k<5", "k<5"}, CanonicalCase{"k>05", "k>05"},
        // Whitespace separates tokens; special characters end identifiers.
        CanonicalCase{"  app = web ,tier in(backend , cache )  ",
                      "app=web,tier in (backend,cache)"},
        CanonicalCase{"\tapp=web\n,\r!gone", "app=web,!gone"},
        CanonicalCase{"x notin(a)", "x notin (a)"},
        // Omitted values are the empty string: Go's own doc example "x in (foo,,baz),y,z notin ()".
        CanonicalCase{"x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z notin ()"},
        CanonicalCase{"k=", "k="}, CanonicalCase{"k=,j", "j,k="},
        CanonicalCase{"k in (,)", "k in ()"}, CanonicalCase{"k in (a,)", "k in (,a)"},
        CanonicalCase{"k in (,a)", "k in (,a)"},
        // `in` and `notin` are plain words where a key or value is expected.
        CanonicalCase{"in in (in,notin)", "in in (in,notin)"}, CanonicalCase{"k=notin", "k=notin"},
        CanonicalCase{"notin", "notin"},
        // Qualified keys.
        CanonicalCase{"app.kubernetes.io/name=web", "app.kubernetes.io/name=web"},
        CanonicalCase{"example.com/GPU_Model=A100-80GB", "example.com/GPU_Model=A100-80GB"},
        CanonicalCase{kName63 + "=" + kName63, kName63 + "=" + kName63},
        CanonicalCase{kPrefix253 + "/k=v", kPrefix253 + "/k=v"},
        // Stable sort: equal keys keep their order.
        CanonicalCase{"b=2,a=1,b=1", "a=1,b=2,b=1"}));

TEST(ParseLabelSelectorTest, KeepsOperatorAndSortedValues) {
  const LabelSelector selector = parseLabelSelector("x in (foo,,baz),!y,z>7");
  ASSERT_EQ(selector.requirements.size(), 3U);
  EXPECT_EQ(selector.requirements[0].key, "x");
  EXPECT_EQ(selector.requirements[0].op, SelectorOperator::kIn);
  EXPECT_EQ(selector.requirements[0].values, (std::vector<std::string>{"", "baz", "foo"}));
  EXPECT_EQ(selector.requirements[1].op, SelectorOperator::kDoesNotExist);
  EXPECT_TRUE(selector.requirements[1].values.empty());
  EXPECT_EQ(selector.requirements[2].op, SelectorOperator::kGreaterThan);
  EXPECT_EQ(selector.requirements[2].values, (std::vector<std::string>{"7"}));
  EXPECT_TRUE(parseLabelSelector("  ").empty());
}

TEST(ParseLabelSelectorTest, DistinguishesEqualityOperators) {
  EXPECT_EQ(parseLabelSelector("k=v").requirements[0].op, SelectorOperator::kEquals);
  EXPECT_EQ(parseLabelSelector("k==v").requirements[0].op, SelectorOperator::kDoubleEquals);
  EXPECT_EQ(parseLabelSelector("k!=v").requirements[0].op, SelectorOperator::kNotEquals);
  EXPECT_EQ(parseLabelSelector("k notin (v)").requirements[0].op, SelectorOperator::kNotIn);
  EXPECT_EQ(parseLabelSelector("k<1").requirements[0].op, SelectorOperator::kLessThan);
  EXPECT_EQ(parseLabelSelector("k").requirements[0].op, SelectorOperator::kExists);
}

struct ErrorCase {
  std::string input;
  std::vector<std::string> fragments;  // each must appear in what()
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << testing::PrintToString(c.input); }

class ParseErrorTest : public testing::TestWithParam<ErrorCase> {};

TEST_P(ParseErrorTest, RejectsWithReasonAndPlace) {
  try {
    parseLabelSelector(GetParam().input);
    FAIL() << "accepted: " << GetParam().input;
  } catch (const SelectorError& error) {
    const std::string message = error.what();
    for (const std::string& fragment : GetParam().fragments) {
      EXPECT_NE(message.find(fragment), std::string::npos) << message << "\nlacks: " << fragment;
    }
    for (const char ch : message) {  // safe to put into JSON and logs
      EXPECT_TRUE(ch >= 0x20 && ch < 0x7f) << message;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Syntax, ParseErrorTest,
    testing::Values(
        ErrorCase{"app=web,", {"found end of string, expected: identifier after ','", "column 9"}},
        ErrorCase{",app", {"found ',', expected: !, identifier, or 'end of string'", "column 1"}},
        ErrorCase{"=v", {"found '=', expected: !, identifier, or 'end of string'"}},
        ErrorCase{"app=web tier=x", {"found 'tier', expected: ',' or 'end of string'", "column 9"}},
        ErrorCase{"!k=v", {"found '=', expected: ',' or 'end of string'", "column 3"}},
        ErrorCase{"a,,b", {"found ',', expected: identifier after ','", "column 3"}},
        ErrorCase{"!", {"unable to parse requirement: found end of string, expected: identifier"}},
        ErrorCase{"!!k", {"unable to parse requirement: found '!', expected: identifier"}},
        ErrorCase{"k x",
                  {"unable to parse requirement: found 'x', expected: in, notin, =", "column 3"}},
        // docs/api-contract.md "Label selector strings": `in` must be separated from the key.
        ErrorCase{"tierin (a)", {"found '(', expected: in, notin, =, ==, !=, >, <"}},
        ErrorCase{"k in", {"unable to parse requirement: found end of string, expected: '('"}},
        ErrorCase{"k in a", {"found 'a', expected: '('", "column 6"}},
        ErrorCase{"k in (a", {"found end of string, expected: ',' or ')'"}},
        ErrorCase{"k in (a b)", {"found 'b', expected: ',' or ')'", "column 9"}},
        ErrorCase{"k in (=)", {"found '=', expected: ',', ')' or identifier"}},
        ErrorCase{"k in (a,=)", {"found '=', expected: ',', or identifier", "column 9"}},
        ErrorCase{"k in ((a))", {"found '(', expected: ',', ')' or identifier"}},
        ErrorCase{"k=(", {"unable to parse requirement: found '(', expected: identifier"}},
        ErrorCase{"k==!", {"found '!', expected: identifier"}},
        ErrorCase{"k=a=b", {"found '=', expected: ',' or 'end of string'"}}));

INSTANTIATE_TEST_SUITE_P(
    Validation, ParseErrorTest,
    testing::Values(
        ErrorCase{"k>abc", {"invalid value 'abc' for key 'k'", "must be an integer", "column 3"}},
        ErrorCase{"k>", {"invalid value '' for key 'k'", "must be an integer"}},
        ErrorCase{"k<1.5", {"must be an integer"}},
        ErrorCase{"k<99999999999999999999", {"must be an integer"}},  // int64 overflow
        // An integer, but not a valid label value (must start alphanumeric).
        ErrorCase{"k>-5", {"invalid value '-5'", "must start and end with an alphanumeric"}},
        ErrorCase{"Bad_=x", {"invalid label key 'Bad_'", "name part must consist of"}},
        ErrorCase{"a/b/c=x", {"invalid label key 'a/b/c'", "a qualified name"}},
        ErrorCase{"/a=x", {"prefix part must be non-empty"}},
        ErrorCase{"a/=x", {"name part must be non-empty"}},
        ErrorCase{"Example.com/a=x", {"prefix part a lowercase RFC 1123 subdomain"}},
        ErrorCase{"a..b/c=x", {"prefix part a lowercase RFC 1123 subdomain"}},
        ErrorCase{std::string(64, 'a') + "=x", {"name part must be no more than 63 characters"}},
        ErrorCase{std::string(254, 'a') + "/k=x",
                  {"prefix part must be no more than 253 characters"}},
        ErrorCase{"k=v_", {"invalid value 'v_' for key 'k'", "column 3"}},
        ErrorCase{"k=" + std::string(64, 'v'), {"must be no more than 63 characters"}},
        ErrorCase{"k in (ok,b@d)", {"invalid value 'b@d'", "column 10"}},
        ErrorCase{"k=a\"},x=\"", {"invalid value 'a\"}'"}},  // PromQL injection attempt
        ErrorCase{"k=a|b", {"invalid value 'a|b'"}},
        ErrorCase{std::string("k=v\0x", 5), {"invalid value 'v\\x00x'"}},  // NUL is not the end
        ErrorCase{std::string("k=v \0", 5), {"found '\\x00', expected: ',' or 'end of string'"}},
        ErrorCase{"k=\xff\xfe", {"invalid value '\\xff\\xfe'"}},
        ErrorCase{"k=caf\xc3\xa9", {"invalid value 'caf\\xc3\\xa9'"}},
        ErrorCase{std::string(65 * 1024, 'a'), {"label selector is too long", "66560 bytes"}}));

TEST(ParseLabelSelectorTest, AcceptsExactlyTheSizeLimit) {
  std::string text = "k in (";
  while (text.size() < 64 * 1024 - 2) text += "v,";
  text += "v)";
  ASSERT_EQ(text.size(), 64U * 1024U);
  EXPECT_EQ(toString(parseLabelSelector(text)), "k in (v)");
  EXPECT_THROW(parseLabelSelector(text + " "), SelectorError);
}

TEST(ParseLabelSelectorTest, ShortensLongLiteralsInMessages) {
  try {
    parseLabelSelector("k in (a " + std::string(10000, 'b') + ")");
    FAIL();
  } catch (const SelectorError& error) {
    EXPECT_LT(std::string(error.what()).size(), 200U) << error.what();
  }
}

// Every string over a small alphabet of significant characters either parses or throws
// SelectorError, and a parsed selector's canonical string parses back to itself.
TEST(ParseLabelSelectorTest, NeverCrashesAndCanonicalFormIsAFixedPoint) {
  const std::vector<std::string> alphabet = {
      "a", "in", "=", "!", "(", ")", ",", " ", ">", "1", "-", std::string(1, '\0'), "\xff"};
  std::vector<std::string> inputs = {""};
  for (int length = 0; length < 4; ++length) {
    std::vector<std::string> longer;
    for (const std::string& prefix : inputs) {
      for (const std::string& piece : alphabet) longer.push_back(prefix + piece);
    }
    inputs.insert(inputs.end(), longer.begin(), longer.end());
  }
  int parsed = 0;
  for (const std::string& input : inputs) {
    try {
      const std::string canonical = toString(parseLabelSelector(input));
      EXPECT_EQ(toString(parseLabelSelector(canonical)), canonical) << input;
      ++parsed;
    } catch (const SelectorError&) {
    }
  }
  EXPECT_GT(parsed, 100);
}

struct MatchCase {
  std::string selector;
  std::map<std::string, std::string> labels;
  bool expected;
};

void PrintTo(const MatchCase& c, std::ostream* os) { *os << testing::PrintToString(c.selector); }

class MatchesTest : public testing::TestWithParam<MatchCase> {};

TEST_P(MatchesTest, FollowsKubernetesSemantics) {
  EXPECT_EQ(matches(parseLabelSelector(GetParam().selector), GetParam().labels),
            GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Semantics, MatchesTest,
    testing::Values(
        MatchCase{"", {}, true}, MatchCase{"", {{"a", "b"}}, true},
        MatchCase{"app=web", {{"app", "web"}}, true}, MatchCase{"app=web", {{"app", "db"}}, false},
        MatchCase{"app=web", {}, false}, MatchCase{"app==web", {{"app", "web"}}, true},
        // != and notin match an absent key (docs/api-contract.md "Label selector strings").
        MatchCase{"app!=web", {}, true}, MatchCase{"app!=web", {{"app", "web"}}, false},
        MatchCase{"app!=web", {{"app", "db"}}, true},
        MatchCase{"tier in (a,b)", {{"tier", "b"}}, true},
        MatchCase{"tier in (a,b)", {{"tier", "c"}}, false}, MatchCase{"tier in (a,b)", {}, false},
        MatchCase{"tier notin (a,b)", {}, true},
        MatchCase{"tier notin (a,b)", {{"tier", "a"}}, false},
        MatchCase{"tier notin (a,b)", {{"tier", "c"}}, true},
        MatchCase{"tier in ()", {{"tier", ""}}, true}, MatchCase{"tier in ()", {}, false},
        MatchCase{"tier", {{"tier", ""}}, true}, MatchCase{"tier", {}, false},
        MatchCase{"!tier", {}, true}, MatchCase{"!tier", {{"tier", "x"}}, false},
        // > and < compare integers; an absent or non-integer label never matches.
        MatchCase{"gpu>5", {{"gpu", "6"}}, true}, MatchCase{"gpu>5", {{"gpu", "5"}}, false},
        MatchCase{"gpu>5", {{"gpu", "10"}}, true}, MatchCase{"gpu>5", {}, false},
        MatchCase{"gpu>5", {{"gpu", "x"}}, false}, MatchCase{"gpu<5", {{"gpu", "-1"}}, true},
        MatchCase{"gpu<5", {{"gpu", "+4"}}, true}, MatchCase{"gpu<5", {{"gpu", "5"}}, false},
        MatchCase{"gpu<5", {{"gpu", "99999999999999999999"}}, false},
        MatchCase{"a=1,b=2", {{"a", "1"}, {"b", "2"}}, true},
        MatchCase{"a=1,b=2", {{"a", "1"}, {"b", "3"}}, false}));

struct JsonCase {
  std::string selector;
  std::string json;  // metav1.LabelSelector (docs/api-contract.md "LabelSelector objects")
};

void PrintTo(const JsonCase& c, std::ostream* os) { *os << testing::PrintToString(c.selector); }

class LabelSelectorJsonTest : public testing::TestWithParam<JsonCase> {};

TEST_P(LabelSelectorJsonTest, ConvertsLikeParseToLabelSelector) {
  EXPECT_EQ(toLabelSelectorJson(parseLabelSelector(GetParam().selector)),
            nlohmann::json::parse(GetParam().json));
}

INSTANTIATE_TEST_SUITE_P(
    Conversions, LabelSelectorJsonTest,
    testing::Values(
        JsonCase{"", "null"}, JsonCase{"app=web", R"({"matchLabels":{"app":"web"}})"},
        JsonCase{"app==web", R"({"matchLabels":{"app":"web"}})"},
        JsonCase{"tier in (b,a)",
                 R"({"matchExpressions":[{"key":"tier","operator":"In","values":["a","b"]}]})"},
        JsonCase{"tier notin (a)",
                 R"({"matchExpressions":[{"key":"tier","operator":"NotIn","values":["a"]}]})"},
        JsonCase{"tier", R"({"matchExpressions":[{"key":"tier","operator":"Exists"}]})"},
        JsonCase{"!tier", R"({"matchExpressions":[{"key":"tier","operator":"DoesNotExist"}]})"},
        // Our improvement: != is NotIn with one value instead of an error
        // (docs/api-contract.md "LabelSelector objects").
        JsonCase{"app!=web",
                 R"({"matchExpressions":[{"key":"app","operator":"NotIn","values":["web"]}]})"},
        JsonCase{"gpu>5", R"({"matchExpressions":[{"key":"gpu","operator":"Gt","values":["5"]}]})"},
        JsonCase{"gpu<5", R"({"matchExpressions":[{"key":"gpu","operator":"Lt","values":["5"]}]})"},
        JsonCase{"app=web,tier in (backend,cache)",
                 R"({"matchLabels":{"app":"web"},"matchExpressions":[
                     {"key":"tier","operator":"In","values":["backend","cache"]}]})"},
        // A conflicting second `=` on one key keeps its meaning instead of overwriting.
        JsonCase{"k=a,k=b",
                 R"({"matchLabels":{"k":"a"},"matchExpressions":[
                     {"key":"k","operator":"In","values":["b"]}]})"},
        JsonCase{"k=a,k==a", R"({"matchLabels":{"k":"a"}})"}));

}  // namespace
}  // namespace metrics_adapter::promql
