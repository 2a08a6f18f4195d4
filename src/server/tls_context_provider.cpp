#include "server/tls_context_provider.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <stdexcept>
#include <utility>

#include "server/sni_context.h"
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

std::string sniCertKeyLabel(const SniCertKey& cert_key) {
  return "--tls-sni-cert-key=\"" + formatSniCertKey(cert_key) + "\"";
}

CertificatePair loadSniCertificatePair(const SniCertKey& cert_key, const TlsPolicy& policy) {
  try {
    CertificatePair pair = loadCertificatePair(cert_key.cert_file, cert_key.key_file,
                                               {.cert = "certificate file", .key = "key file"});
    makeServerContext(policy, pair);
    return pair;
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(sniCertKeyLabel(cert_key) + ": " + e.what());
  }
}

TlsContextProvider::TlsContextProvider(TlsPolicy policy, std::string cert_file,
                                       std::string key_file, std::vector<SniCertKey> sni_cert_keys,
                                       std::chrono::milliseconds check_interval)
    : policy_(std::move(policy)), check_interval_(check_interval) {
  pairs_.emplace_back();
  pairs_.back().files.cert_file = std::move(cert_file);
  pairs_.back().files.key_file = std::move(key_file);
  for (SniCertKey& cert_key : sni_cert_keys) {
    pairs_.emplace_back();
    pairs_.back().files = std::move(cert_key);
    pairs_.back().is_sni = true;
  }
  for (WatchedPair& watched : pairs_) {
    // Stamps first: a change racing with the initial load is then picked up by the next check.
    watched.cert_stamp = stampFile(watched.files.cert_file);
    watched.key_stamp = stampFile(watched.files.key_file);
    watched.loaded = load(watched);
  }
  context_ = build();
  last_check_ = std::chrono::steady_clock::now();
}

CertificatePair TlsContextProvider::load(const WatchedPair& watched) const {
  if (watched.is_sni) return loadSniCertificatePair(watched.files, policy_);
  CertificatePair pair = loadCertificatePair(watched.files.cert_file, watched.files.key_file);
  // A pair OpenSSL refuses under the policy (e.g. a key too small) is refused here, on its own,
  // so that build() cannot fail and hold back the other pairs' rotation.
  makeServerContext(policy_, pair);
  return pair;
}

std::shared_ptr<boost::asio::ssl::context> TlsContextProvider::build() const {
  std::vector<NamedCertificatePair> named;
  for (std::size_t i = 1; i < pairs_.size(); ++i) {
    named.push_back({.pair = &pairs_[i].loaded,
                     .patterns = pairs_[i].files.names,
                     .label = sniCertKeyLabel(pairs_[i].files)});
  }
  return makeSniServerContext(policy_, pairs_.front().loaded, named);
}

std::shared_ptr<boost::asio::ssl::context> TlsContextProvider::current() {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (now - last_check_ < check_interval_) return context_;
  last_check_ = now;
  bool reloaded = false;
  for (WatchedPair& watched : pairs_) {
    FileStamp cert_stamp = stampFile(watched.files.cert_file);
    FileStamp key_stamp = stampFile(watched.files.key_file);
    if (cert_stamp == watched.cert_stamp && key_stamp == watched.key_stamp) continue;
    watched.cert_stamp = cert_stamp;
    watched.key_stamp = key_stamp;
    try {
      watched.loaded = load(watched);
      reloaded = true;
      SPDLOG_INFO("reloaded {}certificate from {} and {}", watched.is_sni ? "SNI " : "serving ",
                  watched.files.cert_file, watched.files.key_file);
    } catch (const std::exception& e) {
      SPDLOG_ERROR("keeping the previous {}certificate: reloading failed: {}",
                   watched.is_sni ? "SNI " : "serving ", e.what());
    }
  }
  if (!reloaded) return context_;
  try {
    context_ = build();
  } catch (const std::exception& e) {
    SPDLOG_ERROR("keeping the previous serving certificates: {}", e.what());
  }
  return context_;
}

}  // namespace metrics_adapter::server
