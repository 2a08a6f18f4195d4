#include "metrics_adapter/kube/kube_client.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kube/api_answer.h"
#include "metrics_adapter/net/base64.h"
#include "unit/net/fake_http_server.h"
#include "unit/net/scoped_env.h"
#include "unit/net/test_certificates.h"
#include "unit/net/test_support.h"

namespace metrics_adapter::kube {
namespace {

using net::testing::answering;
using net::testing::FakeHttpServer;
using net::testing::jsonReply;
using net::testing::RecordedRequest;
using net::testing::Reply;
using net::testing::ScopedEnv;
using net::testing::ServerTls;
using net::testing::TempDir;
using net::testing::TestPki;
using std::chrono::milliseconds;

constexpr milliseconds kGenerous{10000};  // calls that must succeed; never reached
const std::string kMetadataAccept =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

KubeClientOptions optionsFor(const FakeHttpServer& server) {
  KubeClientOptions options;
  options.server = server.url();
  options.timeout = kGenerous;
  options.source = "test";
  return options;
}

// The KubeError `call` throws.
template <typename Call>
KubeError errorOf(Call&& call) {
  return net::testing::thrown<KubeError>(call).value_or(KubeError(-1, "nothing thrown"));
}

class KubeClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = new TestPki(net::testing::makeTestPki("metrics-adapter-client"));
    other_ = new TestPki(net::testing::makeTestPki());
  }
  static void TearDownTestSuite() {
    delete pki_;
    delete other_;
  }
  std::string write(const std::string& name, const std::string& content) {
    return dir_.write(name, content);
  }

  // A TLS server with pki_'s certificate; with `client_ca` it requires a client certificate.
  static ServerTls serverTls(const std::string& client_ca = "") {
    return ServerTls{pki_->server_cert, pki_->server_key, client_ca};
  }

  static inline TestPki* pki_ = nullptr;
  static inline TestPki* other_ = nullptr;
  TempDir dir_;
};

TEST_F(KubeClientTest, GetSendsAcceptUserAgentAndTokenAndParsesTheAnswer) {
  FakeHttpServer server(answering(jsonReply(R"({"kind":"PartialObjectMetadataList","items":[]})")));
  KubeClientOptions options = optionsFor(server);
  options.token = "static-token";
  KubeClient client(options);
  const nlohmann::json answer = client.get(
      "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb", kMetadataAccept, kGenerous);
  EXPECT_EQ(answer["kind"], "PartialObjectMetadataList");
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].target, "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb");
  EXPECT_EQ(requests[0].header("accept"), kMetadataAccept);
  EXPECT_EQ(requests[0].header("user-agent"), "metrics-adapter");
  EXPECT_EQ(requests[0].header("authorization"), "Bearer static-token");
}

TEST_F(KubeClientTest, WithoutATokenNoAuthorizationIsSentAndThePathPrefixIsKept) {
  FakeHttpServer server(answering(jsonReply("{}")));
  KubeClientOptions options = optionsFor(server);
  options.server += "/k8s/clusters/c-1/";
  KubeClient client(options);
  client.get("/version", "application/json", kGenerous);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].target, "/k8s/clusters/c-1/version");
  EXPECT_EQ(requests[0].headers.count("authorization"), 0u);
}

TEST_F(KubeClientTest, RotatedTokenFilesArePickedUpAndWinOverAStaticToken) {
  FakeHttpServer server(answering(jsonReply("{}")));
  KubeClientOptions options = optionsFor(server);
  options.token = "static-token";
  options.token_file = write("token", "first-token\n");
  options.token_recheck_interval = milliseconds(0);
  KubeClient client(options);
  client.get("/api", "application/json", kGenerous);
  write("token", "  second-token\n");
  client.get("/api", "application/json", kGenerous);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].header("authorization"), "Bearer first-token");
  EXPECT_EQ(requests[1].header("authorization"), "Bearer second-token");
}

