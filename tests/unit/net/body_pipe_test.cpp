#include "net/body_pipe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

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

// Reads until `size` bytes came, `capacity` at a time.
std::string readBytes(BodyPipe& pipe, std::size_t size, std::size_t capacity) {
  std::string text;
  std::vector<char> out(capacity);
  while (text.size() < size) {
    const auto read = pipe.read(out.data(), std::min(capacity, size - text.size()), farFuture());
    if (read.status != Status::kData) break;
    text.append(out.data(), read.size);
  }
  return text;
}

TEST(BodyPipeTest, WritesWithinTheLimitCompleteAtOnce) {
  BodyPipe pipe(16);
  std::string data = "hello world";
  auto written = pipe.putn_nocopy(bytes(data), data.size());
  ASSERT_TRUE(written.is_done());
  EXPECT_EQ(written.get(), data.size());
  data.assign(data.size(), 'x');  // the write completed: the pipe holds its own copy
  EXPECT_EQ(readBytes(pipe, 11, 5), "hello world");
}

TEST(BodyPipeTest, AWritePastTheLimitCompletesOnceTheReaderDrainedHalf) {
  BodyPipe pipe(8);
  const std::string first = "abcdef";
  const std::string second = "ghijkl";
  EXPECT_TRUE(pipe.putn_nocopy(bytes(first), first.size()).is_done());
  auto parked = pipe.putn_nocopy(bytes(second), second.size());  // 12 bytes buffered, limit 8
  EXPECT_FALSE(parked.is_done());

  EXPECT_EQ(readBytes(pipe, 7, 7), "abcdefg");  // 5 left: above half the limit
  EXPECT_FALSE(parked.is_done());
  EXPECT_EQ(readBytes(pipe, 1, 1), "h");  // 4 left: half the limit
  ASSERT_TRUE(parked.is_done());
  EXPECT_EQ(parked.get(), second.size());
  EXPECT_EQ(readBytes(pipe, 4, 8), "ijkl");
}

TEST(BodyPipeTest, AWriteLargerThanTheLimitIsReadWhole) {
  BodyPipe pipe(4);
  const std::string data = "0123456789";
  auto parked = pipe.putn(bytes(data), data.size());
  EXPECT_FALSE(parked.is_done());
  EXPECT_EQ(readBytes(pipe, 8, 3), "01234567");
  EXPECT_TRUE(parked.is_done());
  pipe.finish(nullptr);
  EXPECT_EQ(readBytes(pipe, 100, 100), "89");
  char out[4];
  EXPECT_EQ(pipe.read(out, sizeof out, farFuture()).status, Status::kEnd);
}

// A writer thread that waits for each write, as the HTTP client does, against a reader with
// other chunk sizes: every byte arrives once and in order, and the writer never got ahead of
// the reader by more than the limit and one write.
TEST(BodyPipeTest, ConcurrentWriterAndReaderLoseNoBytes) {
  constexpr std::size_t kLimit = 1000;
  constexpr std::size_t kMaxWrite = 300;
  BodyPipe pipe(kLimit);
  std::string sent;
  for (std::size_t i = 0; sent.size() < 200'000; ++i) sent += std::to_string(i * 7919) + ',';
  std::atomic<std::size_t> completed{0};
  std::thread writer([&] {
    std::size_t offset = 0;
    std::size_t step = 1;
    while (offset < sent.size()) {
      const std::size_t size = std::min(step, sent.size() - offset);
      std::string chunk = sent.substr(offset, size);  // dies with the write, as network buffers do
      if (pipe.putn_nocopy(bytes(chunk), chunk.size()).get() != size) {
        ADD_FAILURE() << "a short write at byte " << offset;
        break;  // finishing ends the reader, which then misses bytes
      }
      offset += size;
      completed = offset;
      step = step * 5 % kMaxWrite + 1;
    }
    pipe.finish(nullptr);
  });
  std::string received;
  std::size_t capacity = 1;
  std::size_t max_ahead = 0;
  while (true) {
    std::vector<char> out(capacity);
    const auto read = pipe.read(out.data(), out.size(), farFuture());
    if (read.status != Status::kData) {
      EXPECT_EQ(read.status, Status::kEnd);
      break;
    }
    received.append(out.data(), read.size);
    // One load: the writer may complete more between two, and the difference would wrap.
    const std::size_t written = completed.load();
    max_ahead = std::max(max_ahead, written - std::min(written, received.size()));
    capacity = capacity * 3 % 701 + 1;
  }
  writer.join();
  EXPECT_EQ(received, sent);
  EXPECT_LE(max_ahead, kLimit + kMaxWrite);
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

TEST(BodyPipeTest, AbandoningFailsParkedAndLaterWrites) {
  BodyPipe pipe(2);
  const std::string data = "abc";
  auto parked = pipe.putn_nocopy(bytes(data), data.size());
  EXPECT_FALSE(parked.is_done());
  pipe.abandon();
  EXPECT_THROW(parked.get(), std::runtime_error);
  auto later = pipe.putn_nocopy(bytes(data), data.size());
  EXPECT_THROW(later.get(), std::runtime_error);
  EXPECT_FALSE(pipe.can_write());
  char out[8];
  EXPECT_EQ(pipe.read(out, sizeof out, farFuture()).status, Status::kEnd);
}

TEST(BodyPipeTest, WriterFailureDropsUnreadBytesAndFailsParkedWrites) {
  BodyPipe pipe(2);
  const std::string data = "abc";
  auto parked = pipe.putn_nocopy(bytes(data), data.size());
  pipe.finish(std::make_exception_ptr(std::runtime_error("connection reset")));
  EXPECT_THROW(parked.get(), std::runtime_error);
  char out[8];
  EXPECT_EQ(pipe.read(out, sizeof out, farFuture()).status, Status::kFailed);
}

TEST(BodyPipeTest, AWaitingReaderIsWokenByAWrite) {
  BodyPipe pipe;
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::string data = "late";
    pipe.putn(bytes(data), data.size()).wait();
  });
  char out[8];
  const auto read = pipe.read(out, sizeof out, farFuture());
  writer.join();
  ASSERT_EQ(read.status, Status::kData);
  EXPECT_EQ(std::string(out, read.size), "late");
}

}  // namespace
}  // namespace metrics_adapter::net
