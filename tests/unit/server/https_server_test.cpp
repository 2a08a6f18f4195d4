#include "metrics_adapter/server/https_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"

namespace metrics_adapter::server {
namespace {
using namespace testing;

class HttpsServerTest : public ::testing::Test {
 protected:
  HttpsServerTest() : options_(testOptions(dir_)) {}

  void start() {
    server_ = startServer(options_, [this](const HttpRequest& request) {
      log_.add(request);
      return textResponse(request.method + " " + request.target + " " + request.body);
    });
  }

  void TearDown() override {
    release_.open();
    server_.reset();
  }

  TempDir dir_;
  ServerOptions options_;
  RequestLog log_;
  Gate release_;
  std::unique_ptr<HttpsServer> server_;
};

TEST_F(HttpsServerTest, PortZeroPicksAFreePort) {
  start();
  EXPECT_NE(server_->port(), 0);
}

TEST_F(HttpsServerTest, TwoRequestsOnOneKeepAliveConnection) {
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  const Response first =
      client.get("/apis/custom.metrics.k8s.io/v1beta2/namespaces/a/pods/%2A/m?x=1");
  EXPECT_EQ(first.result_int(), 200u);
  EXPECT_EQ(first.body(), "GET /apis/custom.metrics.k8s.io/v1beta2/namespaces/a/pods/%2A/m?x=1 ");
  EXPECT_EQ(first[http::field::content_type], "text/plain");
  EXPECT_EQ(first[http::field::content_length], std::to_string(first.body().size()));
  EXPECT_EQ(first["X-Content-Type-Options"], "nosniff");
  EXPECT_TRUE(first.keep_alive());
  const Response second = client.get("/healthz");
  EXPECT_EQ(second.body(), "GET /healthz ");

  const auto requests = log_.all();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].target, "/apis/custom.metrics.k8s.io/v1beta2/namespaces/a/pods/%2A/m?x=1");
  EXPECT_EQ(requests[0].remote_address.rfind("127.0.0.1:", 0), 0u) << requests[0].remote_address;
  EXPECT_EQ(requests[0].remote_address, requests[1].remote_address);  // same TCP connection
}

TEST_F(HttpsServerTest, RepeatedHeadersArriveAsSeparateEntries) {
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  Request request(http::verb::get, "/", 11);
  request.insert("X-Remote-User", "alice");
  request.insert("X-Remote-Group", "system:authenticated");
  request.insert("X-Remote-Group", "a,b");
  client.roundTrip(std::move(request));
  const auto requests = log_.all();
  ASSERT_EQ(requests.size(), 1u);
  std::vector<std::string> groups;
  for (const auto& [name, value] : requests[0].headers) {
    if (name == "X-Remote-Group") groups.push_back(value);
  }
  EXPECT_EQ(groups, (std::vector<std::string>{"system:authenticated", "a,b"}));
  EXPECT_EQ(requests[0].header("x-remote-user"), "alice");
}

