#include "server/handler_memory.h"

#include <gtest/gtest.h>

#include <cstring>

namespace metrics_adapter::server {
namespace {

TEST(HandlerMemoryTest, OneBlockServesOneOperationAfterAnother) {
  HandlerMemory memory;
  void* first = memory.allocate(200);
  std::memset(first, 1, 200);
  memory.deallocate(first);
  EXPECT_EQ(memory.allocate(200), first);  // the same block again
  memory.deallocate(first);
  EXPECT_EQ(memory.allocate(64), first);  // a smaller operation fits in it
  memory.deallocate(first);
}

TEST(HandlerMemoryTest, AnAllocationWhileTheBlockIsTakenGetsMemoryOfItsOwn) {
  HandlerMemory memory;
  void* block = memory.allocate(128);
  void* other = memory.allocate(128);
  EXPECT_NE(other, block);
  std::memset(block, 1, 128);
  std::memset(other, 2, 128);  // both usable at once (the sanitizers check the bounds)
  memory.deallocate(other);
  memory.deallocate(block);
  EXPECT_EQ(memory.allocate(128), block);  // the block is free again, the other one freed
  memory.deallocate(block);
}

TEST(HandlerMemoryTest, TheBlockGrowsToALargerOperation) {
  HandlerMemory memory;
  memory.deallocate(memory.allocate(16));
  void* large = memory.allocate(4096);
  std::memset(large, 3, 4096);
  memory.deallocate(large);
  EXPECT_EQ(memory.allocate(4096), large);
  memory.deallocate(large);
}

TEST(HandlerMemoryTest, TheAllocatorRebindsToTheSameMemory) {
  HandlerMemory memory;
  HandlerAllocator<std::byte> bytes(memory);
  HandlerAllocator<long> longs(bytes);
  EXPECT_TRUE(bytes == longs);
  long* values = longs.allocate(4);
  values[3] = 42;
  EXPECT_EQ(values[3], 42);
  longs.deallocate(values, 4);
  std::byte* again = bytes.allocate(32);
  EXPECT_EQ(static_cast<void*>(again), static_cast<void*>(values));
  bytes.deallocate(again, 32);
}

}  // namespace
}  // namespace metrics_adapter::server
