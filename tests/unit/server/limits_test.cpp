#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "metrics_adapter/server/https_server.h"
#include "test_support.h"

// Records the largest single allocation while enabled, to show that an oversized header is never
// buffered whole. Replaces the global scalar and array operators new and delete of this test
// binary with malloc/free so every pair matches (also under AddressSanitizer).
std::atomic<bool> g_track_allocations{false};
std::atomic<std::size_t> g_largest_allocation{0};

namespace {

void* trackedAllocate(std::size_t size) noexcept {
  if (g_track_allocations.load(std::memory_order_relaxed)) {
    std::size_t seen = g_largest_allocation.load(std::memory_order_relaxed);
    while (size > seen && !g_largest_allocation.compare_exchange_weak(seen, size)) {
    }
  }
  return std::malloc(size == 0 ? 1 : size);
}

void* allocateOrThrow(std::size_t size) {
  if (void* memory = trackedAllocate(size)) return memory;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t size) { return allocateOrThrow(size); }
void* operator new[](std::size_t size) { return allocateOrThrow(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return trackedAllocate(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return trackedAllocate(size);
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete[](void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }
void operator delete[](void* memory, std::size_t) noexcept { std::free(memory); }
void operator delete(void* memory, const std::nothrow_t&) noexcept { std::free(memory); }
void operator delete[](void* memory, const std::nothrow_t&) noexcept { std::free(memory); }

namespace metrics_adapter::server {
namespace {
using namespace testing;

std::string statusBody(int code, const std::string& reason, const std::string& message) {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")" +
         message + R"(","reason":")" + reason + R"(","code":)" + std::to_string(code) + "}";
}

// What the server told its exchange observer: "<code> <method> <target>" per answer.
class RecordingObserver : public ExchangeObserver {
 public:
  bool observe(const Exchange& exchange) override {
    std::lock_guard lock(mutex_);
    records_.push_back(std::to_string(exchange.code) + " " + std::string(exchange.method) + " " +
                       std::string(exchange.target));
    return true;
  }
  std::vector<std::string> records() const {
    std::lock_guard lock(mutex_);
    return records_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> records_;
};

class LimitsTest : public ::testing::Test {
 protected:
  LimitsTest() : options_(testOptions(dir_)) {}

  // Requests to /block wait until release_ opens; others answer "fast" at once.
  void start() {
    server_ = startServer(
        options_,
        [this](const HttpRequest& request) {
          ++calls_;
          if (request.target == "/block") {
            ++blocked_;
            release_.wait();
            return textResponse("late");
          }
          if (request.target == "/throw") throw std::runtime_error("secret detail");
          if (request.target.rfind("/echo", 0) == 0) return textResponse(request.target);
          return textResponse("fast");
        },
        observer_);
  }

  // Every answer, refused ones too, reaches the observer (for the request metrics and log).
  bool observed(const std::vector<std::string>& expected) const {
    return eventually([&] { return observer_->records() == expected; });
  }

  void TearDown() override {
    release_.open();
    server_.reset();
  }

  TempDir dir_;
  ServerOptions options_;
  Gate release_;
  std::atomic<int> calls_{0};
  std::atomic<int> blocked_{0};
  std::shared_ptr<RecordingObserver> observer_ = std::make_shared<RecordingObserver>();
  std::unique_ptr<HttpsServer> server_;
};

TEST_F(LimitsTest, HugeHeaderIsRefusedWithoutReachingTheHandler) {
  options_.max_header_bytes = 64 * 1024;
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  // A complete request: without a limit the server would read it all and answer 200.
  const std::string request =
      "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(2 << 20, 'a') + "\r\n\r\n";
  g_largest_allocation = 0;
  g_track_allocations = true;
  client.writeRaw(request);  // may fail once the server stops reading
  const auto [ec, response] = client.read();
  g_track_allocations = false;
  // The server holds at most the header limit plus one read chunk; the whole 2 MiB never.
  EXPECT_LT(g_largest_allocation, std::size_t{512 * 1024});
  if (!ec) {
    EXPECT_EQ(response.result_int(), 431u);
    EXPECT_EQ(response.body(), statusBody(431, "RequestHeaderFieldsTooLarge",
                                          "the request header is larger than the server allows"));
    EXPECT_FALSE(response.keep_alive());
  } else {
    EXPECT_NE(ec, beast::error::timeout) << "the server neither answered nor closed";
  }
  EXPECT_EQ(calls_, 0);
}

TEST_F(LimitsTest, HeaderJustOverTheLimitGets431) {
  options_.max_header_bytes = 8 * 1024;
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  Request request(http::verb::get, "/", 11);
  request.set("X-Big", std::string(9 * 1024, 'a'));
  ASSERT_FALSE(client.send(std::move(request)));
  const auto [ec, response] = client.read();
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response.result_int(), 431u);
  EXPECT_EQ(calls_, 0);
  EXPECT_TRUE(observed({"431  "}));
}

TEST_F(LimitsTest, HeaderLineAbove64KiBWithinTheLimitIsServed) {
  options_.max_header_bytes = 1 << 20;
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  // Raw bytes: Beast's client-side message type cannot even hold a field this long.
  ASSERT_FALSE(client.writeRaw(
      "GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + std::string(100 * 1024, 'a') + "\r\n\r\n"));
  const auto [ec, response] = client.read();
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response.body(), "fast");
}

TEST_F(LimitsTest, OversizedBodyGets413) {
  options_.max_body_bytes = 1024;
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  Request request(http::verb::post, "/", 11);
  request.body() = std::string(4096, 'b');
  ASSERT_FALSE(client.send(std::move(request)));
  const auto [ec, response] = client.read();
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response.result_int(), 413u);
  EXPECT_EQ(response.body(), statusBody(413, "RequestEntityTooLarge",
                                        "the request body is larger than the server allows"));
  EXPECT_FALSE(response.keep_alive());
  EXPECT_EQ(calls_, 0);
  EXPECT_TRUE(observed({"413  "}));
}

TEST_F(LimitsTest, ByDefaultABodyOver64KiBGets413) {
  start();
  TlsClient fits;
  ASSERT_FALSE(fits.connect(server_->port()));
  Request request(http::verb::post, "/", 11);
  request.body() = std::string(64 << 10, 'b');
  EXPECT_EQ(fits.roundTrip(std::move(request)).body(), "fast");
  // Refused on its announced length, before any of the body is read.
  TlsClient over;
  ASSERT_FALSE(over.connect(server_->port()));
  ASSERT_FALSE(over.writeRaw("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 65537\r\n\r\n"));
  const auto [ec, response] = over.read();
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response.result_int(), 413u);
  EXPECT_EQ(calls_, 1);
}

TEST_F(LimitsTest, OversizedChunkedBodyGets413) {
  options_.max_body_bytes = 1024;
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  const std::string chunk(800, 'c');
  ASSERT_FALSE(
      client.writeRaw("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "320\r\n" +
                      chunk + "\r\n320\r\n" + chunk + "\r\n0\r\n\r\n"));
  const auto [ec, response] = client.read();
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response.result_int(), 413u);
  EXPECT_EQ(calls_, 0);
}

TEST_F(LimitsTest, MalformedRequestGets400) {
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  ASSERT_FALSE(client.writeRaw("GET / HTTP/9.9\r\nHost: x\r\n\r\n"));
  const auto [ec, response] = client.read();
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response.result_int(), 400u);
  // A request that could not be read has no audit ID to give back (upstream's Go server answers
  // such requests before any filter runs).
  EXPECT_EQ(response.count("Audit-Id"), 0u);
  EXPECT_EQ(calls_, 0);
  EXPECT_TRUE(observed({"400  "}));
}

// A request is parsed from the bytes the idle read brought when they hold the whole header,
// and read on when they do not: every way a request can be cut is answered the same.
TEST_F(LimitsTest, RequestsCutAnywhereOrPipelinedAreAnsweredInOrder) {
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  const auto answer = [&client] {
    const auto [ec, response] = client.read();
    EXPECT_FALSE(ec) << ec.message();
    return response.body();
  };

  ASSERT_FALSE(client.writeRaw("GET /echo/cut HTTP/1.1\r\nHo"));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_FALSE(client.writeRaw("st: x\r\n\r\n"));
  EXPECT_EQ(answer(), "/echo/cut");

  ASSERT_FALSE(
      client.writeRaw("GET /echo/1 HTTP/1.1\r\nHost: x\r\n\r\n"
                      "GET /echo/2 HTTP/1.1\r\nHost: x\r\n\r\nGET /echo/3 HTT"));
  EXPECT_EQ(answer(), "/echo/1");
  EXPECT_EQ(answer(), "/echo/2");
  ASSERT_FALSE(client.writeRaw("P/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(answer(), "/echo/3");

  ASSERT_FALSE(client.writeRaw("POST /echo/body HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n"));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_FALSE(client.writeRaw("body"));
  EXPECT_EQ(answer(), "/echo/body");
  EXPECT_EQ(calls_, 5);
}

TEST_F(LimitsTest, SlowHeaderIsClosedAfterHeaderTimeout) {
  options_.header_timeout = std::chrono::seconds(1);
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  ASSERT_FALSE(client.writeRaw("GET / HTTP/1.1\r\nHost: x\r\n"));  // never finished
  EXPECT_NE(client.waitForClose(), beast::error::timeout);
  EXPECT_EQ(calls_, 0);
}

TEST_F(LimitsTest, SilentTcpClientIsClosedAfterHeaderTimeout) {
  options_.header_timeout = std::chrono::seconds(1);
  start();
  net::io_context io_context;
  beast::tcp_stream tcp(io_context);
  tcp.expires_after(TlsClient::kTimeout);
  tcp.connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), server_->port()));
  // No ClientHello is ever sent; the server must give up on the handshake by itself.
  std::array<char, 64> scratch{};
  beast::error_code result;
  tcp.async_read_some(net::buffer(scratch),
                      [&](const beast::error_code& ec, std::size_t) { result = ec; });
  io_context.run();
  EXPECT_TRUE(result);
  EXPECT_NE(result, beast::error::timeout);
}