// What the observer is told of each request's audit ID and proxy headers.
class AuditFieldsObserver : public ExchangeObserver {
 public:
  struct Seen {
    std::string audit_id;
    std::string forwarded_for;
    std::string real_ip;
  };
  bool observe(const Exchange& exchange) override {
    std::lock_guard lock(mutex_);
    seen_.push_back({std::string(exchange.audit_id), std::string(exchange.forwarded_for),
                     std::string(exchange.real_ip)});
    return true;
  }
  std::vector<Seen> seen() const {
    std::lock_guard lock(mutex_);
    return seen_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Seen> seen_;
};

TEST_F(HttpsServerTest, EveryAnswerCarriesTheAuditIdTheObserverSees) {
  auto observer = std::make_shared<AuditFieldsObserver>();
  server_ = startServer(
      options_, [](const HttpRequest&) { return textResponse("ok"); }, observer);
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  const Response fresh = client.get("/apis");
  Request asked(http::verb::get, "/apis", 11);
  asked.insert("Audit-ID", "  from-the-aggregator ");
  asked.insert("X-Forwarded-For", "192.168.0.7");
  asked.insert("X-Real-Ip", "10.0.0.9");
  const Response forwarded = client.roundTrip(std::move(asked));
  const Response next = client.get("/apis");  // nothing of the previous request stays

  const auto seen = observer->seen();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(fresh["Audit-Id"].size(), 36u);
  EXPECT_EQ(std::string(fresh["Audit-Id"]), seen[0].audit_id);
  EXPECT_EQ(std::string(forwarded["Audit-Id"]), "from-the-aggregator");
  EXPECT_EQ(seen[1].audit_id, "from-the-aggregator");
  EXPECT_EQ(seen[1].forwarded_for, "192.168.0.7");
  EXPECT_EQ(seen[1].real_ip, "10.0.0.9");
  EXPECT_EQ(next["Audit-Id"].size(), 36u);
  EXPECT_NE(next["Audit-Id"], fresh["Audit-Id"]);
  EXPECT_EQ(std::string(next["Audit-Id"]), seen[2].audit_id);
  EXPECT_EQ(seen[2].forwarded_for, "");
  EXPECT_EQ(seen[2].real_ip, "");
}

TEST_F(HttpsServerTest, RequestBodyReachesTheHandler) {
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  Request request(http::verb::post, "/echo", 11);
  request.body() = "payload";
  EXPECT_EQ(client.roundTrip(std::move(request)).body(), "POST /echo payload");
}

// The head and the body go out as two buffers of one write. Answers that fit Beast's 16 KiB
// coalescing limit go as one buffer; larger ones as the head and then the body (past one TLS
// record, past Asio's 64 KiB write step), and each must arrive whole on a connection that goes on.
TEST_F(HttpsServerTest, AnswersOfEverySizeArriveWholeOnOneConnection) {
  server_ = startServer(options_, [](const HttpRequest& request) {
    const std::size_t size = std::stoul(request.target.substr(1));
    std::string body(size, 'x');
    for (std::size_t i = 0; i < size; i += 997) body[i] = static_cast<char>('a' + i % 26);
    return textResponse(std::move(body));
  });
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  for (const std::size_t size : {5u, 16000u, 16385u, 70000u, 0u, 5u}) {
    SCOPED_TRACE(size);
    const Response answer = client.get("/" + std::to_string(size));
    ASSERT_EQ(answer.body().size(), size);
    for (std::size_t i = 0; i < size; i += 997) {
      ASSERT_EQ(answer.body()[i], static_cast<char>('a' + i % 26)) << size << " at " << i;
    }
  }
}

// A request larger than a connection keeps between requests (its strings are released while
// it is idle) is answered, and so is the one after it on the same connection.
TEST_F(HttpsServerTest, AfterALargeRequestTheConnectionGoesOn) {
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  Request large(http::verb::get, "/large", 11);
  large.set("X-Large", std::string(40000, 'a'));
  EXPECT_EQ(client.roundTrip(std::move(large)).body(), "GET /large ");
  EXPECT_EQ(client.get("/small").body(), "GET /small ");
  EXPECT_EQ(client.get("/small-again").body(), "GET /small-again ");
}

TEST_F(HttpsServerTest, HeadHasContentLengthButNoBody) {
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  const Response head = client.roundTrip(Request(http::verb::head, "/x", 11));
  EXPECT_EQ(head[http::field::content_length], std::to_string(std::string("HEAD /x ").size()));
  EXPECT_EQ(head.body(), "");
  // Had the server sent body bytes after the HEAD response, this response would not parse.
  EXPECT_EQ(client.get("/y").body(), "GET /y ");
}

TEST_F(HttpsServerTest, AtOnceAnswersOnTheIoThreadAndTheRestGoesToAWorker) {
  const auto document = std::make_shared<const std::string>("{\"kind\":\"APIGroupList\"}\n");
  std::mutex mutex;
  std::thread::id at_once_thread;
  std::thread::id worker_thread;
  Handlers handlers;
  handlers.handler = [&](const HttpRequest& request) {
    log_.add(request);
    std::lock_guard lock(mutex);
    worker_thread = std::this_thread::get_id();
    return textResponse("worker " + request.target);
  };
  handlers.at_once = [&](const HttpRequest& request) -> std::optional<HttpResponse> {
    {
      std::lock_guard lock(mutex);
      at_once_thread = std::this_thread::get_id();
    }
    if (request.target == "/throw") throw std::runtime_error("secret detail");
    if (request.target != "/apis") return std::nullopt;
    HttpResponse response;
    response.shared_body = document;
    return response;
  };
  server_ = std::make_unique<HttpsServer>(options_, std::move(handlers));
  server_->start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));

  const Response fast = client.get("/apis");
  EXPECT_EQ(fast.result_int(), 200u);
  EXPECT_EQ(fast.body(), *document);
  EXPECT_TRUE(log_.all().empty());  // the worker never saw it
  const Response head = client.roundTrip(Request(http::verb::head, "/apis", 11));
  EXPECT_EQ(head[http::field::content_length], std::to_string(document->size()));
  EXPECT_EQ(head.body(), "");

  EXPECT_EQ(client.get("/apis/x/v1/namespaces/a/pods/p/m").body(),
            "worker /apis/x/v1/namespaces/a/pods/p/m");
  EXPECT_EQ(log_.all().size(), 1u);
  {
    std::lock_guard lock(mutex);
    EXPECT_NE(at_once_thread, worker_thread);
  }

  const Response failed = client.get("/throw");
  EXPECT_EQ(failed.result_int(), 500u);
  EXPECT_EQ(failed.body().find("secret detail"), std::string::npos);
  EXPECT_EQ(client.get("/apis").body(), *document);  // the connection goes on
}

