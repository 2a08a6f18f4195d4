#include "metrics_adapter/promql/template.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "unit/promql/template_test_data.h"

namespace metrics_adapter::promql {
namespace {

using testdata::DataSet;

struct RenderCase {
  std::string name;
  std::string text;
  DataSet data;
  std::string expected;
};

class TemplateRenderTest : public testing::TestWithParam<RenderCase> {};

TEST_P(TemplateRenderTest, RendersLikeGoTextTemplate) {
  const RenderCase& c = GetParam();
  const Template tmpl = Template::parse(c.text, testdata::kQueryFields);
  EXPECT_EQ(tmpl.render(testdata::dataFor(c.data)), c.expected);
  EXPECT_EQ(tmpl.source(), c.text);
}

// Expected values follow docs/api-contract.md "prometheus-adapter: templates" (field contents,
// printing of lists and maps) and Go's text/template and fmt semantics.
INSTANTIATE_TEST_SUITE_P(
    RealConfigs, TemplateRenderTest,
    testing::Values(
        RenderCase{"RateByGroupBy",
                   "sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)",
                   DataSet::kCustom,
                   R"(sum(rate(http_requests_total{namespace="ns",pod=~"p1|p2"}[2m])) by (pod))"},
        RenderCase{"AvgOverTime", "ceil(avg_over_time(<<.Series>>{<<.LabelMatchers>>}[3m]))",
                   DataSet::kCustom,
                   R"(ceil(avg_over_time(http_requests_total{namespace="ns",pod=~"p1|p2"}[3m])))"},
        RenderCase{"SeriesAndMatchers", "<<.Series>>{<<.LabelMatchers>>}", DataSet::kCustom,
                   R"(http_requests_total{namespace="ns",pod=~"p1|p2"})"},
        RenderCase{
            "ContainerQuery",
            R"(sum(rate(container_cpu_usage_seconds_total{<<.LabelMatchers>>,container!=""}[3m])) by (<<.GroupBy>>))",
            DataSet::kPodResource,
            R"(sum(rate(container_cpu_usage_seconds_total{namespace="ns",pod=~"p1|p2",container!=""}[3m])) by (pod,container))"},
        RenderCase{"ExternalHardCodedBy", "sum(<<.Series>>{<<.LabelMatchers>>}) by (queue)",
                   DataSet::kExternal,
                   R"(sum(queue_depth{queue="jobs",namespace="ns"}) by (queue))"},
        RenderCase{"IndexLabelValues", R"(<<index .LabelValuesByName "pod">>)", DataSet::kCustom,
                   "p1|p2"},
        RenderCase{"IndexMissingKeyIsEmpty", R"(x<<index .LabelValuesByName "node">>y)",
                   DataSet::kCustom, "xy"},
        RenderCase{"IndexList", "<<index .GroupBySlice 1>>", DataSet::kPodResource, "container"},
        RenderCase{"GroupBySlicePrintsAsGoSlice", "<<.GroupBySlice>>", DataSet::kPodResource,
                   "[pod container]"},
        RenderCase{"EmptySlicePrints", "<<.GroupBySlice>>", DataSet::kExternal, "[]"},
        RenderCase{"MapPrintsSortedGoSyntax", "<<.LabelValuesByName>>", DataSet::kCustom,
                   "map[namespace:ns pod:p1|p2]"},
        RenderCase{"RangeCommaJoinWithTrim",
                   "sum(x) by (\n<<- range $i, $l := .GroupBySlice>>\n  <<- if $i >>,<< end ->>\n"
                   "  <<$l>>\n<<- end>>)",
                   DataSet::kPodResource, "sum(x) by (pod,container)"}),
    [](const testing::TestParamInfo<RenderCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    ControlStructures, TemplateRenderTest,
    testing::Values(
        RenderCase{"RangeDotIsElement", "<<range .GroupBySlice>>(<<.>>)<<end>>",
                   DataSet::kPodResource, "(pod)(container)"},
        RenderCase{"RangeMapKeyValueSorted",
                   "<<range $k, $v := .LabelValuesByName>><<$k>>=<<$v>>;<<end>>", DataSet::kCustom,
                   "namespace=ns;pod=p1|p2;"},
        RenderCase{"RangeMapOneVariableIsValue",
                   "<<range $v := .LabelValuesByName>>[<<$v>>]<<end>>", DataSet::kCustom,
                   "[ns][p1|p2]"},
        RenderCase{"RangeMapDotIsValue", "<<range .LabelValuesByName>><<.>>,<<end>>",
                   DataSet::kCustom, "ns,p1|p2,"},
        RenderCase{"RangeElseOnEmpty", "<<range .GroupBySlice>><<.>><<else>>none<<end>>",
                   DataSet::kExternal, "none"},
        RenderCase{"RangeRootVariable", "<<range .GroupBySlice>><<$.Series>>;<<end>>",
                   DataSet::kCustom, "http_requests_total;"},
        RenderCase{"RangeBreak", "<<range .GroupBySlice>><<.>><<break>><<end>>",
                   DataSet::kPodResource, "pod"},
        RenderCase{
            "RangeContinue",
            "<<range $i, $l := .GroupBySlice>><<if eq $i 0>><<continue>><<end>><<$l>><<end>>",
            DataSet::kPodResource, "container"},
        RenderCase{"AssignmentInRangePersists",
                   R"(<<$last := "">><<range .GroupBySlice>><<$last = .>><<end>><<$last>>)",
                   DataSet::kPodResource, "container"},
        RenderCase{"ElseIfChain",
                   R"(<<if eq .GroupBy "node">>N<<else if eq .GroupBy "pod">>P<<else>>X<<end>>)",
                   DataSet::kCustom, "P"},
        RenderCase{"IfFalseElse", "<<if .GroupBy>>by<<else>>none<<end>>", DataSet::kExternal,
                   "none"},
        RenderCase{"IfDeclaration", "<<if $g := .GroupBy>>[<<$g>>]<<end>>", DataSet::kCustom,
                   "[pod]"},
        RenderCase{"WithSetsDot", "<<with .GroupBy>>by (<<.>>)<<else>>no grouping<<end>>",
                   DataSet::kCustom, "by (pod)"},
        RenderCase{"WithElse", "<<with .GroupBy>>by (<<.>>)<<else>>no grouping<<end>>",
                   DataSet::kExternal, "no grouping"},
        RenderCase{"ElseWith", "<<with .GroupBy>>a<<else with .Series>><<.>><<end>>",
                   DataSet::kExternal, "queue_depth"},
        RenderCase{"Variable", "<<$s := .Series>><<$s>>", DataSet::kCustom, "http_requests_total"},
        RenderCase{"EmptyTemplate", "", DataSet::kCustom, ""},
        RenderCase{"RendersEmptyWithoutError", "<<.GroupBy>>", DataSet::kExternal, ""}),
    [](const testing::TestParamInfo<RenderCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Functions, TemplateRenderTest,
    testing::Values(
        RenderCase{"EqSeveralArgsMatchesAny", R"(<<eq .GroupBy "node" "pod">>)", DataSet::kCustom,
                   "true"},
        RenderCase{"EqSeveralArgsNoMatch", R"(<<eq .GroupBy "node" "namespace">>)",
                   DataSet::kCustom, "false"},
        RenderCase{"EqStopsAtFirstMatch", R"(<<eq "a" "a" 1>>)", DataSet::kCustom, "true"},
        RenderCase{"Ne", R"(<<ne .GroupBy "pod">> <<ne .GroupBy "node">>)", DataSet::kCustom,
                   "false true"},
        RenderCase{
            "OrderedComparisons",
            R"(<<lt 1 2>> <<gt "b" "a">> <<le 2 2>> <<ge 1 2>> <<lt (len .GroupBySlice) 2>>)",
            DataSet::kPodResource, "true true true false false"},
        RenderCase{"OrReturnsFirstTruthy", R"(<<or .GroupBy "none">>)", DataSet::kExternal, "none"},
        RenderCase{"OrReturnsValue", R"(<<or .GroupBy "none">>)", DataSet::kCustom, "pod"},
        RenderCase{"AndReturnsLast", "<<and .Series .GroupBy>>", DataSet::kCustom, "pod"},
        RenderCase{"AndReturnsFirstFalsy", "[<<and .GroupBy .Series>>]", DataSet::kExternal, "[]"},
        RenderCase{"AndShortCircuits", "<<and false (index .GroupBySlice 5)>>", DataSet::kCustom,
                   "false"},
        RenderCase{"OrShortCircuits", "<<or true (index .GroupBySlice 5)>>", DataSet::kCustom,
                   "true"},
        RenderCase{"Not", "<<not .GroupBy>> <<not .GroupBySlice>>", DataSet::kExternal,
                   "true true"},
        RenderCase{"Len", "<<len .GroupBySlice>> <<len .Series>> <<len .LabelValuesByName>>",
                   DataSet::kPodResource, "2 0 2"},
        RenderCase{"LenString", "<<len .Series>>", DataSet::kCustom, "19"},
        RenderCase{"SliceString", "<<slice .Series 0 4>>|<<slice .Series 14>>", DataSet::kCustom,
                   "http|total"},
        RenderCase{"SliceList", "<<slice .GroupBySlice 1>>", DataSet::kPodResource, "[container]"},
        RenderCase{"IndexStringGivesByte", R"(<<index "abc" 1>>)", DataSet::kCustom, "98"},
        RenderCase{"Printf", R"(<<printf "%s{%s}" .Series .LabelMatchers>>)", DataSet::kCustom,
                   R"(http_requests_total{namespace="ns",pod=~"p1|p2"})"},
        RenderCase{"PrintfQuote", R"(<<printf "%q" .GroupBy>>)", DataSet::kCustom, R"("pod")"},
        RenderCase{"PrintfInt", R"(<<printf "%d items" (len .GroupBySlice)>>)",
                   DataSet::kPodResource, "2 items"},
        RenderCase{"PrintfList", R"(<<printf "%v" .GroupBySlice>>)", DataSet::kPodResource,
                   "[pod container]"},
        RenderCase{"PrintfPercent", R"(<<printf "100%%">>)", DataSet::kCustom, "100%"},
        RenderCase{"Print", R"(<<print 1 2>>|<<print "a" "b">>|<<print "a" 1 2 "b">>)",
                   DataSet::kCustom, "1 2|ab|a1 2b"},
        RenderCase{"Println", R"(<<println "a" 1>>)", DataSet::kCustom, "a 1\n"},
        RenderCase{"PipeIsLastArgument", R"(<<.Series | printf "%s:rate2m">>)", DataSet::kCustom,
                   "http_requests_total:rate2m"},
        RenderCase{"PipeAfterArguments", R"(<<"x" | printf "%s-%s" "a">>)", DataSet::kCustom,
                   "a-x"},
        RenderCase{"PipeIntoLen", "<<.GroupBySlice | len>>", DataSet::kPodResource, "2"},
        RenderCase{"NestedParens", R"(<<printf "%d" (len (slice .GroupBySlice 1))>>)",
                   DataSet::kPodResource, "1"},
        RenderCase{"FieldOfMap", "<<.LabelValuesByName.pod>>", DataSet::kCustom, "p1|p2"},
        RenderCase{"FieldOfMapMissing", "<<.LabelValuesByName.node>>", DataSet::kCustom,
                   "<no value>"},
        RenderCase{"RootVariableField", "<<$.GroupBy>>", DataSet::kCustom, "pod"}),
    [](const testing::TestParamInfo<RenderCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Syntax, TemplateRenderTest,
    testing::Values(RenderCase{"Comment", "a<</* comment */>>b", DataSet::kCustom, "ab"},
                    RenderCase{"TrimmedComment", "a <<- /* c */ ->> b", DataSet::kCustom, "ab"},
                    RenderCase{"MultiLineComment", "<</* line1\nline2 */>>x", DataSet::kCustom,
                               "x"},
                    RenderCase{"TrimBoth", "a  <<- .GroupBy ->>  b", DataSet::kCustom, "apodb"},
                    RenderCase{"TrimLeft", "a <<- .GroupBy>> b", DataSet::kCustom, "apod b"},
                    RenderCase{"TrimRight", "a <<.GroupBy ->> b", DataSet::kCustom, "a podb"},
                    RenderCase{"TrimNewlinesAndTabs", "x\n\t <<- .GroupBy ->>\n\n y",
                               DataSet::kCustom, "xpody"},
                    RenderCase{"MinusWithoutSpaceIsNumber", "a <<-3>>", DataSet::kCustom, "a -3"},
                    RenderCase{"StringEscapes", R"(<<"a\tb\x41\u00e9\"">>)", DataSet::kCustom,
                               "a\tbA\xc3\xa9\""},
                    RenderCase{"RawString", "<<`a\\nb`>>", DataSet::kCustom, "a\\nb"},
                    RenderCase{"Integers", "<<0x1F>> <<010>> <<1_000>> <<-7>> <<+7>>",
                               DataSet::kCustom, "31 8 1000 -7 7"},
                    RenderCase{"Booleans", "<<true>> <<false>>", DataSet::kCustom, "true false"},
                    RenderCase{"RightDelimInTextIsVerbatim", "rate(x[5m]) >> 1 <<.GroupBy>> >>",
                               DataSet::kCustom, "rate(x[5m]) >> 1 pod >>"},
                    RenderCase{"RightDelimInString", R"(<<">>">>)", DataSet::kCustom, ">>"},
                    RenderCase{"NewlinesInsideAction", "<<printf\n  \"%s\"\n  .GroupBy>>",
                               DataSet::kCustom, "pod"},
                    RenderCase{"BracesAreText", "{<<.GroupBy>>}", DataSet::kCustom, "{pod}"}),
    [](const testing::TestParamInfo<RenderCase>& info) { return info.param.name; });

struct ResourceCase {
  std::string name;
  std::string text;
  std::string group;
  std::string resource;
  std::string expected;
};

class ResourceTemplateTest : public testing::TestWithParam<ResourceCase> {};

TEST_P(ResourceTemplateTest, RendersLabelName) {
  const ResourceCase& c = GetParam();
  const TemplateData data = {{"Group", c.group}, {"Resource", c.resource}};
  EXPECT_EQ(Template::parse(c.text, testdata::kResourceFields).render(data), c.expected);
}

// docs/api-contract.md "prometheus-adapter: resource template": `.Group` has '.' and '-'
// replaced by '_' (core group ""), `.Resource` singular.
INSTANTIATE_TEST_SUITE_P(
    Cases, ResourceTemplateTest,
    testing::Values(ResourceCase{"GroupAndResource", "kube_<<.Group>>_<<.Resource>>", "apps",
                                 "deployment", "kube_apps_deployment"},
                    ResourceCase{"CoreGroupDoubleUnderscore", "kube_<<.Group>>_<<.Resource>>", "",
                                 "pod", "kube__pod"},
                    ResourceCase{"ResourceOnly", "<<.Resource>>", "apps", "deployment",
                                 "deployment"},
                    ResourceCase{"PrefixedResource", "kube_<<.Resource>>", "", "pod", "kube_pod"}),
    [](const testing::TestParamInfo<ResourceCase>& info) { return info.param.name; });

TEST(TemplateTest, CopiesAndMovesShareTheParsedTree) {
  const std::string text = "<<.Series>>{<<.LabelMatchers>>}";
  Template original = Template::parse(text, testdata::kQueryFields);
  const Template copy = original;  // NOLINT(performance-unnecessary-copy-initialization)
  Template moved = std::move(original);
  Template assigned = Template::parse("<<.GroupBy>>", testdata::kQueryFields);
  assigned = copy;
  const std::string expected = R"(http_requests_total{namespace="ns",pod=~"p1|p2"})";
  for (const Template* t : std::vector<const Template*>{&copy, &moved, &assigned}) {
    EXPECT_EQ(t->source(), text);
    EXPECT_EQ(t->render(testdata::customData()), expected);
  }
}

TEST(TemplateTest, ConcurrentRendersOfOneTemplateAreIndependent) {
  const Template shared =
      Template::parse("<<range $i, $l := .GroupBySlice>><<if $i>>,<<end>><<$l>><<end>>|<<.Series>>",
                      testdata::kQueryFields);
  constexpr int kThreads = 4;
  constexpr int kRenders = 300;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Template copy = shared;  // copies share the immutable tree
      for (int i = 0; i < kRenders; ++i) {
        const bool pods = (i + t) % 2 == 0;
        const std::string got =
            copy.render(pods ? testdata::podResourceData() : testdata::externalData());
        const std::string want = pods ? "pod,container|" : "|queue_depth";
        if (got != want) ++mismatches[static_cast<std::size_t>(t)];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[static_cast<std::size_t>(t)], 0);
}

}  // namespace
}  // namespace metrics_adapter::promql
