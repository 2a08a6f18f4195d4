#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "metrics_adapter/kube/kube_client.h"
#include "metrics_adapter/net/call_canceller.h"
#include "unit/net/fake_http_server.h"

namespace metrics_adapter::kube {
namespace {

using namespace std::chrono_literals;
using net::testing::answering;
using net::testing::FakeHttpServer;
using net::testing::jsonReply;
using net::testing::Reply;

const std::string kAccept =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

KubeClientOptions watchOptionsFor(const FakeHttpServer& server) {
  KubeClientOptions options;
  options.server = server.url();
  options.timeout = 10s;
  options.source = "test";
  return options;
}

WatchRequest watchOf(const std::string& path, std::chrono::milliseconds timeout = 10s) {
  return WatchRequest{path, kAccept, timeout, nullptr};
}

// A chunked answer that sends `chunks` one by one, then, with `hold`, waits until released
// before ending the body: a watch idle between events.
class StreamedReply {
 public:
  explicit StreamedReply(std::vector<std::string> chunks, bool hold = false)
      : chunks_(std::move(chunks)), hold_(hold) {}
  ~StreamedReply() { release(); }

  Reply reply() {
    Reply reply;
    reply.chunks = [this, next = std::size_t{0}](std::string& chunk) mutable {
      if (next < chunks_.size()) {
        chunk = chunks_[next++];
        return true;
      }
      std::unique_lock lock(mutex_);
      released_cv_.wait(lock, [this] { return !hold_ || released_; });
      return false;
    };
    return reply;
  }
  void release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    released_cv_.notify_all();
  }

 private:
  std::vector<std::string> chunks_;
  bool hold_;
  std::mutex mutex_;
  std::condition_variable released_cv_;
  bool released_ = false;
};

TEST(KubeClientWatchTest, HandsOverEachEventAsItArrivesAndReturnsWhenTheServerEnds) {
  StreamedReply stream(
      {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n{\"ty",
       "pe\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}}}\n"});
  FakeHttpServer server(answering(stream.reply()));
  KubeClient client(watchOptionsFor(server));
  std::vector<std::string> seen;
  client.watch(watchOf("/api/v1/pods?watch=1&resourceVersion=7"), [&](WatchEvent&& event) {
    seen.push_back(event.type + " " + event.object["metadata"].dump());
    return true;
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED {\"name\":\"a\"}",
                                            "BOOKMARK {\"resourceVersion\":\"9\"}"}));
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].target, "/api/v1/pods?watch=1&resourceVersion=7");
  EXPECT_EQ(requests[0].header("accept"), kAccept);
}

TEST(KubeClientWatchTest, AnswersOtherThan2xxAreKubeErrorsWithTheirStatus) {
  FakeHttpServer server(answering(jsonReply(
      R"({"kind":"Status","status":"Failure","message":"too old resource version","reason":"Expired","code":410})",
      410)));
  KubeClient client(watchOptionsFor(server));
  try {
    client.watch(watchOf("/api/v1/pods?watch=1&resourceVersion=1"),
                 [](WatchEvent&&) { return true; });
    FAIL() << "no error";
  } catch (const KubeError& e) {
    EXPECT_EQ(e.httpStatus(), 410);
    EXPECT_NE(std::string(e.what()).find("too old resource version"), std::string::npos);
  }
}

TEST(KubeClientWatchTest, AnIdleStreamOutlivesTheClientsCallTimeout) {
  // options.timeout bounds GET and POST; a watch lives for its own request's timeout.
  StreamedReply stream({"{\"type\":\"ADDED\",\"object\":{}}\n"}, /*hold=*/true);
  FakeHttpServer server(answering(stream.reply()));
  KubeClientOptions options = watchOptionsFor(server);
  options.timeout = 100ms;
  KubeClient client(options);
  std::thread releaser([&] {
    std::this_thread::sleep_for(400ms);
    stream.release();
  });
  int events = 0;
  EXPECT_NO_THROW(client.watch(watchOf("/api/v1/pods?watch=1", 10s), [&](WatchEvent&&) {
    ++events;
    return true;
  }));
  releaser.join();
  EXPECT_EQ(events, 1);
}

TEST(KubeClientWatchTest, TheCancellerEndsAnIdleStream) {
  StreamedReply stream({"{\"type\":\"ADDED\",\"object\":{}}\n"}, /*hold=*/true);
  FakeHttpServer server(answering(stream.reply()));
  KubeClient client(watchOptionsFor(server));
  auto canceller = std::make_shared<net::CallCanceller>();
  std::atomic<bool> first_event{false};
  std::thread cancel([&] {
    while (!first_event) std::this_thread::sleep_for(1ms);
    canceller->cancelAll();
  });
  WatchRequest request = watchOf("/api/v1/pods?watch=1", 60s);
  request.canceller = canceller;
  const auto started = std::chrono::steady_clock::now();
  EXPECT_THROW(client.watch(request,
                            [&](WatchEvent&&) {
                              first_event = true;
                              return true;
                            }),
               KubeError);
  cancel.join();
  stream.release();  // before the server joins its connection thread
  // Far from the 60 s deadline: ended by the cancel.
  EXPECT_LT(std::chrono::steady_clock::now() - started, 30s);
}

TEST(KubeClientWatchTest, AMalformedLineEndsTheWatchWithAnError) {
  StreamedReply stream({"{\"type\":\"ADDED\",\"object\":{}}\nnot json\n"}, /*hold=*/true);
  FakeHttpServer server(answering(stream.reply()));
  KubeClient client(watchOptionsFor(server));
  int events = 0;
  EXPECT_THROW(client.watch(watchOf("/api/v1/pods?watch=1"),
                            [&](WatchEvent&&) {
                              ++events;
                              return true;
                            }),
               KubeError);
  stream.release();
  EXPECT_EQ(events, 1);
}

}  // namespace
}  // namespace metrics_adapter::kube
