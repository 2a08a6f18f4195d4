#include "net/body_pipe.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace metrics_adapter::net {

BodyPipe::BodyPipe(std::size_t limit) : limit_(std::max<std::size_t>(limit, 2)) {}

BodyPipe::ReadResult BodyPipe::read(char* destination, std::size_t capacity,
                                    std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  reader_waiting_ = true;
  const bool ready = changed_.wait_until(lock, deadline, [&] {
    return error_ != nullptr || buffered_ != 0 || finished_ || abandoned_;
  });
  reader_waiting_ = false;
  if (!ready) return {ReadStatus::kTimedOut, 0, nullptr};
  if (error_ != nullptr) return {ReadStatus::kFailed, 0, error_};
  if (buffered_ == 0 || abandoned_) return {ReadStatus::kEnd, 0, nullptr};

  const std::size_t count = take(destination, capacity);
  std::vector<ParkedWrite> resumed;
  if (buffered_ <= limit_ / 2) resumed.swap(parked_);
  lock.unlock();
  settle(resumed, nullptr);
  return {ReadStatus::kData, count, nullptr};
}

void BodyPipe::finish(std::exception_ptr error) {
  std::vector<ParkedWrite> dropped;
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
    if (error != nullptr && error_ == nullptr) {
      error_ = std::move(error);
      blocks_.clear();
      buffered_ = 0;
      dropped.swap(parked_);
    }
  }
  changed_.notify_all();
  settle(dropped, std::make_exception_ptr(std::runtime_error("response failed")));
}

void BodyPipe::abandon() {
  std::vector<ParkedWrite> dropped;
  {
    std::lock_guard lock(mutex_);
    abandoned_ = true;
    blocks_.clear();
    spares_.clear();
    buffered_ = 0;
    dropped.swap(parked_);
  }
  changed_.notify_all();
  settle(dropped, std::make_exception_ptr(std::runtime_error("response abandoned by its reader")));
}

bool BodyPipe::can_write() const {
  std::lock_guard lock(mutex_);
  return !finished_ && !abandoned_;
}

pplx::task<void> BodyPipe::close(std::ios_base::openmode mode) {
  if ((mode & std::ios_base::out) != 0) finish(nullptr);
  return pplx::task_from_result();
}

pplx::task<void> BodyPipe::close(std::ios_base::openmode mode, std::exception_ptr eptr) {
  if ((mode & std::ios_base::out) != 0) finish(std::move(eptr));
  return pplx::task_from_result();
}

pplx::task<BodyPipe::int_type> BodyPipe::putc(std::uint8_t ch) {
  return write(&ch, 1).then(
      [ch](size_t written) { return written == 1 ? static_cast<int_type>(ch) : traits::eof(); });
}

pplx::task<size_t> BodyPipe::putn(const std::uint8_t* ptr, size_t count) {
  return write(ptr, count);
}

pplx::task<size_t> BodyPipe::putn_nocopy(const std::uint8_t* ptr, size_t count) {
  // Copied all the same: the bytes must outlive the write only until it completes, and it
  // completes at once while the buffer has room.
  return write(ptr, count);
}

std::exception_ptr BodyPipe::exception() const {
  std::lock_guard lock(mutex_);
  return error_;
}

pplx::task<size_t> BodyPipe::write(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return pplx::task_from_result<size_t>(0);
  std::unique_lock lock(mutex_);
  if (auto refusal = writeRefusal()) {
    lock.unlock();
    // An exception, not 0 bytes: the HTTP client would retry a 0-byte write forever.
    return pplx::task_from_exception<size_t>(refusal);
  }
  append(data, size);
  const bool wake = reader_waiting_;
  pplx::task<size_t> done = pplx::task_from_result<size_t>(size);
  if (buffered_ > limit_) {
    parked_.push_back({pplx::task_completion_event<size_t>(), size});
    done = pplx::create_task(parked_.back().done);
  }
  lock.unlock();
  if (wake) changed_.notify_one();
  return done;
}

void BodyPipe::append(const std::uint8_t* data, std::size_t size) {
  buffered_ += size;
  if (!blocks_.empty()) {
    Block& back = blocks_.back();
    const std::size_t fits = std::min(size, back.capacity() - back.size());
    back.insert(back.end(), data, data + fits);
    data += fits;
    size -= fits;
  }
  if (size == 0) return;
  // Blocks grow with what is buffered: while the reader keeps up (a watch, a small answer) a
  // block holds one write; once bytes pile up, a few large blocks hold them.
  const std::size_t wanted = std::max(size, std::min(limit_ / 4, buffered_));
  Block block;
  while (!spares_.empty() && block.capacity() < wanted) {
    block = std::move(spares_.back());  // one too small is freed: blocks only grow
    spares_.pop_back();
  }
  block.reserve(wanted);
  block.assign(data, data + size);
  blocks_.push_back(std::move(block));
}

std::size_t BodyPipe::take(char* destination, std::size_t capacity) {
  std::size_t copied = 0;
  while (copied < capacity && !blocks_.empty()) {
    Block& front = blocks_.front();
    const std::size_t count = std::min(capacity - copied, front.size() - read_offset_);
    std::memcpy(destination + copied, front.data() + read_offset_, count);
    copied += count;
    read_offset_ += count;
    if (read_offset_ < front.size()) break;
    read_offset_ = 0;
    if (blocks_.size() == 1) {
      front.clear();  // stays the block the writer appends to
      break;
    }
    front.clear();
    spares_.push_back(std::move(front));
    blocks_.pop_front();
  }
  buffered_ -= copied;
  // Drained: the reader keeps up, so one spare will do until bytes pile up again.
  if (buffered_ == 0 && spares_.size() > 1) spares_.resize(1);
  return copied;
}

void BodyPipe::settle(const std::vector<ParkedWrite>& writes, const std::exception_ptr& error) {
  for (const auto& write : writes) {
    if (error != nullptr) {
      write.done.set_exception(error);
    } else {
      write.done.set(write.size);
    }
  }
}

std::exception_ptr BodyPipe::writeRefusal() const {
  if (abandoned_) {
    return std::make_exception_ptr(std::runtime_error("response abandoned by its reader"));
  }
  if (finished_) return std::make_exception_ptr(std::runtime_error("response already finished"));
  return nullptr;
}

}  // namespace metrics_adapter::net
