#include "server/certificate.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <ctime>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>

#include "server/self_signed.h"
#include "test_support.h"

namespace metrics_adapter::server {
namespace {
using testing::serialHex;
using testing::TempDir;

std::set<std::string> subjectAltNames(X509* certificate) {
  std::set<std::string> names;
  auto* general_names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; general_names != nullptr && i < sk_GENERAL_NAME_num(general_names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(general_names, i);
    if (name->type == GEN_DNS) {
      names.insert("DNS:" + std::string(reinterpret_cast<const char*>(
                                ASN1_STRING_get0_data(name->d.dNSName))));
    } else if (name->type == GEN_IPADD) {
      const int length = ASN1_STRING_length(name->d.iPAddress);
      char text[INET6_ADDRSTRLEN] = {};
      ::inet_ntop(length == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(name->d.iPAddress), text,
                  sizeof(text));
      names.insert(std::string("IP:") + text);
    }
  }
  GENERAL_NAMES_free(general_names);
  return names;
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::string expectLoadError(const std::string& cert_file, const std::string& key_file) {
  try {
    loadCertificatePair(cert_file, key_file);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "loading succeeded";
  return {};
}

TEST(SelfSignedTest, GeneratesAnEcdsaLocalhostCertificateIntoANewDirectory) {
  TempDir dir;
  const std::string cert_dir = dir.file("a/b/certificates");
  const CertificatePaths paths = ensureSelfSignedCertificate(cert_dir);
  EXPECT_EQ(paths.cert_file, cert_dir + "/apiserver.crt");
  EXPECT_EQ(paths.key_file, cert_dir + "/apiserver.key");

  struct stat key_info {};
  ASSERT_EQ(::stat(paths.key_file.c_str(), &key_info), 0);
  EXPECT_EQ(key_info.st_mode & 0777, 0600u);

  const CertificatePair pair = loadCertificatePair(paths.cert_file, paths.key_file);
  X509* certificate = pair.chain.front().get();
  EXPECT_EQ(subjectAltNames(certificate),
            (std::set<std::string>{"DNS:localhost", "IP:127.0.0.1", "IP:::1"}));
  EXPECT_EQ(EVP_PKEY_get_base_id(pair.key.get()), EVP_PKEY_EC);
  char curve[64] = {};
  ASSERT_EQ(EVP_PKEY_get_utf8_string_param(pair.key.get(), "group", curve, sizeof(curve), nullptr),
            1);
  EXPECT_STREQ(curve, "prime256v1");

  // Valid now, and for one year: expired 366 days from now but not 364.
  EXPECT_TRUE(isCurrentlyValid(certificate));
  const std::time_t now = std::time(nullptr);
  std::time_t in_364_days = now + 364 * 86400;
  std::time_t in_366_days = now + 366 * 86400;
  EXPECT_GT(X509_cmp_time(X509_get0_notAfter(certificate), &in_364_days), 0);
  EXPECT_LT(X509_cmp_time(X509_get0_notAfter(certificate), &in_366_days), 0);
}

TEST(SelfSignedTest, ReusesAValidPair) {
  TempDir dir;
  const CertificatePaths first = ensureSelfSignedCertificate(dir.path().string());
  const std::string serial =
      serialHex(loadCertificatePair(first.cert_file, first.key_file).chain[0].get());
  const CertificatePaths second = ensureSelfSignedCertificate(dir.path().string());
  EXPECT_EQ(serialHex(loadCertificatePair(second.cert_file, second.key_file).chain[0].get()),
            serial);
}

TEST(SelfSignedTest, ReplacesAnUnusablePair) {
  TempDir dir;
  const CertificatePaths first = ensureSelfSignedCertificate(dir.path().string());
  const std::string serial =
      serialHex(loadCertificatePair(first.cert_file, first.key_file).chain[0].get());
  writeText(first.key_file, "not a key");
  const CertificatePaths second = ensureSelfSignedCertificate(dir.path().string());
  const CertificatePair replaced = loadCertificatePair(second.cert_file, second.key_file);
  EXPECT_NE(serialHex(replaced.chain[0].get()), serial);
}

TEST(SelfSignedTest, ReplacesAnExpiredPair) {
  TempDir dir;
  SelfSignedSpec spec;
  spec.validity = std::chrono::hours(-2);  // notAfter before notBefore (now - 1h): expired
  const CertificatePair expired = generateSelfSigned(spec);
  const std::string cert_file = dir.file("apiserver.crt");
  writeCertificatePair(expired, cert_file, dir.file("apiserver.key"));
  ensureSelfSignedCertificate(dir.path().string());
  const CertificatePair now = loadCertificatePair(cert_file, dir.file("apiserver.key"));
  EXPECT_NE(serialHex(now.chain[0].get()), serialHex(expired.chain[0].get()));
  EXPECT_TRUE(isCurrentlyValid(now.chain[0].get()));
}

TEST(CertificateLoadTest, LoadsRsaPairs) {
  TempDir dir;
  SelfSignedSpec spec;
  spec.key_type = KeyType::kRsa2048;
  writeCertificatePair(generateSelfSigned(spec), dir.file("rsa.crt"), dir.file("rsa.key"));
  const CertificatePair pair = loadCertificatePair(dir.file("rsa.crt"), dir.file("rsa.key"));
  EXPECT_EQ(EVP_PKEY_get_base_id(pair.key.get()), EVP_PKEY_RSA);
}

TEST(CertificateLoadTest, MismatchedKeyIsAClearError) {
  TempDir dir;
  writeCertificatePair(generateSelfSigned({}), dir.file("a.crt"), dir.file("a.key"));
  writeCertificatePair(generateSelfSigned({}), dir.file("b.crt"), dir.file("b.key"));
  const std::string error = expectLoadError(dir.file("a.crt"), dir.file("b.key"));
  EXPECT_NE(error.find("does not match"), std::string::npos) << error;
  EXPECT_NE(error.find(dir.file("b.key")), std::string::npos) << error;
}

TEST(CertificateLoadTest, ErrorsNameTheFile) {
  TempDir dir;
  writeCertificatePair(generateSelfSigned({}), dir.file("ok.crt"), dir.file("ok.key"));
  writeText(dir.file("empty.crt"), "");
  writeText(dir.file("garbage.key"),
            "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n");

  std::string error = expectLoadError(dir.file("missing.crt"), dir.file("ok.key"));
  EXPECT_NE(error.find("missing.crt"), std::string::npos) << error;
  error = expectLoadError(dir.file("empty.crt"), dir.file("ok.key"));
  EXPECT_NE(error.find("empty.crt\": no PEM certificate"), std::string::npos) << error;
  error = expectLoadError(dir.file("ok.crt"), dir.file("garbage.key"));
  EXPECT_NE(error.find("garbage.key"), std::string::npos) << error;
}

}  // namespace
}  // namespace metrics_adapter::server
