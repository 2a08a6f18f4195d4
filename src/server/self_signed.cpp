#include "server/self_signed.h"

#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509v3.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace metrics_adapter::server {
namespace {

struct BnDeleter {
  void operator()(BIGNUM* number) const { BN_free(number); }
};

[[noreturn]] void failOpenSsl(const std::string& what) {
  throw std::runtime_error("generating a self-signed certificate: " + what + ": " +
                           takeOpenSslErrors());
}

EvpPkeyPtr generateKey(KeyType type) {
  EvpPkeyPtr key(type == KeyType::kRsa2048 ? EVP_RSA_gen(2048) : EVP_EC_gen("P-256"));
  if (!key) failOpenSsl("key generation");
  return key;
}

void setRandomSerial(X509* certificate) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) failOpenSsl("random serial");
  bytes[0] &= 0x7F;  // positive, as RFC 5280 requires
  bytes[0] |= 0x40;  // and never shorter than 16 bytes
  std::unique_ptr<BIGNUM, BnDeleter> serial(BN_bin2bn(bytes, sizeof(bytes), nullptr));
  if (!serial || BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(certificate)) == nullptr) {
    failOpenSsl("serial number");
  }
}

void addExtension(X509* certificate, int nid, const std::string& value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, certificate, certificate, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str());
  if (extension == nullptr) failOpenSsl("extension \"" + value + "\"");
  const int added = X509_add_ext(certificate, extension, -1);
  X509_EXTENSION_free(extension);
  if (added != 1) failOpenSsl("adding extension \"" + value + "\"");
}

std::string subjectAltNames(const SelfSignedSpec& spec) {
  std::string names;
  const auto append = [&](const char* prefix, const std::string& value) {
    if (!names.empty()) names += ',';
    names += prefix;
    names += value;
  };
  for (const std::string& dns : spec.dns_names) append("DNS:", dns);
  for (const std::string& ip : spec.ip_addresses) append("IP:", ip);
  return names;
}

void writeFileAtomically(const std::string& path, const std::string& contents, mode_t mode) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  const auto fail = [&](const std::string& step) {
    const int error = errno;
    ::unlink(temporary.c_str());
    throw std::runtime_error("writing \"" + path + "\": " + step + ": " + std::strerror(error));
  };
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) fail("open");
  // open() applies the umask; the key must end up exactly 0600 whatever the umask is.
  if (::fchmod(fd, mode) != 0) {
    ::close(fd);
    fail("chmod");
  }
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      fail("write");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("fsync");
  }
  if (::close(fd) != 0) fail("close");
  if (::rename(temporary.c_str(), path.c_str()) != 0) fail("rename");
}

}  // namespace

CertificatePair generateSelfSigned(const SelfSignedSpec& spec) {
  CertificatePair pair;
  pair.key = generateKey(spec.key_type);
  X509Ptr certificate(X509_new());
  if (!certificate) failOpenSsl("X509_new");
  X509* cert = certificate.get();
  if (X509_set_version(cert, 2) != 1) failOpenSsl("version");
  setRandomSerial(cert);
  const long validity_seconds =
      static_cast<long>(std::chrono::duration_cast<std::chrono::seconds>(spec.validity).count());
  if (X509_gmtime_adj(X509_getm_notBefore(cert), -3600) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert), validity_seconds) == nullptr) {
    failOpenSsl("validity");
  }
  X509_NAME* name = X509_get_subject_name(cert);
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(spec.common_name.c_str()),
                                 -1, -1, 0) != 1 ||
      X509_set_issuer_name(cert, name) != 1) {
    failOpenSsl("subject");
  }
  if (X509_set_pubkey(cert, pair.key.get()) != 1) failOpenSsl("public key");
  addExtension(cert, NID_basic_constraints, "critical,CA:TRUE");
  addExtension(cert, NID_key_usage,
               spec.key_type == KeyType::kRsa2048
                   ? "critical,digitalSignature,keyEncipherment,keyCertSign"
                   : "critical,digitalSignature,keyCertSign");
  addExtension(cert, NID_ext_key_usage, "serverAuth,clientAuth");
  addExtension(cert, NID_subject_key_identifier, "hash");
  const std::string alt_names = subjectAltNames(spec);
  if (!alt_names.empty()) addExtension(cert, NID_subject_alt_name, alt_names);
  if (X509_sign(cert, pair.key.get(), EVP_sha256()) <= 0) failOpenSsl("signing");
  pair.chain.push_back(std::move(certificate));
  return pair;
}

void writeCertificatePair(const CertificatePair& pair, const std::string& cert_file,
                          const std::string& key_file) {
  // Key first: a watcher that sees the new certificate then also finds its key.
  writeFileAtomically(key_file, privateKeyPem(pair.key.get()), 0600);
  std::string chain_pem;
  for (const X509Ptr& certificate : pair.chain) chain_pem += certificatePem(certificate.get());
  writeFileAtomically(cert_file, chain_pem, 0644);
}

CertificatePaths ensureSelfSignedCertificate(const std::string& cert_dir) {
  const std::filesystem::path dir(cert_dir);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw std::runtime_error("cert_dir \"" + cert_dir + "\": cannot create: " + error.message());
  }
  CertificatePaths paths{(dir / "apiserver.crt").string(), (dir / "apiserver.key").string()};
  if (std::filesystem::exists(paths.cert_file, error) &&
      std::filesystem::exists(paths.key_file, error)) {
    try {
      const CertificatePair existing = loadCertificatePair(paths.cert_file, paths.key_file);
      if (isCurrentlyValid(existing.chain.front().get())) return paths;
      SPDLOG_INFO("self-signed certificate {} has expired; generating a new one", paths.cert_file);
    } catch (const std::runtime_error& e) {
      SPDLOG_WARN("ignoring unusable self-signed certificate: {}; generating a new one", e.what());
    }
  }
  SelfSignedSpec spec;
  spec.common_name = "localhost@" + std::to_string(std::time(nullptr));
  writeCertificatePair(generateSelfSigned(spec), paths.cert_file, paths.key_file);
  SPDLOG_INFO("generated self-signed serving certificate {}", paths.cert_file);
  return paths;
}

}  // namespace metrics_adapter::server
