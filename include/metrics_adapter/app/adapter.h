#pragma once

#include "metrics_adapter/app/flags.h"

namespace metrics_adapter::app {

// Loads the config, starts discovery and the HTTPS server, and serves until SIGINT/SIGTERM.
// Returns the process exit code: 0 after a clean stop, 1 when the config or a flag value is
// unusable (the reason is logged naming the file/flag).
int runAdapter(const AdapterOptions& options);

// Sets up spdlog on stderr with a level derived from --v.
void configureLogging(int verbosity);

}  // namespace metrics_adapter::app
