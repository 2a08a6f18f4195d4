#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "net/cpprest.h"

namespace metrics_adapter::net {

// A cpprestsdk output stream buffer that hands response bytes to one blocking reader through a
// bounded buffer. Writes are copied in and complete at once while the buffer holds at most
// `limit` bytes; a write that takes it past the limit completes only once the reader has drained
// it to half the limit, so the HTTP client reads the socket no faster than the reader consumes
// and memory stays at about `limit` whatever the size of the answer.
// Why a buffer and not a hand-off of each network chunk (what this class did first): completing
// every write only after the reader copied it out cost two thread wake-ups per 64 KiB chunk.
// With the hysteresis the writer is parked once per limit/2 bytes at most, and the reader is
// woken only when it waits for bytes: a 1M-series relist (319 MB) went from 1.14 to 1.02 CPU s
// (most of the remaining thread switching was cpprestsdk's pool: see http_client_factory.cpp).
// Read operations of the cpprestsdk interface are not supported; the reader uses read().
class BodyPipe final : public concurrency::streams::details::basic_streambuf<std::uint8_t> {
 public:
  // 1 MiB: the writer is parked at most once per 512 KiB (eight 64 KiB chunks), and a call's
  // memory grows by about 1.3 MiB at most.
  static constexpr std::size_t kDefaultLimit = std::size_t{1} << 20;

  explicit BodyPipe(std::size_t limit = kDefaultLimit);

  enum class ReadStatus { kData, kEnd, kFailed, kTimedOut };
  struct ReadResult {
    ReadStatus status = ReadStatus::kEnd;
    std::size_t size = 0;      // bytes copied, for kData
    std::exception_ptr error;  // the writer's failure, for kFailed
  };

  // Waits until bytes, the end, a failure or `deadline`, then copies up to `capacity` buffered
  // bytes. Thread-safe against the writer.
  ReadResult read(char* destination, std::size_t capacity,
                  std::chrono::steady_clock::time_point deadline);

  // The writer finished: cleanly when `error` is null. Unread bytes stay readable after a
  // clean finish and are dropped after a failure.
  void finish(std::exception_ptr error);

  // The reader gives up: pending and later writes fail, which makes the HTTP client stop.
  void abandon();

  bool can_read() const override { return false; }
  bool can_write() const override;
  bool can_seek() const override { return false; }
  bool has_size() const override { return false; }
  bool is_eof() const override { return false; }
  size_t buffer_size(std::ios_base::openmode) const override { return 0; }
  void set_buffer_size(size_t, std::ios_base::openmode) override {}
  size_t in_avail() const override { return 0; }
  bool is_open() const override { return can_write(); }
  pplx::task<void> close(std::ios_base::openmode mode) override;
  pplx::task<void> close(std::ios_base::openmode mode, std::exception_ptr eptr) override;
  pplx::task<int_type> putc(std::uint8_t ch) override;
  pplx::task<size_t> putn(const std::uint8_t* ptr, size_t count) override;
  pplx::task<size_t> putn_nocopy(const std::uint8_t* ptr, size_t count) override;
  pplx::task<int_type> bumpc() override { return pplx::task_from_result(traits::eof()); }
  int_type sbumpc() override { return traits::eof(); }
  pplx::task<int_type> getc() override { return pplx::task_from_result(traits::eof()); }
  int_type sgetc() override { return traits::eof(); }
  pplx::task<int_type> nextc() override { return pplx::task_from_result(traits::eof()); }
  pplx::task<int_type> ungetc() override { return pplx::task_from_result(traits::eof()); }
  pplx::task<size_t> getn(std::uint8_t*, size_t) override {
    return pplx::task_from_result<size_t>(0);
  }
  size_t scopy(std::uint8_t*, size_t) override { return 0; }
  pos_type getpos(std::ios_base::openmode) const override { return static_cast<pos_type>(-1); }
  utility::size64_t size() const override { return 0; }
  pos_type seekpos(pos_type, std::ios_base::openmode) override { return static_cast<pos_type>(-1); }
  pos_type seekoff(off_type, std::ios_base::seekdir, std::ios_base::openmode) override {
    return static_cast<pos_type>(-1);
  }
  pplx::task<void> sync() override { return pplx::task_from_result(); }
  std::uint8_t* alloc(size_t) override { return nullptr; }
  void commit(size_t) override {}
  bool acquire(std::uint8_t*& ptr, size_t& count) override {
    ptr = nullptr;
    count = 0;
    return false;
  }
  void release(std::uint8_t*, size_t) override {}
  std::exception_ptr exception() const override;

 private:
  using Block = std::vector<std::uint8_t>;
  struct ParkedWrite {
    pplx::task_completion_event<size_t> done;
    std::size_t size = 0;
  };

  pplx::task<size_t> write(const std::uint8_t* data, std::size_t size);
  void append(const std::uint8_t* data, std::size_t size);    // requires mutex_
  std::size_t take(char* destination, std::size_t capacity);  // requires mutex_
  // Completes (or fails, when `error` is set) the writes taken out of parked_, outside the lock:
  // completing a write can run the HTTP client's continuation inline.
  static void settle(const std::vector<ParkedWrite>& writes, const std::exception_ptr& error);
  std::exception_ptr writeRefusal() const;  // requires mutex_

  const std::size_t limit_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  // The buffered bytes: blocks_.front() from read_offset_, then the other blocks whole. A block
  // is appended to up to its capacity, and a drained one is kept in spares_ for the next, so a
  // long answer read slower than it arrives allocates (and page-faults) its blocks once.
  std::deque<Block> blocks_;
  std::size_t read_offset_ = 0;
  std::size_t buffered_ = 0;
  std::vector<Block> spares_;
  // Writes that took the buffer past limit_, with their sizes: completed once it is at limit_ / 2.
  std::vector<ParkedWrite> parked_;
  bool reader_waiting_ = false;  // the writer wakes the reader only then
  bool finished_ = false;
  bool abandoned_ = false;
  std::exception_ptr error_;
};

}  // namespace metrics_adapter::net
