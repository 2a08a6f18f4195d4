#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "metrics_adapter/app/flags.h"

namespace metrics_adapter::app {
namespace {

// parseGoDuration sums the parts as doubles and rounds once to whole milliseconds: a sum too
// large for the int64 count, or infinite, must be refused before that conversion, which would
// be undefined behaviour (UBSan's float-cast-overflow).
TEST(GoDurationRangeTest, DurationsTooLargeToConvertAreRefusedNotCast) {
  EXPECT_EQ(parseGoDuration("1000000000s").count(), 1000000000000);  // the largest accepted
  EXPECT_EQ(parseGoDuration("-1000000000s").count(), -1000000000000);
  const std::vector<std::string> too_large = {
      "1000000001s",
      "9223372036854775808ms",
      "100000000000h",
      std::string(300, '9') + "h",                                  // finite, far past int64
      "-" + std::string(300, '9') + "h",                            // and negative
      std::string(305, '9') + "h",                                  // the product is infinite
      std::string(308, '9') + "ms" + std::string(308, '9') + "ms",  // the sum is infinite
  };
  for (const auto& text : too_large) {
    EXPECT_THROW(parseGoDuration(text), FlagError) << text.size() << " bytes";
  }
}

}  // namespace
}  // namespace metrics_adapter::app
