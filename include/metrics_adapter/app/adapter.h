#pragma once

#include "metrics_adapter/app/flags.h"

namespace metrics_adapter::app {

// Loads the config, starts discovery and the HTTPS server, and serves until SIGINT/SIGTERM.
// The config file is reloaded when it changes and on SIGHUP; an invalid new config is logged and
// the last good one keeps serving. Logging is (re)configured from the options first. Returns the
// process exit code: 0 after a clean stop, 1 when the config or a flag value is unusable (the
// reason is logged naming the file/flag).
int runAdapter(const AdapterOptions& options);

}  // namespace metrics_adapter::app
