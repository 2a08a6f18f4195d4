#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::logging {

// --log-format / --logging-format: text lines, or one JSON object per line (ts, level, msg, and
// the fields), as Kubernetes components write with --logging-format=json.
enum class LogFormat { kText, kJson };

// klog's severities, for --stderrthreshold (0-3 or the names, as klog reads them). spdlog's
// trace, debug and info are INFO; warn is WARNING; err and critical are ERROR (FATAL has no file
// of its own here: --stderrthreshold=FATAL sends only critical messages to stderr).
enum class LogSeverity { kInfo = 0, kWarning = 1, kError = 2, kFatal = 3 };

// One --vmodule entry: messages from source files whose name matches `pattern` are logged up to
// `verbosity` when that is above --v's (as in klog, a rule never makes a file quieter than --v).
// The pattern is a glob as Go's path.Match reads it ('*', '?', [a-z], [^a-z], '\' escapes;
// '*' and '?' never match '/'):
// - without a '/', over the file's base name without its extension ("connection", "relist*");
// - with a '/', over the end of the path without the extension, starting after a '/'
//   ("server/connection", "*/discovery/*"); a leading '/' anchors it at the path's start.
// The first matching rule decides. Messages of the "access" logger (the per-request lines) follow
// --v only.
struct VmoduleRule {
  std::string pattern;
  int verbosity = 0;
  bool operator==(const VmoduleRule&) const = default;
};

// Reads --vmodule's "pattern=N,pattern=N" as klog does: empty entries are skipped, N is a
// decimal integer >= 0, entries with N = 0 are dropped (they change nothing). Throws
// std::invalid_argument("--vmodule: ...") for anything else, a malformed glob included (klog
// would silently never match it).
std::vector<VmoduleRule> parseVmodule(std::string_view text);

// Everything the logging flags decide (klog's, as upstream's binary registers them, and
// component-base's --logging-format and --log-flush-frequency). Defaults are klog's.
// configureLogging (logging.h) gives each its meaning; checkLogOptions (logging/logging.h)
// validates them without opening anything.
struct LogOptions {
  int verbosity = 0;  // --v: 0-5 info, 6-7 debug, 8+ trace
  std::vector<VmoduleRule> vmodule;
  LogFormat format = LogFormat::kText;
  // --logtostderr: stderr only; every file flag below (and --alsologtostderr,
  // --stderrthreshold, --one_output) then does nothing, which configureLogging warns about.
  bool logtostderr = true;
  bool alsologtostderr = false;                       // --alsologtostderr: files and stderr
  LogSeverity stderrthreshold = LogSeverity::kError;  // with files: this and worse also to stderr
  // --log_dir (an existing directory): metrics-adapter.{INFO,WARNING,ERROR} files there, each with
  // its severity and worse. Empty with --logtostderr=false and no --log_file: the temporary
  // directory ($TMPDIR or /tmp), as klog does.
  std::string log_dir;
  std::string log_file;  // --log_file: one file for every severity (wins over --log_dir)
  // --log_file_max_size: rotate a file past this many MB (2^20 bytes), keeping 5 rotated ones
  // (name.1.ext newest ... name.5.ext); 0 = never rotate.
  std::uint64_t log_file_max_size_mb = 1800;
  bool skip_headers = false;      // --skip_headers: text lines are the message only
  bool skip_log_headers = false;  // --skip_log_headers: no "Log file created at" lines in files
  bool add_dir_header = false;    // --add_dir_header: "server/connection.cpp:12]", not the base
  bool one_output = false;        // --one_output: a message goes to its own severity file only
  std::string log_backtrace_at;   // --log_backtrace_at=file:line: a stack trace from there
  // --log-flush-frequency: how often buffered file output is flushed; 0 = only when spdlog's
  // buffers fill and on errors.
  std::chrono::milliseconds flush_frequency{std::chrono::seconds(5)};
};

// --log_backtrace_at: a stack trace follows every message logged at this source line.
struct BacktraceLocation {
  std::string file;       // a base name ("connection.cpp") or a path end ("server/connection.cpp")
  std::int64_t line = 0;  // klog takes any positive int64
  bool operator==(const BacktraceLocation&) const = default;
};

// Reads --log_backtrace_at as klog's traceLocation.Set does: "file:line" with exactly one ':',
// a '.' in the file, and a positive line as Go's strconv.Atoi reads it ("+7" and "007" are 7);
// "" gives nullopt, and so does ":0", klog's printed default. Throws
// std::invalid_argument("--log_backtrace_at: ...") for anything else.
std::optional<BacktraceLocation> parseBacktraceAt(std::string_view text);

}  // namespace metrics_adapter::logging
