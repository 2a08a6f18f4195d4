#pragma once

#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "server/tls_policy.h"

namespace metrics_adapter::server {

// Identity of a file's current contents as far as stat() can tell.
struct FileStamp {
  bool exists = false;
  unsigned long long device = 0;
  unsigned long long inode = 0;
  long long mtime_ns = 0;
  long long size = 0;

  bool operator==(const FileStamp&) const = default;
};

FileStamp stampFile(const std::string& path);

// Hands out the SSL context for new connections and rotates it when the certificate or key file
// changes on disk, without a restart. Thread-safe.
class TlsContextProvider {
 public:
  // Loads the pair and builds the first context; throws std::runtime_error (bad files, key
  // mismatch, cipher list OpenSSL rejects).
  TlsContextProvider(TlsPolicy policy, std::string cert_file, std::string key_file,
                     std::chrono::milliseconds check_interval);

  // The context to use for a connection accepted now. At most once per check interval, stats the
  // files; when either changed, builds a new context from them. A pair that fails to load keeps
  // the previous context and logs an error (retried once the files change again).
  std::shared_ptr<boost::asio::ssl::context> current();

 private:
  std::shared_ptr<boost::asio::ssl::context> build() const;

  const TlsPolicy policy_;
  const std::string cert_file_;
  const std::string key_file_;
  const std::chrono::milliseconds check_interval_;

  std::mutex mutex_;
  std::shared_ptr<boost::asio::ssl::context> context_;
  FileStamp cert_stamp_;
  FileStamp key_stamp_;
  std::chrono::steady_clock::time_point last_check_;
};

}  // namespace metrics_adapter::server
