#include "app/process_tuning.h"

#include <malloc.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace metrics_adapter::app {
namespace {

// glibc gives each busy thread its own malloc arena (up to 8 per core), and an arena keeps the
// high-water mark of what ran on it. With cpprestsdk's 40 pool threads and our workers, RSS
// crept up for 20 minutes of a soak while the heap in use stayed flat. Two arenas keep the
// allocator's lock contention low at our request rates.
constexpr int kMallocArenas = 2;

}  // namespace

void tuneProcessForServing() {
  if (mallopt(M_ARENA_MAX, kMallocArenas) != 1) SPDLOG_WARN("could not limit malloc arenas");
}

void returnFreedMemory() { malloc_trim(0); }

void lowerThisThreadPriority(int nice) {
  // On Linux a thread id names the thread alone for setpriority.
  const auto thread = static_cast<id_t>(syscall(SYS_gettid));
  if (setpriority(PRIO_PROCESS, thread, nice) != 0) {
    SPDLOG_DEBUG("could not lower the priority of thread {}", thread);
  }
}

}  // namespace metrics_adapter::app
