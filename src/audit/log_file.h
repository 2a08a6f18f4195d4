#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace metrics_adapter::audit {

struct LogFileOptions {
  std::string path;
  std::uint64_t max_size_bytes = std::uint64_t{100} << 20;
  int max_backups = 0;   // 0: keep all
  int max_age_days = 0;  // 0: no limit
  bool compress = false;
};

// An append-only file rotated as lumberjack (gopkg.in/natefinch/lumberjack.v2) rotates it, the
// way upstream's --audit-log-* flags do: a write that would take the file past its maximum size
// first renames it to <name>-<UTC 2006-01-02T15-04-05.000><.ext> and starts a new one (mode
// 0600). A background thread then gzips backups (--audit-log-compress) and removes those past
// max_backups or max_age_days. Not thread-safe except waitForHousekeeping().
class LogFile {
 public:
  // Creates missing directories and opens (appends to) the file. Throws std::runtime_error.
  explicit LogFile(LogFileOptions options);
  ~LogFile();
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  // False when the bytes could not be written (or are longer than the maximum size).
  bool write(std::string_view bytes);
  // The most one write() may carry: the size at which the file is rotated.
  std::uint64_t maxSize() const { return options_.max_size_bytes; }
  // For tests: blocks until the compression and pruning asked for so far are done.
  void waitForHousekeeping();

  // The name a backup rotated at `time` gets.
  static std::string backupName(const std::string& path,
                                std::chrono::system_clock::time_point time);

 private:
  bool open();
  bool rotate();
  void housekeeping();
  void mill();

  LogFileOptions options_;
  int fd_ = -1;
  std::uint64_t size_ = 0;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::uint64_t asked_ = 0;
  std::uint64_t done_ = 0;
  bool stopping_ = false;
  std::thread housekeeper_;
};

// Writes `input` as a gzip file at `output` (mode 0600). False on failure.
bool gzipFile(const std::string& input, const std::string& output);

}  // namespace metrics_adapter::audit
