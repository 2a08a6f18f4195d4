#include "metrics_adapter/server/audit_id.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

namespace metrics_adapter::server {
namespace {

TEST(AuditIdTest, FreshIdsAreVersion4UuidsAndDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const AuditId id = newAuditId();
    const std::string text(id.data(), id.size());
    EXPECT_TRUE(std::regex_match(
        text, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")))
        << text;
    seen.insert(text);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

// Upstream keeps any non-empty Audit-ID as it came (Go's header parser has trimmed it).
TEST(AuditIdTest, TheRequestedIdIsTakenAsItIsWithoutSurroundingBlanks) {
  struct Case {
    std::string header;
    std::string id;
  };
  for (const Case& c : std::vector<Case>{
           {"", ""},
           {"   ", ""},
           {"\t", ""},
           {"6c4cbbd6-5a33-4d5a-9e4e-1b2f0d7a3c11", "6c4cbbd6-5a33-4d5a-9e4e-1b2f0d7a3c11"},
           {"  my-trace 42\t", "my-trace 42"},  // inner spaces stay; not a UUID: kept anyway
           {std::string(300, 'x'), std::string(300, 'x')},  // not truncated
       }) {
    EXPECT_EQ(requestedAuditId(c.header), c.id) << c.header;
  }
}

}  // namespace
}  // namespace metrics_adapter::server
