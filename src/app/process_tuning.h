#pragma once

namespace metrics_adapter::app {

// Sizes the allocator for a long-running server; call once, before the threads start.
void tuneProcessForServing();

}  // namespace metrics_adapter::app
