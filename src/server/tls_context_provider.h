#pragma once

#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "metrics_adapter/server/sni_cert_key.h"
#include "server/certificate.h"
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

// How errors name one --tls-sni-cert-key pair: the flag and its value.
std::string sniCertKeyLabel(const SniCertKey& cert_key);

// Reads one SNI pair and checks that OpenSSL serves it under `policy` (makeServerContext).
// Throws std::runtime_error naming the flag and its value, then the problem.
CertificatePair loadSniCertificatePair(const SniCertKey& cert_key, const TlsPolicy& policy);

// Hands out the SSL context for new connections and rotates it when a certificate or key file
// (the default pair's or an SNI pair's) changes on disk, without a restart. Thread-safe.
class TlsContextProvider {
 public:
  // Loads the pairs and builds the first context; throws std::runtime_error (bad files, key
  // mismatch, cipher list OpenSSL rejects) naming the pair.
  TlsContextProvider(TlsPolicy policy, std::string cert_file, std::string key_file,
                     std::vector<SniCertKey> sni_cert_keys,
                     std::chrono::milliseconds check_interval);

  // The context to use for a connection accepted now. At most once per check interval, stats the
  // files; when any changed, reloads the pairs that changed and builds a new context. A pair that
  // fails to load keeps its previous certificate in service and logs an error (retried once its
  // files change again).
  std::shared_ptr<boost::asio::ssl::context> current();

 private:
  // One pair of files and what was last loaded from them.
  struct WatchedPair {
    SniCertKey files;  // names unused for the default pair
    bool is_sni = false;
    FileStamp cert_stamp;
    FileStamp key_stamp;
    CertificatePair loaded;
  };

  CertificatePair load(const WatchedPair& watched) const;
  std::shared_ptr<boost::asio::ssl::context> build() const;

  const TlsPolicy policy_;
  const std::chrono::milliseconds check_interval_;

  std::mutex mutex_;
  std::vector<WatchedPair> pairs_;  // the default pair first, then the SNI pairs in flag order
  std::shared_ptr<boost::asio::ssl::context> context_;
  std::chrono::steady_clock::time_point last_check_;
};

}  // namespace metrics_adapter::server
