#pragma once

#include <cstddef>
#include <memory>
#include <utility>

namespace metrics_adapter::server {

// Memory for a connection's socket operations, kept from one operation to the next. Asio
// allocates every read and write operation, handler included, and recycles only blocks of up
// to about 1 KiB per thread; ours are larger (the handler of a TLS read holds Beast's and Asio's
// composed operations around ours), so each read and each write of every answer called malloc.
// A connection reads and writes one step at a time, and Asio frees an operation's memory before
// its handler runs, so one block serves them all; it grows to the largest operation seen. An
// allocation while the block is taken, should one ever come, gets memory of its own.
class HandlerMemory {
 public:
  HandlerMemory() = default;
  HandlerMemory(const HandlerMemory&) = delete;
  HandlerMemory& operator=(const HandlerMemory&) = delete;

  void* allocate(std::size_t size);
  void deallocate(void* pointer) noexcept;

 private:
  struct Free {
    void operator()(void* block) const noexcept { ::operator delete(block); }
  };
  std::unique_ptr<void, Free> block_;
  std::size_t size_ = 0;
  bool in_use_ = false;
};

// The allocator a handler bound by withMemory() gives Asio: the connection's block.
// The member names are those the standard's Allocator requirements and Asio look for.
template <class T>
class HandlerAllocator {
 public:
  using value_type = T;  // NOLINT(readability-identifier-naming)

  explicit HandlerAllocator(HandlerMemory& memory) noexcept : memory_(&memory) {}
  template <class U>
  HandlerAllocator(
      const HandlerAllocator<U>& other) noexcept  // NOLINT(google-explicit-constructor)
      : memory_(other.memory_) {}

  T* allocate(std::size_t count) { return static_cast<T*>(memory_->allocate(count * sizeof(T))); }
  void deallocate(T* pointer, std::size_t /*count*/) noexcept { memory_->deallocate(pointer); }

  template <class U>
  bool operator==(const HandlerAllocator<U>& other) const noexcept {
    return memory_ == other.memory_;
  }
  template <class U>
  bool operator!=(const HandlerAllocator<U>& other) const noexcept {
    return memory_ != other.memory_;
  }

 private:
  template <class>
  friend class HandlerAllocator;
  HandlerMemory* memory_;
};

// `handler`, with Asio and Beast allocating the operations it completes from `memory`
// (their composed operations pass a handler's associated allocator down to the socket's).
template <class Handler>
class MemoryBoundHandler {
 public:
  using allocator_type = HandlerAllocator<std::byte>;  // NOLINT(readability-identifier-naming)

  MemoryBoundHandler(HandlerMemory& memory, Handler handler)
      : memory_(&memory), handler_(std::move(handler)) {}

  // NOLINTNEXTLINE(readability-identifier-naming): the name Asio's associated_allocator reads
  allocator_type get_allocator() const noexcept { return allocator_type(*memory_); }

  template <class... Args>
  void operator()(Args&&... args) {
    handler_(std::forward<Args>(args)...);
  }

 private:
  HandlerMemory* memory_;
  Handler handler_;
};

template <class Handler>
MemoryBoundHandler<Handler> withMemory(HandlerMemory& memory, Handler handler) {
  return MemoryBoundHandler<Handler>(memory, std::move(handler));
}

}  // namespace metrics_adapter::server
