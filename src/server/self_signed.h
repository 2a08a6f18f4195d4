#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "server/certificate.h"

namespace metrics_adapter::server {

enum class KeyType { kEcdsaP256, kRsa2048 };

struct SelfSignedSpec {
  std::string common_name = "localhost";
  std::vector<std::string> dns_names = {"localhost"};
  std::vector<std::string> ip_addresses = {"127.0.0.1", "::1"};
  std::chrono::hours validity{24 * 365};
  KeyType key_type = KeyType::kEcdsaP256;
};

// A fresh self-signed certificate (random 127-bit serial, SHA-256 signature, valid from one hour
// ago to allow for clock skew). It is marked as a CA so clients can trust it directly as their
// CA bundle. Throws std::runtime_error on OpenSSL failure.
CertificatePair generateSelfSigned(const SelfSignedSpec& spec);

// Writes the pair as PEM: each file via a temporary file and rename, so readers never see a
// half-written file; the key file gets mode 0600. Throws std::runtime_error naming the file.
void writeCertificatePair(const CertificatePair& pair, const std::string& cert_file,
                          const std::string& key_file);

struct CertificatePaths {
  std::string cert_file;
  std::string key_file;
};

// Makes sure `cert_dir`/apiserver.crt and apiserver.key hold a valid pair for localhost,
// 127.0.0.1 and ::1: reuses them when they load, match and are within their validity period,
// otherwise generates an ECDSA P-256 pair valid for one year. Creates cert_dir when missing.
CertificatePaths ensureSelfSignedCertificate(const std::string& cert_dir);

}  // namespace metrics_adapter::server
