#include "metrics_adapter/net/bearer_token_file.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "unit/net/test_support.h"

namespace metrics_adapter::net {
namespace {

TEST(NetBearerTokenFileTest, ErrorsStartWithTheSettingThatNamedTheFile) {
  const testing::TempDir dir;
  const std::string missing = dir.file("token");
  try {
    BearerTokenFile token(missing, std::chrono::milliseconds(0), "tokenFile of user \"u\"");
    FAIL() << "accepted a missing file";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "tokenFile of user \"u\": cannot read " + missing + ": No such file or directory");
  }
}

}  // namespace
}  // namespace metrics_adapter::net