TEST_F(KubeClientTest, PostSendsTheJsonBodyAndReturnsTheAnswer) {
  // Echoes the request body, as the API server returns a review with the spec it was given.
  FakeHttpServer server(
      [](const RecordedRequest& request) { return jsonReply(request.body, 201); });
  KubeClient client(optionsFor(server));
  const nlohmann::json review = {
      {"apiVersion", "authentication.k8s.io/v1"},
      {"kind", "TokenReview"},
      {"spec", {{"token", "abc\"def"}, {"audiences", {"x", "\xC3\xA9"}}}}};
  const nlohmann::json answer =
      client.post("/apis/authentication.k8s.io/v1/tokenreviews", review, kGenerous);
  EXPECT_EQ(answer, review);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/apis/authentication.k8s.io/v1/tokenreviews");
  EXPECT_EQ(requests[0].header("content-type"), "application/json");
  EXPECT_EQ(requests[0].header("accept"), "application/json");
  EXPECT_EQ(nlohmann::json::parse(requests[0].body), review);
}

TEST_F(KubeClientTest, ErrorAnswersCarryTheStatusAndItsMessage) {
  const std::string forbidden =
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
      R"("message":"pods is forbidden: User \"system:serviceaccount:x:y\" cannot list resource )"
      R"(\"pods\" in API group \"\" at the cluster scope","reason":"Forbidden",)"
      R"("details":{"kind":"pods"},"code":403})";
  struct Case {
    int status;
    std::string body;
    std::string expected;
  };
  const Case cases[] = {
      {403, forbidden,
       "Kubernetes API answered GET /api/v1/pods with HTTP 403: pods is forbidden: User "
       "\"system:serviceaccount:x:y\" cannot list resource \"pods\" in API group \"\" at the "
       "cluster scope"},
      {429, R"({"kind":"Status","message":"Too many requests, please try again later."})",
       "Kubernetes API answered GET /api/v1/pods with HTTP 429: Too many requests, please try "
       "again later."},
      {503, "upstream connect error\r\nor disconnect/reset before headers",
       "Kubernetes API answered GET /api/v1/pods with HTTP 503: upstream connect error or "
       "disconnect/reset before headers"},
      {404, "", "Kubernetes API answered GET /api/v1/pods with HTTP 404"},
  };
  for (const auto& c : cases) {
    FakeHttpServer server(answering(jsonReply(c.body, c.status)));
    KubeClient client(optionsFor(server));
    const KubeError error =
        errorOf([&] { client.get("/api/v1/pods?limit=500", "application/json", kGenerous); });
    EXPECT_EQ(error.httpStatus(), c.status);
    EXPECT_FALSE(error.timedOut());
    EXPECT_EQ(std::string(error.what()), c.expected);
  }
}

TEST_F(KubeClientTest, ThrottledAnswersCarryTheirRetryAfter) {
  struct Case {
    int status;
    std::string retry_after;
    std::chrono::seconds expected;
  };
  const Case cases[] = {
      {429, "3", std::chrono::seconds(3)},      // throttled
      {503, "1", std::chrono::seconds(1)},      // unavailable
      {429, "", std::chrono::seconds(0)},       // no header
      {429, "3600", std::chrono::seconds(60)},  // capped
      {403, "5", std::chrono::seconds(0)},      // only throttling and server errors ask to wait
  };
  for (const auto& c : cases) {
    Reply reply = jsonReply(R"({"kind":"Status","message":"slow down"})", c.status);
    if (!c.retry_after.empty()) reply.headers.emplace_back("Retry-After", c.retry_after);
    FakeHttpServer server(answering(reply));
    KubeClient client(optionsFor(server));
    const KubeError error =
        errorOf([&] { client.get("/api/v1/pods?limit=500", "application/json", kGenerous); });
    EXPECT_EQ(error.httpStatus(), c.status);
    EXPECT_EQ(error.retryAfter(), c.expected) << c.status << " " << c.retry_after;
  }
}

TEST(ParseRetryAfterTest, WholeSecondsOnlyCapped) {
  using std::chrono::seconds;
  const std::pair<std::string, seconds> cases[] = {
      {"0", seconds(0)},
      {"7", seconds(7)},
      {" 7 ", seconds(7)},
      {"120", seconds(30)},
      {"99999999999999999999999", seconds(30)},
      {"-1", seconds(0)},
      {"1.5", seconds(0)},
      {"Wed, 21 Oct 2015 07:28:00 GMT", seconds(0)},
      {"", seconds(0)},
  };
  for (const auto& [text, expected] : cases) {
    EXPECT_EQ(parseRetryAfter(text, seconds(30)), expected) << '"' << text << '"';
  }
}

