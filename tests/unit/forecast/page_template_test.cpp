#include "forecast/page_template.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

namespace metrics_adapter::forecast {
namespace {

TEST(PageTemplateTest, FillsNamesAndKeepsBlocksWithAValue) {
  const std::map<std::string_view, std::string> values = {{"rule", "gpu &amp; more"},
                                                          {"target", "20"}};
  EXPECT_EQ(fillPageTemplate("<h1>{{rule}}</h1>{{?target}} target {{target}}{{/target}}|"
                             "{{?missing}}gone {{rule}}{{/missing}}|{{nothing}}.",
                             values),
            "<h1>gpu &amp; more</h1> target 20||.");
}

TEST(PageTemplateTest, ABrokenTemplateIsRefused) {
  const std::map<std::string_view, std::string> none;
  EXPECT_THROW(fillPageTemplate("a {{rule", none), std::logic_error);
  EXPECT_THROW(fillPageTemplate("{{?x}} never closed", none), std::logic_error);
  EXPECT_THROW(fillPageTemplate("{{/x}}", none), std::logic_error);
}

}  // namespace
}  // namespace metrics_adapter::forecast
