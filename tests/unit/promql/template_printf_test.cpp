#include <gtest/gtest.h>

#include <string>

#include "metrics_adapter/promql/template.h"
#include "unit/promql/template_test_data.h"

namespace metrics_adapter::promql {
namespace {

struct PrintfCase {
  std::string name;
  std::string action;  // the inside of one action, e.g. `printf "%5s" "ab"`
  std::string expected;
};

class TemplatePrintfTest : public testing::TestWithParam<PrintfCase> {};

TEST_P(TemplatePrintfTest, FormatsLikeGoFmt) {
  const PrintfCase& c = GetParam();
  const Template tmpl = Template::parse("<<" + c.action + ">>", testdata::kQueryFields);
  EXPECT_EQ(tmpl.render(testdata::podResourceData()), c.expected);
}

// Expected strings are what Go's fmt.Sprintf returns for the same format and operands.
INSTANTIATE_TEST_SUITE_P(
    Verbs, TemplatePrintfTest,
    testing::Values(
        PrintfCase{"StringWidth", R"(printf "%5s|" "ab")", "   ab|"},
        PrintfCase{"StringLeftJustify", R"(printf "%-5s|" "ab")", "ab   |"},
        PrintfCase{"StringPrecision", R"(printf "%.2s" "abc")", "ab"},
        PrintfCase{"WidthCountsRunes", "printf \"%4s|\" \"\xc3\xa9\"", "   \xc3\xa9|"},
        PrintfCase{"ZeroPaddedInt", R"(printf "%05d" 42)", "00042"},
        PrintfCase{"ZeroPaddedNegative", R"(printf "%05d" -42)", "-0042"},
        PrintfCase{"PlusSign", R"(printf "%+d" 5)", "+5"},
        PrintfCase{"IntPrecision", R"(printf "%.3d" 7)", "007"},
        PrintfCase{"Hex", R"(printf "%x %X %#x %x" 255 255 255 -255)", "ff FF 0xff -ff"},
        PrintfCase{"StringHex", R"(printf "%X % x" "hi" "hi")", "6869 68 69"},
        PrintfCase{"OctalBinary", R"(printf "%o %O %b" 8 8 5)", "10 0o10 101"},
        PrintfCase{"Char", R"(printf "%c %q %U" 65 65 65)", "A 'A' U+0041"},
        PrintfCase{"Bool", R"(printf "%t %v" true false)", "true false"},
        PrintfCase{"QuoteEscapes", R"(printf "%q" "a\"b\n")", R"("a\"b\n")"},
        PrintfCase{"QuoteNonPrintable", R"(printf "%q" "\x00\x7f\u00a0\u200b\U0010FFFF")",
                   R"("\x00\x7f\u00a0\u200b\U0010ffff")"},
        PrintfCase{"QuoteInvalidUtf8", R"(printf "%q" "a\xffb")", R"("a\xffb")"},
        PrintfCase{"QuoteRuneEscapes", R"(printf "%q %q %q" 10 39 34)", R"('\n' '\'' '"')"},
        PrintfCase{"QuoteKeepsPrintableUtf8", "printf \"%q\" \"\xc3\xa9\"", "\"\xc3\xa9\""},
        PrintfCase{"QuoteAscii", "printf \"%+q\" \"\xc3\xa9\"", R"("\u00e9")"},
        PrintfCase{"QuoteBackquote", R"(printf "%#q" "a")", "`a`"},
        PrintfCase{"QuoteList", R"(printf "%q" .GroupBySlice)", R"(["pod" "container"])"},
        PrintfCase{"GoSyntaxList", R"(printf "%#v" .GroupBySlice)",
                   R"([]string{"pod", "container"})"},
        PrintfCase{"GoSyntaxMap", R"(printf "%#v" .LabelValuesByName)",
                   R"(map[string]string{"namespace":"ns", "pod":"p1|p2"})"},
        PrintfCase{"GoSyntaxString", R"(printf "%#v" .GroupBy)", R"("pod,container")"},
        PrintfCase{"Type", R"(printf "%T %T %T %T" .GroupBySlice .LabelValuesByName 1 "x")",
                   "[]string map[string]string int string"},
        PrintfCase{"ArgumentIndex", R"(printf "%[2]s %[1]s" "a" "b")", "b a"},
        PrintfCase{"StarWidth", R"(printf "%*d|" 4 7)", "   7|"},
        PrintfCase{"NegativeStarWidth", R"(printf "%*d|" -4 7)", "7   |"}),
    [](const testing::TestParamInfo<PrintfCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Diagnostics, TemplatePrintfTest,
    testing::Values(
        PrintfCase{"WrongVerbForString", R"(printf "%d" "x")", "%!d(string=x)"},
        PrintfCase{"WrongVerbForInt", R"(printf "%s" 5)", "%!s(int=5)"},
        PrintfCase{"WrongVerbForBool", R"(printf "%d" true)", "%!d(bool=true)"},
        PrintfCase{"WrongVerbPerElement", R"(printf "%d" .GroupBySlice)",
                   "[%!d(string=pod) %!d(string=container)]"},
        PrintfCase{"Missing", R"(printf "%s and %s" "a")", "a and %!s(MISSING)"},
        PrintfCase{"Extra", R"(printf "a" "b" 1)", "a%!(EXTRA string=b, int=1)"},
        PrintfCase{"NoVerb", R"(printf "%")", "%!(NOVERB)"},
        PrintfCase{"BadIndex", R"(printf "%[3]s" "a")", "%!s(BADINDEX)"},
        PrintfCase{"BadWidth", R"(printf "%*d" "x" 1)", "%!(BADWIDTH)1"},
        // Go's parsenum gives up on widths above 1e6, so the verb is never reached.
        PrintfCase{"HugeWidthIsRejected", R"(printf "%99999999d" 1)", "%!(NOVERB)%!(EXTRA int=1)"},
        PrintfCase{"NoValueIsNil", R"(printf "%v %s" .LabelValuesByName.x .LabelValuesByName.x)",
                   "<nil> %!s(<nil>)"}),
    [](const testing::TestParamInfo<PrintfCase>& info) { return info.param.name; });

}  // namespace
}  // namespace metrics_adapter::promql
