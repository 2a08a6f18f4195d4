#include "metrics_adapter/api/field_selector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace metrics_adapter::api {
namespace {

const std::set<std::string> kPodFields = {"metadata.name", "metadata.namespace"};

std::string fieldErrorOf(std::string_view text) {
  try {
    parseFieldSelector(text, kPodFields);
  } catch (const FieldSelectorError& e) {
    return e.what();
  }
  return "<no error>";
}

bool selects(std::string_view text, const std::map<std::string, std::string>& fields) {
  return matches(parseFieldSelector(text, kPodFields),
                 [&](const std::string& field) { return fields.at(field); });
}

TEST(FieldSelectorTest, OperatorsAndConjunction) {
  const std::map<std::string, std::string> pod = {{"metadata.name", "web-1"},
                                                  {"metadata.namespace", "default"}};
  EXPECT_TRUE(selects("", pod));
  EXPECT_TRUE(selects("metadata.name=web-1", pod));
  EXPECT_TRUE(selects("metadata.name==web-1", pod));
  EXPECT_FALSE(selects("metadata.name!=web-1", pod));
  EXPECT_TRUE(selects("metadata.name!=web-2", pod));
  EXPECT_TRUE(selects("metadata.name=web-1,metadata.namespace=default", pod));
  EXPECT_FALSE(selects("metadata.name=web-1,metadata.namespace=kube-system", pod));
  EXPECT_TRUE(selects("metadata.name=", {{"metadata.name", ""}}));
}

TEST(FieldSelectorTest, EscapedValues) {
  const FieldSelector selector = parseFieldSelector(R"(metadata.name=a\,b\=c\\d)", kPodFields);
  ASSERT_EQ(selector.requirements.size(), 1u);
  EXPECT_EQ(selector.requirements[0].value, R"(a,b=c\d)");
}

TEST(FieldSelectorTest, BadSelectorsSayWhy) {
  EXPECT_EQ(fieldErrorOf("spec.nodeName=n1"), "field label not supported: spec.nodeName");
  EXPECT_THAT(fieldErrorOf("metadata.name"), ::testing::HasSubstr("needs an operator"));
  EXPECT_THAT(fieldErrorOf("=x"), ::testing::HasSubstr("no field name"));
  EXPECT_THAT(fieldErrorOf(R"(metadata.name=a\b)"), ::testing::HasSubstr("invalid escape"));
  EXPECT_THAT(fieldErrorOf(R"(metadata.name=a\)"), ::testing::HasSubstr("invalid escape"));
}

}  // namespace
}  // namespace metrics_adapter::api
