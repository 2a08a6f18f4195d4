#pragma once

namespace metrics_adapter::app {

// Sizes the allocator for a long-running server; call once, before the threads start.
void tuneProcessForServing();

// Gives the pages malloc holds free back to the OS (glibc's malloc_trim). After a relist, the
// buffers of the series answer and the old snapshot are free but, without this, stay resident
// until malloc reuses them: 0.5 MiB of the idle RSS at 10k series (docs/performance.md).
void returnFreedMemory();

// Lowers the calling thread's scheduling priority (its nice value, Linux's per-thread one) to
// `nice`, so that its background work takes only the CPU the request path leaves.
void lowerThisThreadPriority(int nice);

}  // namespace metrics_adapter::app
