#include "metrics_adapter/net/http_call.h"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "metrics_adapter/net/http_client.h"
#include "unit/net/deflate_text.h"
#include "unit/net/fake_http_server.h"
#include "unit/net/test_support.h"

namespace metrics_adapter::net {
namespace {

using std::chrono::milliseconds;
using testing::FakeHttpServer;
using testing::Reply;

// Carries the failure HttpCall reported, so tests see exactly what the hook received.
struct Reported : std::runtime_error {
  explicit Reported(CallFailure f) : std::runtime_error(f.cause), failure(std::move(f)) {}
  CallFailure failure;
};

CallContext contextFor(unsigned short port, milliseconds budget,
                       std::shared_ptr<CallCanceller> canceller = nullptr) {
  return CallContext{
      "127.0.0.1",
      std::to_string(port),
      std::chrono::steady_clock::now() + budget,
      "(hint)",
      [](const CallFailure& failure) { return std::make_exception_ptr(Reported(failure)); },
      std::move(canceller)};
}

std::unique_ptr<HttpClient> clientFor(const std::string& origin) {
  HttpClientSettings settings;
  settings.origin = origin;
  settings.timeout = milliseconds(10000);
  return makeHttpClient(settings);
}

// The failure `call` reported.
template <typename Call>
CallFailure failureOf(Call&& call) {
  const auto reported = testing::thrown<Reported>(call);
  return reported ? reported->failure : CallFailure{};
}

TEST(HttpCallTest, ReadsTheWholeBodyOrStopsAtTheLimit) {
  FakeHttpServer server(testing::answering(testing::jsonReply("0123456789")));
  const auto client = clientFor(server.url());
  {
    HttpCall call(*client, HttpRequest{}, contextFor(server.port(), milliseconds(10000)));
    EXPECT_EQ(call.status(), 200);
    EXPECT_EQ(call.contentLength(), 10u);
    const BodyText body = readBody(call, 10);
    EXPECT_TRUE(body.complete);
    EXPECT_EQ(body.bytes, "0123456789");
  }
  HttpCall call(*client, HttpRequest{}, contextFor(server.port(), milliseconds(10000)));
  const BodyText body = readBody(call, 9);
  EXPECT_FALSE(body.complete);
  EXPECT_EQ(body.bytes, "012345678");
}

TEST(HttpCallTest, AGzippedAnswerIsReadInflated) {
  for (const char* coding : {"gzip", "X-Gzip ", " GZIP"}) {
    // Two gzip members one after another, made by zlib, not by the decoder under test.
    Reply reply =
        testing::jsonReply(testing::deflateText("hello, ") + testing::deflateText("gzip"));
    reply.headers = {{"Content-Encoding", coding}};
    FakeHttpServer server(testing::answering(reply));
    const auto client = clientFor(server.url());
    HttpCall call(*client, HttpRequest{}, contextFor(server.port(), milliseconds(10000)));
    EXPECT_EQ(readBody(call, 100).bytes, "hello, gzip") << coding;
  }
  // Nothing at all is an empty body, whatever the header says.
  Reply empty = testing::jsonReply("");
  empty.headers = {{"Content-Encoding", "gzip"}};
  FakeHttpServer server(testing::answering(empty));
  const auto client = clientFor(server.url());
  HttpCall call(*client, HttpRequest{}, contextFor(server.port(), milliseconds(10000)));
  EXPECT_EQ(readBody(call, 100).bytes, "");
}

TEST(HttpCallTest, NoAnswerBeforeTheDeadlineIsATimeoutWithoutStatus) {
  Reply hang;
  hang.mode = Reply::Mode::kHang;
  FakeHttpServer server(testing::answering(hang));
  const auto client = clientFor(server.url());
  const CallFailure failure = failureOf(
      [&] { HttpCall call(*client, HttpRequest{}, contextFor(server.port(), milliseconds(300))); });
  EXPECT_EQ(failure.kind, CallFailure::Kind::kTimeout);
  EXPECT_EQ(failure.status, 0);
}

TEST(HttpCallTest, ABodyThatStallsTimesOutWithTheStatus) {
  Reply stall = testing::jsonReply("{\"partial\":");
  stall.status = 202;
  stall.mode = Reply::Mode::kStallMidBody;
  FakeHttpServer server(testing::answering(stall));
  const auto client = clientFor(server.url());
  HttpCall call(*client, HttpRequest{}, contextFor(server.port(), milliseconds(300)));
  const CallFailure failure = failureOf([&] { readBody(call, 1 << 20); });
  EXPECT_EQ(failure.kind, CallFailure::Kind::kTimeout);
  EXPECT_EQ(failure.status, 202);
}

TEST(HttpCallTest, RefusedConnectionsAreUnreachableInTheSystemsWords) {
  const unsigned short port = testing::unusedPort();
  const auto client = clientFor("http://127.0.0.1:" + std::to_string(port));
  const CallFailure failure = failureOf(
      [&] { HttpCall call(*client, HttpRequest{}, contextFor(port, milliseconds(10000))); });
  EXPECT_EQ(failure.kind, CallFailure::Kind::kUnreachable);
  EXPECT_EQ(failure.cause, "Connection refused");
}

// Far beyond any test's runtime: a cancelled call that waited for it would hang the test.
constexpr milliseconds kLongDeadline{120000};
const std::string kCancelled = "the call was cancelled: the adapter is shutting down";

TEST(HttpCallTest, CancelAllEndsACallWaitingForItsAnswer) {
  Reply hang;
  hang.mode = Reply::Mode::kHang;
  FakeHttpServer server(testing::answering(hang));
  const auto client = clientFor(server.url());
  auto canceller = std::make_shared<CallCanceller>();
  std::thread cancel([&] {
    while (server.requests().empty()) std::this_thread::sleep_for(milliseconds(10));
    canceller->cancelAll();
  });
  const CallFailure failure = failureOf([&] {
    HttpCall call(*client, HttpRequest{}, contextFor(server.port(), kLongDeadline, canceller));
  });
  cancel.join();
  EXPECT_EQ(failure.kind, CallFailure::Kind::kUnreachable);
  EXPECT_EQ(failure.cause, kCancelled);
}

TEST(HttpCallTest, CancelAllEndsACallReadingAStalledBody) {
  Reply stall = testing::jsonReply("{\"partial\":");
  stall.mode = Reply::Mode::kStallMidBody;
  FakeHttpServer server(testing::answering(stall));
  const auto client = clientFor(server.url());
  auto canceller = std::make_shared<CallCanceller>();
  HttpCall call(*client, HttpRequest{}, contextFor(server.port(), kLongDeadline, canceller));
  std::thread cancel([&] { canceller->cancelAll(); });
  const CallFailure failure = failureOf([&] { readBody(call, 1 << 20); });
  cancel.join();
  EXPECT_EQ(failure.kind, CallFailure::Kind::kUnreachable);
  EXPECT_EQ(failure.cause, kCancelled);
}

TEST(HttpCallTest, CallsStartedAfterCancelAllFailWithoutBeingSent) {
  FakeHttpServer server(testing::answering(testing::jsonReply("{}")));
  const auto client = clientFor(server.url());
  auto canceller = std::make_shared<CallCanceller>();
  canceller->cancelAll();
  EXPECT_TRUE(canceller->cancelled());
  const CallFailure failure = failureOf([&] {
    HttpCall call(*client, HttpRequest{}, contextFor(server.port(), kLongDeadline, canceller));
  });
  EXPECT_EQ(failure.kind, CallFailure::Kind::kUnreachable);
  EXPECT_EQ(failure.cause, kCancelled);
  EXPECT_TRUE(server.requests().empty());
}

}  // namespace
}  // namespace metrics_adapter::net
