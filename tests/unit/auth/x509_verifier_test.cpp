#include "auth/x509_verifier.h"

#include <gtest/gtest.h>

#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "unit/net/test_certificates.h"

namespace metrics_adapter::auth {
namespace {

using net::testing::issueCertificate;
using net::testing::makeAuthority;
using net::testing::TestAuthority;
using net::testing::pki_detail::CertificateSpec;

constexpr long kHour = 3600;

CertificateSpec x509ClientSpec(const std::string& common_name,
                               std::vector<std::string> organizations = {}) {
  return CertificateSpec{
      common_name, std::move(organizations), {{NID_ext_key_usage, "clientAuth"}}};
}

ChainVerification verify(const std::string& bundle, const std::vector<std::string>& chain) {
  const X509Verifier verifier(bundle);
  return verifier.verify(PeerChain(chain));
}

TEST(X509VerifierTest, AcceptsClientCertificateAndReadsCommonNameAndEveryOrganization) {
  const TestAuthority ca = makeAuthority("client-ca");
  const ChainVerification result =
      verify(ca.pem(), {issueCertificate(ca, x509ClientSpec("alice", {"devs", "ops"}))});
  ASSERT_TRUE(result.verified) << result.error;
  EXPECT_EQ(result.subject.common_name, "alice");
  EXPECT_EQ(result.subject.organizations, (std::vector<std::string>{"devs", "ops"}));
}

struct RejectionCase {
  std::string name;
  CertificateSpec spec;
};

void PrintTo(const RejectionCase& value, std::ostream* out) { *out << value.name; }

// Each leaf is signed by the trusted CA but must still be refused (docs/api-contract.md "TLS and
// client certificates": EKU clientAuth, validity checked).
class X509VerifierRejectionTest : public ::testing::TestWithParam<RejectionCase> {};

TEST_P(X509VerifierRejectionTest, RefusesLeaf) {
  const TestAuthority ca = makeAuthority("client-ca");
  const ChainVerification result = verify(ca.pem(), {issueCertificate(ca, GetParam().spec)});
  EXPECT_FALSE(result.verified);
  EXPECT_FALSE(result.error.empty());
  EXPECT_TRUE(result.subject.common_name.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Leaves, X509VerifierRejectionTest,
    ::testing::Values(
        RejectionCase{"Expired",
                      {"alice", {}, {{NID_ext_key_usage, "clientAuth"}}, -2 * kHour, -kHour}},
        RejectionCase{"NotYetValid",
                      {"alice", {}, {{NID_ext_key_usage, "clientAuth"}}, kHour, 2 * kHour}},
        RejectionCase{"ServerAuthOnly", {"alice", {}, {{NID_ext_key_usage, "serverAuth"}}}},
        RejectionCase{"CodeSigningOnly", {"alice", {}, {{NID_ext_key_usage, "codeSigning"}}}}),
    [](const ::testing::TestParamInfo<RejectionCase>& info) { return info.param.name; });

// Go treats a certificate without an extended key usage extension as valid for any usage.
TEST(X509VerifierTest, AcceptsLeafWithoutExtendedKeyUsage) {
  const TestAuthority ca = makeAuthority("client-ca");
  EXPECT_TRUE(verify(ca.pem(), {issueCertificate(ca, CertificateSpec{"alice", {}, {}})}).verified);
}

TEST(X509VerifierTest, RefusesCertificateOfAnotherAuthority) {
  const TestAuthority trusted = makeAuthority("client-ca");
  const TestAuthority other = makeAuthority("front-proxy-ca");
  EXPECT_FALSE(verify(trusted.pem(), {issueCertificate(other, x509ClientSpec("alice"))}).verified);
}

TEST(X509VerifierTest, RefusesLeafChainedToAnImpostorRootOfTheSameName) {
  const TestAuthority trusted = makeAuthority("client-ca");
  const TestAuthority impostor = makeAuthority("client-ca");
  EXPECT_FALSE(
      verify(trusted.pem(), {issueCertificate(impostor, x509ClientSpec("alice")), impostor.pem()})
          .verified);
}

TEST(X509VerifierTest, TakesIntermediatesFromThePeerChain) {
  const TestAuthority root = makeAuthority("root-ca");
  const TestAuthority intermediate = makeAuthority("intermediate-ca", &root);
  const std::string leaf = issueCertificate(intermediate, x509ClientSpec("alice"));
  const ChainVerification with = verify(root.pem(), {leaf, intermediate.pem()});
  EXPECT_TRUE(with.verified) << with.error;
  EXPECT_EQ(with.subject.common_name, "alice");
  EXPECT_FALSE(verify(root.pem(), {leaf}).verified);
}

// Go's pool makes every certificate a trust anchor, whether or not it is self-signed.
TEST(X509VerifierTest, TrustsAnIntermediateGivenAsTheBundle) {
  const TestAuthority root = makeAuthority("root-ca");
  const TestAuthority intermediate = makeAuthority("intermediate-ca", &root);
  EXPECT_TRUE(verify(intermediate.pem(), {issueCertificate(intermediate, x509ClientSpec("alice"))})
                  .verified);
}

TEST(X509VerifierTest, TrustsEveryCertificateOfTheBundle) {
  const TestAuthority first = makeAuthority("ca-1");
  const TestAuthority second = makeAuthority("ca-2");
  const std::string bundle = first.pem() + "\n" + second.pem();
  EXPECT_TRUE(verify(bundle, {issueCertificate(first, x509ClientSpec("a"))}).verified);
  EXPECT_TRUE(verify(bundle, {issueCertificate(second, x509ClientSpec("b"))}).verified);
}

TEST(X509VerifierTest, IsUsableFromSeveralThreadsAtOnce) {
  const TestAuthority ca = makeAuthority("client-ca");
  const X509Verifier verifier(ca.pem());
  const std::vector<std::string> chain = {issueCertificate(ca, x509ClientSpec("alice"))};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) EXPECT_TRUE(verifier.verify(PeerChain(chain)).verified);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

TEST(PeerChainTest, NothingPresented) {
  const PeerChain chain({});
  EXPECT_FALSE(chain.presented());
  EXPECT_FALSE(chain.usable());
}

struct UnusableChainCase {
  std::string name;
  std::vector<std::string> pem;
};

void PrintTo(const UnusableChainCase& value, std::ostream* out) { *out << value.name; }

class PeerChainUnusableTest : public ::testing::TestWithParam<UnusableChainCase> {};

TEST_P(PeerChainUnusableTest, IsPresentedButUnusableAndNeverVerifies) {
  const PeerChain chain(GetParam().pem);
  EXPECT_TRUE(chain.presented());
  EXPECT_FALSE(chain.usable());
  EXPECT_FALSE(chain.error().empty());
  const TestAuthority ca = makeAuthority("client-ca");
  EXPECT_FALSE(X509Verifier(ca.pem()).verify(chain).verified);
}

std::string validLeaf() {
  static const TestAuthority ca = makeAuthority("some-ca");
  return issueCertificate(ca, x509ClientSpec("alice"));
}

INSTANTIATE_TEST_SUITE_P(
    Chains, PeerChainUnusableTest,
    ::testing::Values(
        UnusableChainCase{"Garbage", {"garbage"}}, UnusableChainCase{"EmptyString", {""}},
        UnusableChainCase{"CorruptBase64",
                          {"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n"}},
        UnusableChainCase{"GarbageIntermediate", {validLeaf(), "garbage"}},
        UnusableChainCase{"TooLong",
                          std::vector<std::string>(PeerChain::kMaxCertificates + 1, validLeaf())},
        UnusableChainCase{"HugeCertificate",
                          {validLeaf() + std::string(PeerChain::kMaxPemBytes, 'A')}}),
    [](const ::testing::TestParamInfo<UnusableChainCase>& info) { return info.param.name; });

TEST(ParseCertificateBundleTest, BlankBundleHasNoCertificate) {
  EXPECT_TRUE(parseCertificateBundle("").empty());
  EXPECT_TRUE(parseCertificateBundle(" \n\t").empty());
}

TEST(ParseCertificateBundleTest, SkipsTextBetweenCertificates) {
  const TestAuthority first = makeAuthority("ca-1");
  const TestAuthority second = makeAuthority("ca-2");
  EXPECT_EQ(parseCertificateBundle("# first\n" + first.pem() + "comment\n" + second.pem()).size(),
            2u);
}

TEST(ParseCertificateBundleTest, RefusesBundlesWithoutUsableCertificates) {
  const TestAuthority ca = makeAuthority("ca");
  for (const std::string& bundle :
       {std::string("not a certificate"),
        std::string("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n"),
        ca.pem() + "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"}) {
    EXPECT_THROW(parseCertificateBundle(bundle), std::invalid_argument) << bundle;
    EXPECT_THROW(X509Verifier verifier(bundle), std::invalid_argument) << bundle;
  }
  EXPECT_THROW(X509Verifier verifier(""), std::invalid_argument);
}

}  // namespace
}  // namespace metrics_adapter::auth