TEST(KubeErrorForAnswerTest, StatusMessageOrAShortPrefixOfTheBody) {
  struct Case {
    const char* label;
    std::string body;
    std::string expected;  // after "Kubernetes API answered POST /x with HTTP 500"
  };
  const Case cases[] = {
      {"a Status without message falls back to its reason",
       R"({"kind":"Status","reason":"InternalError"})", ": InternalError"},
      {"JSON that is not a Status is quoted", R"({"kind":"Pod","message":"m"})",
       R"(: {"kind":"Pod","message":"m"})"},
      {"a non-string message is ignored", R"({"kind":"Status","message":7})",
       R"(: {"kind":"Status","message":7})"},
      {"long bodies are cut to 200 bytes", std::string(300, 'x'),
       ": " + std::string(200, 'x') + "..."},
      {"line breaks become spaces", "<html>\n<b>oops</b>\n</html>\n",
       ": <html> <b>oops</b> </html>"},
  };
  for (const auto& c : cases) {
    const KubeError error = errorForAnswer(500, c.body, "POST /x");
    EXPECT_EQ(error.httpStatus(), 500) << c.label;
    EXPECT_EQ(std::string(error.what()),
              "Kubernetes API answered POST /x with HTTP 500" + c.expected)
        << c.label;
  }
}

