#include "metrics_adapter/server/percent_decode.h"

#include <gtest/gtest.h>

#include <string>

#include "metrics_adapter/text/percent_encoding.h"

namespace metrics_adapter::server {
namespace {

TEST(PercentDecodeTest, Table) {
  struct Case {
    const char* in;
    bool plus_is_space;
    std::optional<std::string> out;
  };
  const Case cases[] = {
      {"", false, ""},
      {"abc", false, "abc"},
      {"%41%62", false, "Ab"},
      {"%2a", false, "*"},
      {"a+b", true, "a b"},
      {"a+b", false, "a+b"},
      {"%00", false, std::string(1, '\0')},
      {"%", false, std::nullopt},
      {"%4", false, std::nullopt},
      {"%4g", false, std::nullopt},
  };
  for (const auto& c : cases) EXPECT_EQ(percentDecode(c.in, c.plus_is_space), c.out) << c.in;
}

TEST(PercentEncodeTest, DecodesBackToTheSameBytes) {
  std::string every_byte;
  for (int byte = 0; byte < 256; ++byte) every_byte += static_cast<char>(byte);
  EXPECT_EQ(percentDecode(text::percentEncode(every_byte), false), every_byte);
  EXPECT_EQ(percentDecode(text::percentEncode(every_byte), true), every_byte);
}

}  // namespace
}  // namespace metrics_adapter::server
