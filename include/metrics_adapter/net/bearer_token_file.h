#pragma once

#include <sys/types.h>

#include <chrono>
#include <mutex>
#include <string>
#include <string_view>

namespace metrics_adapter::net {

// A bearer token kept in a file, e.g. a projected service-account token that the kubelet
// rotates; also serves for other one-line secrets such as a basic auth password. Thread-safe.
class BearerTokenFile {
 public:
  // Reads the file now. Throws std::invalid_argument starting with `setting` (the flag or field
  // that named the file) when it cannot be read, is empty after trimming, or holds characters a
  // header cannot carry.
  BearerTokenFile(std::string path, std::chrono::milliseconds recheck_interval,
                  std::string_view setting);

  // The token, leading and trailing whitespace removed. At most once per recheck interval the
  // file's identity (mtime, size, inode) is compared and the file re-read when it changed; a
  // failed re-read keeps the last good token and logs a warning (never the token itself).
  std::string current();

 private:
  struct Stamp {
    timespec mtime{};
    off_t size = 0;
    ino_t inode = 0;
    dev_t device = 0;
    bool operator==(const Stamp& other) const;
  };

  // Reads token and stamp, or returns an error description.
  std::string load(std::string& token, Stamp& stamp) const;

  const std::string path_;
  const std::chrono::milliseconds recheck_interval_;
  std::mutex mutex_;
  std::string token_;
  Stamp stamp_;
  std::chrono::steady_clock::time_point last_check_;
};

}  // namespace metrics_adapter::net
