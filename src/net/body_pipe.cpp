#include "metrics_adapter/net/body_pipe.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace metrics_adapter::net {

BodyPipe::ReadResult BodyPipe::read(char* destination, std::size_t capacity,
                                    std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  const bool ready = changed_.wait_until(lock, deadline, [&] {
    return error_ != nullptr || !pending_.empty() || finished_ || abandoned_;
  });
  if (!ready) return {ReadStatus::kTimedOut, 0, nullptr};
  if (error_ != nullptr) return {ReadStatus::kFailed, 0, error_};
  if (pending_.empty() || abandoned_) return {ReadStatus::kEnd, 0, nullptr};

  PendingWrite& front = pending_.front();
  const std::size_t count = std::min(capacity, front.size - front.offset);
  std::memcpy(destination, front.data + front.offset, count);
  front.offset += count;
  if (front.offset < front.size) return {ReadStatus::kData, count, nullptr};

  PendingWrite consumed = std::move(front);
  pending_.pop_front();
  lock.unlock();
  consumed.done.set(consumed.size);
  return {ReadStatus::kData, count, nullptr};
}

void BodyPipe::finish(std::exception_ptr error) {
  std::deque<PendingWrite> dropped;
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
    if (error != nullptr && error_ == nullptr) {
      error_ = std::move(error);
      dropped.swap(pending_);
    }
  }
  changed_.notify_all();
  failWrites(dropped, std::make_exception_ptr(std::runtime_error("response failed")));
}

void BodyPipe::abandon() {
  std::deque<PendingWrite> dropped;
  {
    std::lock_guard lock(mutex_);
    abandoned_ = true;
    dropped.swap(pending_);
  }
  changed_.notify_all();
  failWrites(dropped,
             std::make_exception_ptr(std::runtime_error("response abandoned by its reader")));
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
  PendingWrite write;
  write.copy = std::make_shared<std::vector<std::uint8_t>>(1, ch);
  return enqueue(std::move(write)).then([ch](size_t written) {
    return written == 1 ? static_cast<int_type>(ch) : traits::eof();
  });
}

pplx::task<size_t> BodyPipe::putn(const std::uint8_t* ptr, size_t count) {
  PendingWrite write;
  write.copy = std::make_shared<std::vector<std::uint8_t>>(ptr, ptr + count);
  return enqueue(std::move(write));
}

pplx::task<size_t> BodyPipe::putn_nocopy(const std::uint8_t* ptr, size_t count) {
  PendingWrite write;
  write.data = ptr;
  write.size = count;
  return enqueue(std::move(write));
}

std::exception_ptr BodyPipe::exception() const {
  std::lock_guard lock(mutex_);
  return error_;
}

pplx::task<size_t> BodyPipe::enqueue(PendingWrite write) {
  if (write.copy) {
    write.data = write.copy->data();
    write.size = write.copy->size();
  }
  if (write.size == 0) return pplx::task_from_result<size_t>(0);
  std::unique_lock lock(mutex_);
  if (auto refusal = writeRefusal()) {
    lock.unlock();
    // An exception, not 0 bytes: the HTTP client would retry a 0-byte write forever.
    return pplx::task_from_exception<size_t>(refusal);
  }
  auto task = pplx::create_task(write.done);
  pending_.push_back(std::move(write));
  lock.unlock();
  changed_.notify_all();
  return task;
}

void BodyPipe::failWrites(const std::deque<PendingWrite>& writes, const std::exception_ptr& error) {
  for (const auto& write : writes) write.done.set_exception(error);
}

std::exception_ptr BodyPipe::writeRefusal() const {
  if (abandoned_) {
    return std::make_exception_ptr(std::runtime_error("response abandoned by its reader"));
  }
  if (finished_) return std::make_exception_ptr(std::runtime_error("response already finished"));
  return nullptr;
}

}  // namespace metrics_adapter::net
