#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "metrics_adapter/net/bearer_token_file.h"

namespace metrics_adapter::net {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// The setting the Prometheus client names the file with.
constexpr std::string_view kFlag = "--prometheus-token-file";

class BearerTokenFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ma-token-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    path_ = (dir_ / "token").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Replaces the file the way the kubelet does: write aside, then rename over it.
  void write(const std::string& content) {
    const auto aside = dir_ / "token.new";
    std::ofstream(aside, std::ios::binary) << content;
    fs::rename(aside, path_);
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(BearerTokenFileTest, TrimsWhitespaceAndNewlines) {
  write("  \tabc.def-ghi\r\n\n");
  BearerTokenFile token(path_, milliseconds(0), kFlag);
  EXPECT_EQ(token.current(), "abc.def-ghi");
}

TEST_F(BearerTokenFileTest, UnusableFilesAreRejectedNamingTheFlag) {
  const std::string contents[] = {"", " \n ", "two\nlines"};
  for (const auto& content : contents) {
    write(content);
    try {
      BearerTokenFile token(path_, milliseconds(0), kFlag);
      ADD_FAILURE() << "accepted \"" << content << "\"";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--prometheus-token-file"), std::string::npos);
    }
  }
  try {
    BearerTokenFile token((dir_ / "missing").string(), milliseconds(0), kFlag);
    ADD_FAILURE() << "accepted a missing file";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--prometheus-token-file"), std::string::npos);
  }
}

TEST_F(BearerTokenFileTest, RereadsAReplacedFile) {
  write("first\n");
  BearerTokenFile token(path_, milliseconds(0), kFlag);
  EXPECT_EQ(token.current(), "first");
  write("second\n");
  EXPECT_EQ(token.current(), "second");
}

TEST_F(BearerTokenFileTest, RereadsAFileRewrittenInPlace) {
  write("first1");
  BearerTokenFile token(path_, milliseconds(0), kFlag);
  std::ofstream(path_, std::ios::binary | std::ios::trunc) << "second";
  // Same size and inode: only the mtime tells, so make sure it moved even on coarse clocks.
  fs::last_write_time(path_, fs::last_write_time(path_) + std::chrono::seconds(5));
  EXPECT_EQ(token.current(), "second");
}

TEST_F(BearerTokenFileTest, DoesNotLookBeforeTheRecheckInterval) {
  write("first\n");
  BearerTokenFile token(path_, std::chrono::hours(1), kFlag);
  write("second\n");
  EXPECT_EQ(token.current(), "first");
}

TEST_F(BearerTokenFileTest, KeepsTheLastGoodTokenWhenTheFileBreaks) {
  write("first\n");
  BearerTokenFile token(path_, milliseconds(0), kFlag);
  fs::remove(path_);
  EXPECT_EQ(token.current(), "first");
  write("\n");
  EXPECT_EQ(token.current(), "first");
  write("third");
  EXPECT_EQ(token.current(), "third");
}

}  // namespace
}  // namespace metrics_adapter::net