TEST(KubeParseAnswerTest, MalformedOrTooDeeplyNestedJsonIsAKubeError) {
  EXPECT_EQ(parseAnswer(200, R"({"a":"[[["})", "GET /x"), nlohmann::json({{"a", "[[["}}));
  const std::string deep = std::string(300, '[') + std::string(300, ']');
  for (const std::string& body : {std::string(R"({"items":[)"), deep}) {
    try {
      parseAnswer(200, body, "GET /x");
      ADD_FAILURE() << "parsed " << body;
    } catch (const KubeError& e) {
      EXPECT_EQ(e.httpStatus(), 200);
      EXPECT_EQ(
          std::string(e.what()).rfind("cannot decode the Kubernetes API answer to GET /x: ", 0), 0u)
          << e.what();
    }
  }
}

TEST_F(KubeClientTest, AnswersLargerThanTheLimitAreRefused) {
  const std::string fits = R"({"items":[]})" + std::string(88, ' ');  // 100 bytes
  const std::string too_big = fits + " ";
  // With Content-Length (refused before reading) and chunked (counted while reading).
  for (const bool use_chunks : {false, true}) {
    FakeHttpServer server([&](const RecordedRequest& request) {
      const std::string& body = request.path() == "/big" ? too_big : fits;
      return use_chunks ? net::testing::chunkedReply(body, 30) : jsonReply(body);
    });
    KubeClientOptions options = optionsFor(server);
    options.max_response_bytes = 100;
    KubeClient client(options);
    EXPECT_NO_THROW(client.get("/fits", "application/json", kGenerous)) << use_chunks;
    const KubeError error = errorOf([&] { client.get("/big", "application/json", kGenerous); });
    EXPECT_EQ(std::string(error.what()),
              "the Kubernetes API answer to GET /big is larger than the limit of 100 bytes");
  }
}

TEST_F(KubeClientTest, RefusedConnectionsNameTheServerAndTheCause) {
  const unsigned short port = net::testing::unusedPort();
  KubeClientOptions options;
  options.server = "http://127.0.0.1:" + std::to_string(port);
  KubeClient client(options);
  const KubeError error = errorOf([&] { client.get("/api", "application/json", kGenerous); });
  EXPECT_EQ(error.httpStatus(), 0);
  EXPECT_FALSE(error.timedOut());
  // The address is internal: clients see this message in 503 answers.
  EXPECT_EQ(std::string(error.what()), "cannot reach the Kubernetes API: Connection refused");
}

TEST_F(KubeClientTest, HungServerCannotHoldACallPastItsDeadline) {
  Reply hang;
  hang.mode = Reply::Mode::kHang;
  FakeHttpServer server(answering(hang));
  KubeClient client(optionsFor(server));
  const KubeError get_error =
      errorOf([&] { client.get("/api", "application/json", milliseconds(300)); });
  EXPECT_TRUE(get_error.timedOut());
  EXPECT_EQ(get_error.httpStatus(), 0);
  EXPECT_EQ(std::string(get_error.what()), "Kubernetes API did not answer within 300ms");
  const KubeError post_error = errorOf([&] { client.post("/x", {}, milliseconds(300)); });
  EXPECT_TRUE(post_error.timedOut());
}

TEST_F(KubeClientTest, TheClientTimeoutCapsLongerCallTimeouts) {
  Reply stall = jsonReply(R"({"items":[)");
  stall.mode = Reply::Mode::kStallMidBody;
  FakeHttpServer server(answering(stall));
  KubeClientOptions options = optionsFor(server);
  options.timeout = milliseconds(300);
  KubeClient client(options);
  const KubeError error = errorOf([&] { client.get("/api", "application/json", kGenerous); });
  EXPECT_TRUE(error.timedOut());
  EXPECT_EQ(std::string(error.what()), "Kubernetes API did not answer within 300ms");
}

TEST_F(KubeClientTest, TlsWithCaDataAndAClientCertificateTheServerRequires) {
  FakeHttpServer server(answering(jsonReply(R"({"kind":"APIVersions"})")),
                        serverTls(pki_->ca_cert));
  KubeClientOptions from_data = optionsFor(server);
  from_data.ca_data = pki_->ca_cert;
  from_data.client_cert_data = pki_->client_cert;
  from_data.client_key_data = pki_->client_key;
  KubeClientOptions from_files = optionsFor(server);
  from_files.ca_file = write("ca.crt", pki_->ca_cert);
  from_files.client_cert_file = write("client.crt", pki_->client_cert);
  from_files.client_key_file = write("client.key", pki_->client_key);
  for (const auto* options : {&from_data, &from_files}) {
    KubeClient client(*options);
    EXPECT_EQ(client.get("/api", "application/json", kGenerous)["kind"], "APIVersions");
  }
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  for (const auto& request : requests) {
    EXPECT_EQ(request.client_certificate_subject, "/CN=metrics-adapter-client");
  }

  KubeClientOptions anonymous = from_data;
  anonymous.client_cert_data.clear();
  anonymous.client_key_data.clear();
  KubeClient refused(anonymous);
  EXPECT_EQ(errorOf([&] { refused.get("/api", "application/json", kGenerous); }).httpStatus(), 0);
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST_F(KubeClientTest, AGivenCaIsTheOnlyTrustTheSystemRootsServeWithoutOne) {
  FakeHttpServer server(answering(jsonReply("{}")), serverTls());
  // OpenSSL's default verify paths honour SSL_CERT_FILE: here pki_'s CA is a "system root".
  const std::string roots = write("roots.pem", pki_->ca_cert);
  const ScopedEnv system_roots("SSL_CERT_FILE", roots.c_str());
  {
    KubeClient client(optionsFor(server));
    EXPECT_NO_THROW(client.get("/api", "application/json", kGenerous));
  }
  KubeClientOptions options = optionsFor(server);
  options.ca_data = other_->ca_cert;
  KubeClient client(options);
  const KubeError error = errorOf([&] { client.get("/api", "application/json", kGenerous); });
  EXPECT_EQ(error.httpStatus(), 0);
  EXPECT_EQ(
      std::string(error.what()).rfind("cannot reach the Kubernetes API: TLS handshake failed", 0),
      0u)
      << error.what();
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST_F(KubeClientTest, InsecureSkipTlsVerifyAcceptsAnyServerCertificate) {
  FakeHttpServer server(answering(jsonReply(R"({"ok":true})")), serverTls());
  KubeClientOptions options = optionsFor(server);
  options.insecure_skip_tls_verify = true;
  KubeClient client(options);
  EXPECT_EQ(client.get("/api", "application/json", kGenerous)["ok"], true);
}

TEST_F(KubeClientTest, InClusterOptionsReachTheApiWithTheServiceAccount) {
  FakeHttpServer server(answering(jsonReply("{}")), serverTls());
  write("token", "service-account-token\n");
  write("ca.crt", pki_->ca_cert);
  const std::string port = std::to_string(server.port());
  const ScopedEnv host_env("KUBERNETES_SERVICE_HOST", "127.0.0.1");
  const ScopedEnv port_env("KUBERNETES_SERVICE_PORT", port.c_str());
  const std::optional<KubeClientOptions> options = inClusterOptions(dir_.path().string());
  ASSERT_TRUE(options.has_value());
  KubeClient client(*options);
  client.get("/api", "application/json", kGenerous);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].header("authorization"), "Bearer service-account-token");
}

TEST_F(KubeClientTest, KubeconfigWithEmbeddedCredentialsWorksEndToEnd) {
  FakeHttpServer server(answering(jsonReply("{}")), serverTls(pki_->ca_cert));
  const auto base64 = [](const std::string& text) { return net::encodeBase64(text); };
  const std::string path = write(
      "config",
      "current-context: c\n"
      "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
      "clusters: [{name: k, cluster: {server: '" +
          server.url() + "', certificate-authority-data: " + base64(pki_->ca_cert) +
          "}}]\n"
          "users: [{name: u, user: {client-certificate-data: " +
          base64(pki_->client_cert) + ", client-key-data: " + base64(pki_->client_key) + "}}]\n");
  KubeClient client(loadKubeconfig(path));
  client.get("/api", "application/json", kGenerous);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].client_certificate_subject, "/CN=metrics-adapter-client");
}

TEST_F(KubeClientTest, UnusableOptionsAreRejectedAtConstruction) {
  struct Case {
    const char* label;
    KubeClientOptions options;
  };
  const auto with = [](auto&& change) {
    KubeClientOptions options;
    options.server = "https://127.0.0.1:6443";
    options.source = "kc";
    change(options);
    return options;
  };
  const std::string missing = dir_.file("missing");
  const Case cases[] = {
      {"no server", with([](KubeClientOptions& o) { o.server.clear(); })},
      {"not http(s)", with([](KubeClientOptions& o) { o.server = "ftp://h"; })},
      {"not a URL", with([](KubeClientOptions& o) { o.server = "https://h:notaport"; })},
      {"credentials in the URL", with([](KubeClientOptions& o) { o.server = "https://u:p@h"; })},
      {"zero timeout", with([](KubeClientOptions& o) { o.timeout = milliseconds(0); })},
      {"CA file and data", with([&](KubeClientOptions& o) {
         o.ca_file = write("ca.crt", pki_->ca_cert);
         o.ca_data = pki_->ca_cert;
       })},
      {"insecure with a CA", with([&](KubeClientOptions& o) {
         o.ca_data = pki_->ca_cert;
         o.insecure_skip_tls_verify = true;
       })},
      {"CA data not PEM", with([](KubeClientOptions& o) { o.ca_data = "not pem"; })},
      {"missing CA file", with([&](KubeClientOptions& o) { o.ca_file = missing; })},
      {"certificate without key",
       with([](KubeClientOptions& o) { o.client_cert_data = pki_->client_cert; })},
      {"key of another certificate", with([](KubeClientOptions& o) {
         o.client_cert_data = pki_->client_cert;
         o.client_key_data = other_->client_key;
       })},
      {"missing token file", with([&](KubeClientOptions& o) { o.token_file = missing; })},
      {"token with a line break", with([](KubeClientOptions& o) { o.token = "a\r\nX-Evil: 1"; })},
      {"basic authentication", with([](KubeClientOptions& o) {
         o.username = "admin";
         o.password = "secret";
       })},
  };
  for (const auto& c : cases) {
    try {
      KubeClient client(c.options);
      ADD_FAILURE() << c.label << ": accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("Kubernetes API client (kc): ", 0), 0u)
          << c.label << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace metrics_adapter::kube
