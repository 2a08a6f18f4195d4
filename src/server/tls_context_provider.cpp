#include "server/tls_context_provider.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <stdexcept>
#include <utility>

#include "server/certificate.h"
#include "server/tls_context.h"

namespace metrics_adapter::server {

FileStamp stampFile(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return {};
  FileStamp stamp;
  stamp.exists = true;
  stamp.device = info.st_dev;
  stamp.inode = info.st_ino;
  stamp.mtime_ns =
      static_cast<long long>(info.st_mtim.tv_sec) * 1'000'000'000LL + info.st_mtim.tv_nsec;
  stamp.size = info.st_size;
  return stamp;
}

TlsContextProvider::TlsContextProvider(TlsPolicy policy, std::string cert_file,
                                       std::string key_file,
                                       std::chrono::milliseconds check_interval)
    : policy_(std::move(policy)),
      cert_file_(std::move(cert_file)),
      key_file_(std::move(key_file)),
      check_interval_(check_interval) {
  // Stamps first: a change racing with the initial load is then picked up by the next check.
  cert_stamp_ = stampFile(cert_file_);
  key_stamp_ = stampFile(key_file_);
  context_ = build();
  last_check_ = std::chrono::steady_clock::now();
}

std::shared_ptr<boost::asio::ssl::context> TlsContextProvider::build() const {
  return makeServerContext(policy_, loadCertificatePair(cert_file_, key_file_));
}

std::shared_ptr<boost::asio::ssl::context> TlsContextProvider::current() {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (now - last_check_ < check_interval_) return context_;
  last_check_ = now;
  FileStamp cert_stamp = stampFile(cert_file_);
  FileStamp key_stamp = stampFile(key_file_);
  if (cert_stamp == cert_stamp_ && key_stamp == key_stamp_) return context_;
  cert_stamp_ = cert_stamp;
  key_stamp_ = key_stamp;
  try {
    context_ = build();
    spdlog::info("reloaded serving certificate from {} and {}", cert_file_, key_file_);
  } catch (const std::exception& e) {
    spdlog::error("keeping the previous serving certificate: reloading failed: {}", e.what());
  }
  return context_;
}

}  // namespace metrics_adapter::server
