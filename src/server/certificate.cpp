#include "server/certificate.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace metrics_adapter::server {
namespace {

struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

// Stops OpenSSL from asking for a pass phrase on the terminal.
int refusePassword(char*, int, int, void*) { return 0; }

BioPtr openFile(const std::string& path, const char* what) {
  BioPtr bio(BIO_new_file(path.c_str(), "r"));
  if (!bio) {
    const int error = errno;
    ERR_clear_error();
    throw std::runtime_error(std::string(what) + " \"" + path +
                             "\": cannot open: " + std::strerror(error));
  }
  return bio;
}

std::string bioContents(BIO* bio) {
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio, &data);
  return length > 0 ? std::string(data, static_cast<std::size_t>(length)) : std::string();
}

}  // namespace

std::string takeOpenSslErrors() {
  std::string text;
  while (const unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof(buffer));
    if (!text.empty()) text += "; ";
    text += buffer;
  }
  return text.empty() ? "unknown OpenSSL error" : text;
}

CertificatePair loadCertificatePair(const std::string& cert_file, const std::string& key_file,
                                    const PairFileLabels& labels) {
  const std::string cert_label = labels.cert;
  const std::string key_label = labels.key;
  CertificatePair pair;
  ERR_clear_error();
  {
    BioPtr bio = openFile(cert_file, labels.cert);
    while (X509* certificate = PEM_read_bio_X509(bio.get(), nullptr, refusePassword, nullptr)) {
      pair.chain.emplace_back(certificate);
    }
    // Reading ends with "no start line" at the end of the file; any other error is corrupt PEM.
    const unsigned long last = ERR_peek_last_error();
    const bool clean_end = last == 0 || (ERR_GET_LIB(last) == ERR_LIB_PEM &&
                                         ERR_GET_REASON(last) == PEM_R_NO_START_LINE);
    if (!clean_end) {
      throw std::runtime_error(cert_label + " \"" + cert_file + "\": " + takeOpenSslErrors());
    }
    if (pair.chain.empty()) {
      ERR_clear_error();
      throw std::runtime_error(cert_label + " \"" + cert_file + "\": no PEM certificate found");
    }
    ERR_clear_error();
  }
  {
    BioPtr bio = openFile(key_file, labels.key);
    pair.key.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, refusePassword, nullptr));
    if (!pair.key) {
      throw std::runtime_error(
          key_label + " \"" + key_file +
          "\": no readable unencrypted PEM private key: " + takeOpenSslErrors());
    }
  }
  if (X509_check_private_key(pair.chain.front().get(), pair.key.get()) != 1) {
    ERR_clear_error();
    throw std::runtime_error(key_label + " \"" + key_file +
                             "\" does not match the certificate in " + cert_label + " \"" +
                             cert_file + "\"");
  }
  return pair;
}

bool isCurrentlyValid(X509* certificate) {
  return X509_cmp_current_time(X509_get0_notBefore(certificate)) < 0 &&
         X509_cmp_current_time(X509_get0_notAfter(certificate)) > 0;
}

std::string certificatePem(X509* certificate) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), certificate) != 1) {
    throw std::runtime_error("encoding a certificate as PEM: " + takeOpenSslErrors());
  }
  return bioContents(bio.get());
}

std::string privateKeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    throw std::runtime_error("encoding a private key as PEM: " + takeOpenSslErrors());
  }
  return bioContents(bio.get());
}

}  // namespace metrics_adapter::server