TEST_F(LimitsTest, IdleKeepAliveConnectionIsClosed) {
  options_.idle_timeout = std::chrono::seconds(1);
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  EXPECT_EQ(client.get("/").body(), "fast");
  EXPECT_NE(client.waitForClose(), beast::error::timeout);
}

TEST_F(LimitsTest, ConnectionsBeyondTheLimitAreClosed) {
  options_.max_connections = 1;
  start();
  auto first = std::make_unique<TlsClient>();
  ASSERT_FALSE(first->connect(server_->port()));
  EXPECT_EQ(first->get("/").body(), "fast");  // accepted and counted by now
  TlsClient second;
  EXPECT_TRUE(second.connect(server_->port()));
  first.reset();
  // The slot frees once the server notices the first client left.
  EXPECT_TRUE(eventually([&] {
    TlsClient next;
    return !next.connect(server_->port());
  }));
}

TEST_F(LimitsTest, InFlightLimitAnswers429) {
  options_.max_in_flight = 2;
  options_.worker_threads = 2;
  start();
  TlsClient a, b, c;
  for (TlsClient* client : {&a, &b}) {
    ASSERT_FALSE(client->connect(server_->port()));
    ASSERT_FALSE(client->send(Request(http::verb::get, "/block", 11)));
  }
  ASSERT_TRUE(eventually([&] { return blocked_ == 2; }));
  ASSERT_FALSE(c.connect(server_->port()));
  const Response busy = c.get("/");
  EXPECT_EQ(busy.result_int(), 429u);
  EXPECT_EQ(busy["Retry-After"], "1");
  EXPECT_EQ(busy.body(),
            statusBody(429, "TooManyRequests", "Too many requests: please try again later"));
  release_.open();
  for (TlsClient* client : {&a, &b}) {
    const auto [ec, response] = client->read();
    ASSERT_FALSE(ec) << ec.message();
    EXPECT_EQ(response.body(), "late");
  }
  EXPECT_EQ(c.get("/").body(), "fast");  // capacity is back
  EXPECT_TRUE(observed({"429 GET /", "200 GET /block", "200 GET /block", "200 GET /"}));
}

