#include "metrics_adapter/net/body_pipe.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace metrics_adapter::net {
namespace {

using Status = BodyPipe::ReadStatus;

std::chrono::steady_clock::time_point farFuture() {
  return std::chrono::steady_clock::now() + std::chrono::hours(1);
}

std::chrono::steady_clock::time_point past() {
  return std::chrono::steady_clock::now() - std::chrono::seconds(1);
}

const std::uint8_t* bytes(const std::string& text) {
  return reinterpret_cast<const std::uint8_t*>(text.data());
}

TEST(BodyPipeTest, WriteCompletesOnlyOnceTheReaderTookEveryByte) {
  BodyPipe pipe;
  const std::string data = "hello world";
  auto written = pipe.putn_nocopy(bytes(data), data.size());
  EXPECT_FALSE(written.is_done());

  char out[5];
  auto first = pipe.read(out, sizeof out, farFuture());
  ASSERT_EQ(first.status, Status::kData);
  EXPECT_EQ(std::string(out, first.size), "hello");
  EXPECT_FALSE(written.is_done());

  std::string rest;
  while (rest.size() < 6) {
    auto more = pipe.read(out, sizeof out, farFuture());
    ASSERT_EQ(more.status, Status::kData);
    rest.append(out, more.size);
  }
  EXPECT_EQ(rest, " world");
  EXPECT_EQ(written.get(), data.size());
}

TEST(BodyPipeTest, CleanFinishEndsAfterTheLastBytes) {
  BodyPipe pipe;
  const std::string data = "ab";
  auto written = pipe.putn(bytes(data), data.size());  // copying write
  pipe.finish(nullptr);
  char out[8];
  auto read = pipe.read(out, sizeof out, farFuture());
  ASSERT_EQ(read.status, Status::kData);
  EXPECT_EQ(std::string(out, read.size), "ab");
  EXPECT_EQ(pipe.read(out, sizeof out, farFuture()).status, Status::kEnd);
  EXPECT_EQ(written.get(), 2u);
}

TEST(BodyPipeTest, NothingBeforeTheDeadlineIsATimeout) {
  BodyPipe pipe;
  char out[8];
  EXPECT_EQ(pipe.read(out, sizeof out, past()).status, Status::kTimedOut);
}

TEST(BodyPipeTest, WriterFailureReachesTheReader) {
  BodyPipe pipe;
  pipe.finish(std::make_exception_ptr(std::runtime_error("connection reset")));
  char out[8];
  const auto read = pipe.read(out, sizeof out, farFuture());
  ASSERT_EQ(read.status, Status::kFailed);
  EXPECT_THROW(std::rethrow_exception(read.error), std::runtime_error);
}

TEST(BodyPipeTest, AbandoningFailsPendingAndLaterWrites) {
  BodyPipe pipe;
  const std::string data = "abc";
  auto pending = pipe.putn_nocopy(bytes(data), data.size());
  pipe.abandon();
  EXPECT_THROW(pending.get(), std::runtime_error);
  auto later = pipe.putn_nocopy(bytes(data), data.size());
  EXPECT_THROW(later.get(), std::runtime_error);
  EXPECT_FALSE(pipe.can_write());
}

}  // namespace
}  // namespace metrics_adapter::net