TEST_F(HttpsServerTest, ConnectionCloseIsHonoured) {
  start();
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  Request request(http::verb::get, "/", 11);
  request.set(http::field::connection, "close");
  const Response response = client.roundTrip(std::move(request));
  EXPECT_FALSE(response.keep_alive());
  EXPECT_NE(client.waitForClose(), beast::error::timeout);
}

TEST_F(HttpsServerTest, BindErrorNamesTheAddress) {
  start();
  ServerOptions same_port = options_;
  same_port.port = server_->port();
  HttpsServer second(same_port, [](const HttpRequest&) { return HttpResponse{}; });
  try {
    second.start();
    FAIL() << "binding an occupied port succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(server_->port())),
              std::string::npos)
        << e.what();
  }
}

TEST_F(HttpsServerTest, StopStopsAcceptingAndFinishesInFlightRequests) {
  std::atomic<bool> entered{false};
  server_ = startServer(options_, [&](const HttpRequest&) {
    entered = true;
    release_.wait();
    return textResponse("finished");
  });
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  ASSERT_FALSE(client.send(Request(http::verb::get, "/slow", 11)));
  ASSERT_TRUE(eventually([&] { return entered.load(); }));

  const std::uint16_t port = server_->port();
  std::thread stopper([&] { server_->stop(std::chrono::seconds(10)); });
  EXPECT_TRUE(eventually([&] { return static_cast<bool>(TlsClient().connect(port)); }));
  release_.open();
  const auto [ec, response] = client.read();
  stopper.join();
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response.body(), "finished");
  EXPECT_FALSE(response.keep_alive());
}

TEST_F(HttpsServerTest, ARequestCompletedDuringShutdownGets503WithRetryAfter) {
  std::atomic<bool> entered{false};
  server_ = startServer(options_, [&](const HttpRequest& request) {
    if (request.target == "/slow") {
      entered = true;
      release_.wait();
    }
    return textResponse("finished");
  });
  const std::uint16_t port = server_->port();
  TlsClient draining;
  ASSERT_FALSE(draining.connect(port));
  ASSERT_FALSE(draining.send(Request(http::verb::get, "/slow", 11)));
  ASSERT_TRUE(eventually([&] { return entered.load(); }));
  TlsClient late;
  ASSERT_FALSE(late.connect(port));
  ASSERT_FALSE(late.writeRaw("GET /late HTTP/1.1\r\nHost: localhost\r\n"));

  std::thread stopper([&] { server_->stop(std::chrono::seconds(10)); });
  EXPECT_TRUE(eventually([&] { return static_cast<bool>(TlsClient().connect(port)); }));
  ASSERT_FALSE(late.writeRaw("\r\n"));
  const auto [ec, refused] = late.read();
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(refused.result_int(), 503u);
  EXPECT_EQ(refused["Retry-After"], "1");
  EXPECT_NE(refused.body().find(R"("message":"the server is shutting down")"), std::string::npos)
      << refused.body();
  EXPECT_FALSE(refused.keep_alive());

  release_.open();
  const auto [drained_ec, drained] = draining.read();
  stopper.join();
  ASSERT_FALSE(drained_ec) << drained_ec.message();
  EXPECT_EQ(drained.body(), "finished");
}

TEST_F(HttpsServerTest, ARequestStillRunningAfterTheDrainGets503WithRetryAfter) {
  std::atomic<bool> entered{false};
  server_ = startServer(options_, [&](const HttpRequest&) {
    entered = true;
    release_.wait();
    return textResponse("too late");
  });
  TlsClient client;
  ASSERT_FALSE(client.connect(server_->port()));
  ASSERT_FALSE(client.send(Request(http::verb::get, "/stuck", 11)));
  ASSERT_TRUE(eventually([&] { return entered.load(); }));

  // The hook is what lets the stuck handler return (as cancelling its Prometheus call does).
  std::atomic<bool> hook_ran{false};
  std::thread stopper([&] {
    server_->stop(std::chrono::seconds(1), [&] {
      hook_ran = true;
      release_.open();
    });
  });
  const auto [ec, response] = client.read();
  stopper.join();
  EXPECT_TRUE(hook_ran);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response.result_int(), 503u);
  EXPECT_EQ(response["Retry-After"], "1");
  EXPECT_NE(response.body().find(R"("message":"the server is shutting down")"), std::string::npos)
      << response.body();
  EXPECT_FALSE(response.keep_alive());
}

}  // namespace
}  // namespace metrics_adapter::server
