#pragma once

#include "metrics_adapter/app/flags.h"

namespace metrics_adapter::app {

// Loads the config, starts discovery and the HTTPS server, and serves until SIGINT/SIGTERM.
// The config file is reloaded when it changes and on SIGHUP; an invalid new config is logged and
// the last good one keeps serving. Logging is (re)configured from the options first. Returns the
// process exit code: 0 after a clean stop, 1 when the config or a flag value is unusable (the
// reason is logged naming the file/flag).
int runAdapter(const AdapterOptions& options);

// Sets up spdlog as klog's flags say (LogOptions): a level from --v (0-5 info, 6-7 debug, 8+
// trace) and --vmodule, text lines or JSON objects (--log-format), on stderr or in the files of
// --log_file/--log_dir with --logtostderr=false. Throws std::invalid_argument naming the flag
// when a file cannot be opened. Idempotent.
void configureLogging(const LogOptions& options);

}  // namespace metrics_adapter::app
