#include "server/handler_memory.h"

#include <new>

namespace metrics_adapter::server {

void* HandlerMemory::allocate(std::size_t size) {
  if (in_use_) return ::operator new(size);
  if (size > size_) {
    block_.reset();  // freed first: never two blocks at once
    size_ = 0;
    block_.reset(::operator new(size));
    size_ = size;
  }
  in_use_ = true;
  return block_.get();
}

void HandlerMemory::deallocate(void* pointer) noexcept {
  if (pointer == block_.get()) {
    in_use_ = false;
  } else {
    ::operator delete(pointer);
  }
}

}  // namespace metrics_adapter::server
