#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "metrics_adapter/promql/template.h"
#include "unit/promql/template_test_data.h"

namespace metrics_adapter::promql {
namespace {

using testdata::DataSet;
using testing::HasSubstr;

// The message of the TemplateError `fn` throws, or "no error".
template <typename Fn>
std::string errorOf(Fn fn) {
  try {
    fn();
  } catch (const TemplateError& e) {
    return e.what();
  }
  return "no error";
}

struct ParseErrorCase {
  std::string name;
  std::string text;
  std::string expected;  // substring of the message, with "LINE:COL:" where it matters
};

class TemplateParseErrorTest : public testing::TestWithParam<ParseErrorCase> {};

TEST_P(TemplateParseErrorTest, RejectsAtParseTime) {
  const ParseErrorCase& c = GetParam();
  const std::string message =
      errorOf([&] { (void)Template::parse(c.text, testdata::kQueryFields); });
  EXPECT_THAT(message, HasSubstr(c.expected));
  EXPECT_EQ(message.rfind("template: ", 0), 0U) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
}

INSTANTIATE_TEST_SUITE_P(
    FieldsAndFunctions, TemplateParseErrorTest,
    testing::Values(
        ParseErrorCase{"UnknownField", "<<.LabelMatcher>>", "1:3: unknown field .LabelMatcher"},
        ParseErrorCase{"UnknownFieldColumn", "sum(<<.Series>>{<<.LabelMatcher>>})",
                       "1:19: unknown field .LabelMatcher"},
        ParseErrorCase{"UnknownFieldListsKnown", "<<.Foo>>", "known fields: .GroupBy,"},
        ParseErrorCase{"UpstreamDocTypo", "<<.LabelMatchersByName>>",
                       "unknown field .LabelMatchersByName"},
        ParseErrorCase{"UnknownFieldOnRoot", "<<$.Foo>>", "1:4: unknown field .Foo"},
        ParseErrorCase{"UnknownFieldInRange", "<<range .GroupBySlice>><<.Foo>><<end>>",
                       "1:26: unknown field .Foo"},
        ParseErrorCase{"LineAndColumn", "up\n  <<.Foo>>", "2:5: unknown field .Foo"},
        ParseErrorCase{"JoinIsNotGo", R"(<<.Series | join ",">>)",
                       "1:13: function \"join\" not defined"},
        ParseErrorCase{"ToUpper", "<<toUpper .Series>>", "1:3: function \"toUpper\" not defined"},
        ParseErrorCase{"HtmlUnsupported", "<<html .Series>>", "function \"html\" is not supported"},
        ParseErrorCase{"UrlqueryUnsupported", "<<urlquery .Series>>",
                       "function \"urlquery\" is not supported"},
        ParseErrorCase{"TooFewArgs", "<<len>>", "1:3: wrong number of args for len: want 1 got 0"},
        ParseErrorCase{"TooManyArgs", "<<not 1 2>>", "wrong number of args for not: want 1 got 2"},
        ParseErrorCase{"PipedArgCounts", "<<.Series | not 1>>",
                       "wrong number of args for not: want 1 got 2"},
        ParseErrorCase{"EqNeedsTwo", "<<eq .Series>>",
                       "wrong number of args for eq: want at least 2 got 1"},
        ParseErrorCase{"FunctionAsArgument", "<<eq .Series len>>",
                       "wrong number of args for len: want 1 got 0"},
        ParseErrorCase{"PipeIntoField", "<<.Series | .GroupBy>>",
                       "1:13: can't pipe into .GroupBy: not a function"},
        ParseErrorCase{"ArgumentToField", R"(<<.Series "x">>)",
                       "1:11: can't give argument to non-function .Series"},
        ParseErrorCase{"ArgumentToLiteral", R"(<<"a" "b">>)",
                       "can't give argument to non-function"},
        ParseErrorCase{"Nil", "<<nil>>", "1:3: nil is not supported"},
        ParseErrorCase{"TemplateAction", R"(<<template "x">>)", "<<template>> is not supported"},
        ParseErrorCase{"Define", R"(<<define "x">><<end>>)", "<<define>> is not supported"}),
    [](const testing::TestParamInfo<ParseErrorCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Structure, TemplateParseErrorTest,
    testing::Values(
        ParseErrorCase{"UnclosedAction", "<<.Series", "1:1: unclosed action"},
        ParseErrorCase{"UnclosedActionColumn", "abc <<.Series", "1:5: unclosed action"},
        ParseErrorCase{"UnexpectedEnd", "<<end>>", "1:3: unexpected <<end>>"},
        ParseErrorCase{"UnexpectedElse", "<<else>>", "1:3: unexpected <<else>>"},
        ParseErrorCase{"MissingEnd", "<<if .Series>>x", "1:3: missing <<end>> for <<if>>"},
        ParseErrorCase{"MissingEndAfterElse", "<<range .GroupBySlice>>x<<else>>y",
                       "1:3: missing <<end>> for <<range>>"},
        ParseErrorCase{"SecondElse", "<<if .Series>>a<<else>>b<<else>>c<<end>>",
                       "1:27: unexpected <<else>> after <<else>>"},
        ParseErrorCase{"ElseIfInRange", "<<range .GroupBySlice>><<else if .Series>><<end>>",
                       "<<else if>> is not allowed in <<range>>"},
        ParseErrorCase{"ElseWithInIf", "<<if .Series>><<else with .Series>><<end>>",
                       "<<else with>> is not allowed in <<if>>"},
        ParseErrorCase{"EndWithArguments", "<<if .Series>><<end .Series>>", "in <<end>>"},
        ParseErrorCase{"BreakOutsideRange", "<<break>>", "1:3: <<break>> outside <<range>>"},
        ParseErrorCase{"ContinueInRangeElse", "<<range .GroupBySlice>><<else>><<continue>><<end>>",
                       "<<continue>> outside <<range>>"},
        ParseErrorCase{"EmptyAction", "<<>>", "1:3: missing value for command"},
        ParseErrorCase{"EmptyIf", "<<if>>x<<end>>", "missing value for if"},
        ParseErrorCase{"TrailingPipe", "<<.Series |>>", "missing command after \"|\""},
        ParseErrorCase{"LeadingPipe", "<<| len>>", "unexpected \"|\" in command"},
        ParseErrorCase{"UnclosedParen", "<<(len .Series>>", "unclosed left paren"},
        ParseErrorCase{"UnexpectedRightParen", "<<len .Series)>>", "1:14: unexpected right paren"},
        ParseErrorCase{"OperandsNotSeparated", R"(<<printf "%s".Series>>)",
                       "unexpected . after string constant"},
        ParseErrorCase{"MessageStaysOneLine", "<<print \"a\"`x\ny`>>",
                       "1:12: unexpected \"`x\\x0ay`\" in operand"},
        ParseErrorCase{"AdjacentStrings", R"(<<print "a""b">>)", "in operand"},
        ParseErrorCase{"DotAfterField", "<<.Series.>>", "1:10: unexpected \".\" in operand"},
        ParseErrorCase{"BadCharacterAfterField", "<<.Series-1>>", "1:10: bad character U+002D '-'"},
        ParseErrorCase{"UnrecognizedCharacter", "<<.Series @>>", "unexpected \"@\" in operand"},
        ParseErrorCase{"ControlCharacter", "<<\x01>>", "unrecognized character in action: U+0001"},
        ParseErrorCase{"DeclareAfterField", "<<.Series := 1>>", "unexpected \":=\" in operand"},
        ParseErrorCase{"TooManyDeclarations", "<<if $a, $b := .GroupBySlice>><<end>>",
                       "too many declarations in if"},
        ParseErrorCase{"RangeThreeVariables", "<<range $a, $b, $c := .GroupBySlice>><<end>>",
                       "expected := or ="},
        ParseErrorCase{"RangeDeclaresOnlyVariables", "<<range $a, 1 := .GroupBySlice>><<end>>",
                       "range can only initialize variables"}),
    [](const testing::TestParamInfo<ParseErrorCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    VariablesAndLiterals, TemplateParseErrorTest,
    testing::Values(
        ParseErrorCase{"UndefinedVariable", "<<$x>>", "1:3: undefined variable \"$x\""},
        ParseErrorCase{"VariableOutOfScope", "<<if .Series>><<$x := 1>><<end>><<$x>>",
                       "1:35: undefined variable \"$x\""},
        ParseErrorCase{"RangeVariableOutOfScope", "<<range $v := .GroupBySlice>><<end>><<$v>>",
                       "undefined variable \"$v\""},
        ParseErrorCase{"AssignUndeclared", "<<$x = 1>>", "undefined variable \"$x\""},
        ParseErrorCase{"SelfReference", "<<$x := $x>>", "undefined variable \"$x\""},
        ParseErrorCase{"UnterminatedString", R"(<<"abc>>)", "1:3: unterminated quoted string"},
        ParseErrorCase{"NewlineInString", "<<\"a\nb\">>", "unterminated quoted string"},
        ParseErrorCase{"UnterminatedRawString", "<<`abc>>", "unterminated raw quoted string"},
        ParseErrorCase{"BadEscape", R"(<<"a\q">>)", "invalid escape sequence"},
        ParseErrorCase{"SurrogateEscape", R"(<<"\ud800">>)", "invalid escape sequence"},
        ParseErrorCase{"UnclosedComment", "x<</* abc >>", "1:2: unclosed comment"},
        ParseErrorCase{"CommentWithAction", "<</* a */ .Series>>",
                       "comment ends before closing delimiter"},
        ParseErrorCase{"BadNumber", "<<1a>>", "1:3: bad number syntax: \"1a\""},
        ParseErrorCase{"TrimMarkerOnly", "<<- >>", "missing value for command"},
        ParseErrorCase{"MinusBeforeField", "<<-.Series>>", "1:3: bad number syntax: \"-.Series\""},
        ParseErrorCase{"BadOctal", "<<08>>", "bad number syntax: \"08\""},
        ParseErrorCase{"Float", "<<1.5>>", "floating-point constants are not supported"},
        ParseErrorCase{"Exponent", "<<1e3>>", "floating-point constants are not supported"},
        ParseErrorCase{"Complex", "<<2i>>", "complex constants are not supported"},
        ParseErrorCase{"IntegerOverflow", "<<9223372036854775808>>",
                       "integer constant out of range"},
        ParseErrorCase{"CharConstant", "<<'a'>>", "character constants are not supported"},
        ParseErrorCase{"KeywordAsOperand", "<<print end>>", "unexpected <<end>> in operand"}),
    [](const testing::TestParamInfo<ParseErrorCase>& info) { return info.param.name; });

struct ExecErrorCase {
  std::string name;
  std::string text;
  DataSet data;
  std::string expected;
};

class TemplateExecErrorTest : public testing::TestWithParam<ExecErrorCase> {};

TEST_P(TemplateExecErrorTest, ParsesButFailsToRender) {
  const ExecErrorCase& c = GetParam();
  const Template tmpl = Template::parse(c.text, testdata::kQueryFields);
  const std::string message = errorOf([&] { (void)tmpl.render(testdata::dataFor(c.data)); });
  EXPECT_THAT(message, HasSubstr(c.expected));
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
}

// Messages follow Go's text/template builtins.
INSTANTIATE_TEST_SUITE_P(
    Cases, TemplateExecErrorTest,
    testing::Values(
        ExecErrorCase{"IndexOutOfRange", "<<index .GroupBySlice 5>>", DataSet::kCustom,
                      "template: 1:3: error calling index: index out of range: 5"},
        ExecErrorCase{"IndexEqualToLength", "x <<index .GroupBySlice 1>>", DataSet::kCustom,
                      "template: 1:5: error calling index: index out of range: 1"},
        ExecErrorCase{"IndexNegative", "<<index .GroupBySlice -1>>", DataSet::kCustom,
                      "index out of range: -1"},
        ExecErrorCase{"IndexListWithString", R"(<<index .GroupBySlice "a">>)", DataSet::kCustom,
                      "cannot index slice/array with type string"},
        ExecErrorCase{"IndexMapWithInt", "<<index .LabelValuesByName 1>>", DataSet::kCustom,
                      "value has type int; should be string"},
        ExecErrorCase{"IndexInt", "<<index 1 1>>", DataSet::kCustom,
                      "can't index item of type int"},
        ExecErrorCase{"IndexRoot", R"(<<index . "Series">>)", DataSet::kCustom,
                      "can't index item of type template data"},
        ExecErrorCase{"LenOfInt", "<<len 3>>", DataSet::kCustom,
                      "error calling len: len of type int"},
        ExecErrorCase{"LtOnList", "<<lt .GroupBySlice 1>>", DataSet::kCustom,
                      "invalid type for comparison"},
        ExecErrorCase{"LtMixed", R"(<<lt 1 "a">>)", DataSet::kCustom,
                      "incompatible types for comparison"},
        ExecErrorCase{"EqMixed", "<<eq .Series 1>>", DataSet::kCustom,
                      "error calling eq: incompatible types for comparison"},
        ExecErrorCase{"EqLists", "<<eq .GroupBySlice .GroupBySlice>>", DataSet::kCustom,
                      "non-comparable type []string"},
        ExecErrorCase{"RangeOverString", "<<range .Series>><<end>>", DataSet::kCustom,
                      "range can't iterate over a value of type string"},
        ExecErrorCase{"FieldOfString", "<<range .GroupBySlice>><<.Series>><<end>>",
                      DataSet::kCustom, "1:26: can't evaluate field Series in type string"},
        ExecErrorCase{"PrintfFormatNotString", "<<printf 5>>", DataSet::kCustom,
                      "wrong type for value; expected string; got int"},
        ExecErrorCase{"SliceInverted", "<<slice .Series 3 1>>", DataSet::kCustom,
                      "invalid slice index: 3 > 1"},
        ExecErrorCase{"SliceStringThreeIndexes", "<<slice .Series 1 2 3>>", DataSet::kCustom,
                      "cannot 3-index slice a string"},
        ExecErrorCase{"SliceOutOfRange", "<<slice .Series 0 100>>", DataSet::kCustom,
                      "index out of range: 100"},
        ExecErrorCase{"SliceMap", "<<slice .LabelValuesByName 0>>", DataSet::kCustom,
                      "can't slice item of type map[string]string"},
        ExecErrorCase{"PrintRoot", "<<.>>", DataSet::kCustom, "1:1: can't print the template data"},
        ExecErrorCase{"PrintfRoot", R"(<<printf "%v" .>>)", DataSet::kCustom,
                      "can't print the template data"}),
    [](const testing::TestParamInfo<ExecErrorCase>& info) { return info.param.name; });

TEST(TemplateErrorTest, AllowedFieldMissingFromDataIsAnExecutionError) {
  const Template tmpl = Template::parse("a<<.Extra>>", {"Series", "Extra"});
  EXPECT_EQ(errorOf([&] { (void)tmpl.render(testdata::customData()); }),
            "template: 1:4: field .Extra has no value");
}

std::string repeat(std::string_view part, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += part;
  return out;
}

TEST(TemplateLimitsTest, ParenthesesNestUpToTheLimit) {
  const std::string ok = "<<" + repeat("(", 100) + "1" + repeat(")", 100) + ">>";
  EXPECT_EQ(Template::parse(ok, testdata::kQueryFields).render({}), "1");
  const std::string deep = "<<" + repeat("(", 101) + "1" + repeat(")", 101) + ">>";
  EXPECT_THAT(errorOf([&] { (void)Template::parse(deep, testdata::kQueryFields); }),
              HasSubstr("1:103: nesting deeper than 100 levels"));
}

TEST(TemplateLimitsTest, HostileNestingIsRejectedWithoutCrashing) {
  const std::string parens = "<<" + repeat("(", 30000) + "1" + repeat(")", 30000) + ">>";
  EXPECT_THAT(errorOf([&] { (void)Template::parse(parens, testdata::kQueryFields); }),
              HasSubstr("nesting deeper than 100 levels"));
  const std::string ifs = repeat("<<if .Series>>", 2500) + repeat("<<end>>", 2500);
  EXPECT_THAT(errorOf([&] { (void)Template::parse(ifs, testdata::kQueryFields); }),
              HasSubstr("nesting deeper than 100 levels"));
  const std::string else_ifs = "<<if .Series>>" + repeat("<<else if .Series>>", 3000) + "<<end>>";
  EXPECT_THAT(errorOf([&] { (void)Template::parse(else_ifs, testdata::kQueryFields); }),
              HasSubstr("nesting deeper than 100 levels"));
}

TEST(TemplateLimitsTest, SizeLimitIs64KiB) {
  const std::string at_limit(64 * 1024, 'x');
  EXPECT_EQ(Template::parse(at_limit, testdata::kQueryFields).render({}), at_limit);
  const std::string over = at_limit + "x";
  EXPECT_THAT(errorOf([&] { (void)Template::parse(over, testdata::kQueryFields); }),
              HasSubstr("longer than the limit of 65536"));
}

TEST(TemplateLimitsTest, DoublingAStringStopsAtTheOutputBound) {
  const TemplateData data = {{"L", std::vector<std::string>(64, "x")}};
  const Template tmpl = Template::parse(
      R"(<<$s := "ab">><<range .L>><<$s = printf "%s%s" $s $s>><<end>><<$s>>)", {"L"});
  EXPECT_THAT(errorOf([&] { (void)tmpl.render(data); }), HasSubstr("result longer than"));
}

TEST(TemplateLimitsTest, NestedRangesStopAtTheStepBound) {
  const TemplateData data = {{"L", std::vector<std::string>(500, "x")}};
  const Template tmpl =
      Template::parse("<<range .L>><<range $.L>><<range $.L>><<end>><<end>><<end>>", {"L"});
  EXPECT_THAT(errorOf([&] { (void)tmpl.render(data); }), HasSubstr("execution stopped after"));
}

}  // namespace
}  // namespace metrics_adapter::promql
