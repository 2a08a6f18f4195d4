// The metricsQuery / resources.template engine: a fuzzed template (as an operator would write
// it in the config) executed with fuzzed values (as requests and Prometheus supply them).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "metrics_adapter/promql/template.h"

namespace {

namespace promql = metrics_adapter::promql;
using metrics_adapter::fuzz::check;

const std::set<std::string> kQueryFields = {"Series", "LabelMatchers", "LabelValuesByName",
                                            "GroupBy", "GroupBySlice"};
const std::set<std::string> kResourceFields = {"Group", "Resource"};

std::vector<std::string> consumeList(FuzzedDataProvider& input) {
  std::vector<std::string> list(input.ConsumeIntegralInRange<std::size_t>(0, 4));
  for (auto& item : list) item = input.ConsumeRandomLengthString(32);
  return list;
}

promql::TemplateData consumeData(FuzzedDataProvider& input, bool resource_template) {
  promql::TemplateData data;
  if (resource_template) {
    data.emplace("Group", input.ConsumeRandomLengthString(32));
    data.emplace("Resource", input.ConsumeRandomLengthString(32));
    return data;
  }
  data.emplace("Series", input.ConsumeRandomLengthString(64));
  data.emplace("LabelMatchers", input.ConsumeRandomLengthString(128));
  std::map<std::string, std::string> by_name;
  for (std::size_t n = input.ConsumeIntegralInRange<std::size_t>(0, 4); n > 0; --n) {
    std::string key = input.ConsumeRandomLengthString(16);
    by_name[key] = input.ConsumeRandomLengthString(32);
  }
  data.emplace("LabelValuesByName", by_name);
  data.emplace("GroupBy", input.ConsumeRandomLengthString(32));
  data.emplace("GroupBySlice", consumeList(input));
  return data;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  FuzzedDataProvider input(bytes, size);
  const bool resource_template = input.ConsumeBool();
  const std::string text = input.ConsumeRandomLengthString(512);
  const promql::TemplateData data = consumeData(input, resource_template);

  std::optional<promql::Template> parsed;
  try {
    parsed = promql::Template::parse(text, resource_template ? kResourceFields : kQueryFields);
  } catch (const promql::TemplateError& error) {
    check(std::string_view(error.what()).find('\n') == std::string_view::npos,
          "template errors are one line", error.what());
    return 0;
  }
  check(parsed->source() == text, "the template keeps its source");
  std::string first;
  try {
    first = parsed->render(data);
  } catch (const promql::TemplateError&) {
    return 0;
  }
  if (text.find("<<") == std::string::npos) {
    check(first == text, "text without actions renders verbatim", text);
  }
  const promql::Template copy = *parsed;
  check(copy.render(data) == first, "rendering is deterministic and survives a copy", text);
  return 0;
}