TEST_F(LimitsTest, SlowHandlerGets504AndItsLateResultIsDropped) {
  options_.request_timeout = std::chrono::seconds(1);
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  const Response timed_out = client.get("/block");
  EXPECT_EQ(timed_out.result_int(), 504u);
  EXPECT_EQ(timed_out.body(),
            statusBody(504, "Timeout", "the request did not complete within the allowed duration"));
  release_.open();
  // The same connection goes on; the blocked handler's "late" never shows up.
  EXPECT_EQ(client.get("/").body(), "fast");
  EXPECT_EQ(client.get("/").body(), "fast");
  // The late result was never written, so it is not counted either.
  EXPECT_TRUE(observed({"504 GET /block", "200 GET /", "200 GET /"}));
}

TEST_F(LimitsTest, HandlerExceptionGets500WithoutDetails) {
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  const Response failed = client.get("/throw");
  EXPECT_EQ(failed.result_int(), 500u);
  EXPECT_EQ(failed[http::field::content_type], "application/json");
  EXPECT_NE(failed.body().find(R"("reason":"InternalError","code":500})"), std::string::npos)
      << failed.body();
  EXPECT_EQ(failed.body().find("secret detail"), std::string::npos);
  EXPECT_EQ(client.get("/").body(), "fast");
}

}  // namespace
}  // namespace metrics_adapter::server
