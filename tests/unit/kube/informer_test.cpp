#include "kube/informer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "unit/kube/fake_watch_api.h"

namespace metrics_adapter::kube {
namespace {

using namespace std::chrono_literals;
using testing::bookmark;
using testing::event;
using testing::eventually;
using testing::FakeWatchApi;
using testing::listPage;
using testing::metadataObject;

const std::string kFirstPage = "/api/v1/namespaces/default/pods?limit=2";
const std::string kSecondPage = "/api/v1/namespaces/default/pods?limit=2&continue=next%2F1";

ResourceInfo informerPods() { return {"", "v1", "Pod", "pods", "pod", true}; }

class InformerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = std::make_shared<FakeWatchApi>();
    metrics_ = std::make_shared<telemetry::SelfMetrics>();
    api_->setPage(kFirstPage, listPage({metadataObject("web-1", {{"app", "web"}}),
                                        metadataObject("web-2", {{"app", "web"}})},
                                       "10", "next/1"));
    api_->setPage(kSecondPage, listPage({metadataObject("other-1", {{"app", "other"}})}, "10"));
    options_.list_timeout = 1s;
    options_.page_size = 2;
    options_.backoff_initial = 1ms;
    options_.backoff_max = 2ms;
  }

  void start() {
    informer_ = std::make_unique<Informer>(api_, informerPods(), "default", options_, metrics_,
                                           [] { return 0.0; });
    informer_->start();
  }

  std::vector<std::string> names() {
    std::vector<std::string> out;
    for (const auto& object : *informer_->objects(Informer::SteadyClock::now() + 5s)) {
      out.push_back(object.name);
    }
    return out;
  }

  bool watchedFrom(std::size_t index, const std::string& version) {
    const auto watches = api_->watches();
    return watches.size() > index &&
           watches[index].find("&resourceVersion=" + version) != std::string::npos;
  }

  std::shared_ptr<FakeWatchApi> api_;
  std::shared_ptr<telemetry::SelfMetrics> metrics_;
  InformerOptions options_;
  std::unique_ptr<Informer> informer_;
};

TEST_F(InformerTest, ListsEveryPageThenWatchesFromTheListsVersion) {
  start();
  EXPECT_EQ(names(), (std::vector<std::string>{"other-1", "web-1", "web-2"}));
  ASSERT_TRUE(eventually([&] { return !api_->watches().empty(); }));
  const std::string watch = api_->watches()[0];
  EXPECT_EQ(watch.substr(0, watch.find('?')), "/api/v1/namespaces/default/pods");
  for (const char* part :
       {"watch=1", "allowWatchBookmarks=true", "resourceVersion=10", "timeoutSeconds=300"}) {
    EXPECT_NE(watch.find(part), std::string::npos) << part << " in " << watch;
  }
  EXPECT_EQ(api_->gets(), (std::vector<std::string>{kFirstPage, kSecondPage}));
}

TEST_F(InformerTest, EventsChangeTheStoreWithoutAnotherList) {
  start();
  names();
  api_->push(event("ADDED", metadataObject("web-3", {{"app", "web"}}, "11")));
  api_->push(event("MODIFIED", metadataObject("web-1", {{"app", "moved"}}, "12")));
  api_->push(event("DELETED", metadataObject("web-2", {{"app", "web"}}, "13")));
  ASSERT_TRUE(eventually([&] { return informer_->stats().resource_version == "13"; }));
  EXPECT_EQ(names(), (std::vector<std::string>{"other-1", "web-1", "web-3"}));
  const auto objects = informer_->objects(Informer::SteadyClock::now());
  const auto web_1 = std::find_if(objects->begin(), objects->end(),
                                  [](const ObjectMeta& o) { return o.name == "web-1"; });
  ASSERT_NE(web_1, objects->end());
  EXPECT_EQ(web_1->labels.at("app"), "moved");
  EXPECT_EQ(api_->gets().size(), 2u);  // the first LIST's two pages, nothing since
  EXPECT_EQ(informer_->stats().events, 3u);
}

TEST_F(InformerTest, BookmarksMoveTheVersionAndAClosedWatchResumesFromIt) {
  start();
  names();
  api_->push(bookmark("42"));
  api_->push(FakeWatchApi::End{});  // the server's timeoutSeconds
  ASSERT_TRUE(eventually([&] { return watchedFrom(1, "42"); })) << api_->watches().back();
  EXPECT_EQ(api_->gets().size(), 2u);
}

TEST_F(InformerTest, AStreamCutMidWayResumesFromTheLastVersionWithoutAList) {
  start();
  names();
  api_->push(event("ADDED", metadataObject("web-3", {}, "11")));
  api_->push(FakeWatchApi::End{KubeError(0, "the answer broke off: connection reset")});
  ASSERT_TRUE(eventually([&] { return watchedFrom(1, "11"); }));
  api_->push(event("ADDED", metadataObject("web-4", {}, "12")));
  ASSERT_TRUE(eventually([&] { return names().size() == 5; }));
  EXPECT_EQ(api_->gets().size(), 2u);
  EXPECT_EQ(informer_->stats().lists, 1u);
}

TEST_F(InformerTest, GoneListsAgainAndWatchesFromTheNewList) {
  const struct {
    const char* name;
    FakeWatchApi::Step step;
  } cases[] = {
      {"an ERROR event with code 410", testing::gone()},
      {"an HTTP 410 answer", FakeWatchApi::End{KubeError(410, "Gone")}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    SetUp();
    start();
    names();
    api_->setPage(kFirstPage, listPage({metadataObject("fresh", {})}, "30"));
    api_->push(c.step);
    ASSERT_TRUE(eventually([&] { return watchedFrom(1, "30"); }));
    EXPECT_EQ(names(), (std::vector<std::string>{"fresh"}));
    EXPECT_EQ(informer_->stats().gone, 1u);
    EXPECT_EQ(informer_->stats().lists, 2u);
    EXPECT_NE(metrics_->exposition().find("metrics_adapter_object_lists_total{reason=\"gone\"} 1"),
              std::string::npos);
    informer_.reset();
  }
}

TEST_F(InformerTest, OtherErrorEventsRewatchFromTheSameVersion) {
  start();
  names();
  api_->push(event("ERROR", {{"kind", "Status"}, {"code", 500}, {"message", "etcd hiccup"}}));
  ASSERT_TRUE(eventually([&] { return watchedFrom(1, "10"); }));
  EXPECT_EQ(informer_->stats().lists, 1u);
  EXPECT_EQ(informer_->stats().failures, 1u);
}

TEST_F(InformerTest, AFailedWatchWaitsOutItsBackoffAndStopEndsTheWait) {
  options_.backoff_initial = options_.backoff_max = 1h;
  start();
  names();
  api_->push(FakeWatchApi::End{KubeError(503, "unavailable")});
  ASSERT_TRUE(eventually([&] { return informer_->stats().failures == 1; }));
  std::this_thread::sleep_for(50ms);  // long enough to see a retry that should not happen
  EXPECT_EQ(api_->watches().size(), 1u);
  // The store is still served while the API fails (for max_stale).
  EXPECT_EQ(names().size(), 3u);
  EXPECT_EQ(informer_->stats().stale_answers, 1u);
  informer_->stop();  // returns although the backoff has an hour to go
}

TEST_F(InformerTest, StopEndsAWatchThatIsWaitingForEvents) {
  start();
  names();
  ASSERT_TRUE(eventually([&] { return api_->watches().size() == 1; }));
  informer_->stop();
  EXPECT_TRUE(informer_->finished());
  EXPECT_THROW(informer_->objects(Informer::SteadyClock::now()), KubeError);
}

TEST_F(InformerTest, AFirstReaderGetsTheListFailureAndTheNextOneListsAtOnce) {
  options_.backoff_initial = options_.backoff_max = 1h;
  api_->failLists(KubeError(503, "the server is currently unable to handle the request"));
  start();
  try {
    names();
    FAIL() << "no error";
  } catch (const KubeError& e) {
    EXPECT_EQ(e.httpStatus(), 503);
  }
  api_->failLists(std::nullopt);
  // The informer's own retry is an hour away; a waiting reader does not wait for it.
  EXPECT_EQ(names().size(), 3u);
}

TEST_F(InformerTest, RetryAfterIsHonouredForReadersToo) {
  options_.backoff_initial = options_.backoff_max = 1h;
  api_->failLists(KubeError(429, "slow down").withRetryAfter(60s));
  start();
  EXPECT_THROW(names(), KubeError);
  const std::size_t gets = api_->gets().size();
  api_->failLists(std::nullopt);
  EXPECT_THROW(names(), KubeError);  // answered from the failure, without asking
  EXPECT_EQ(api_->gets().size(), gets);
}

TEST_F(InformerTest, FailuresPastMaxStaleAreErrors) {
  options_.backoff_initial = options_.backoff_max = 1h;
  options_.max_stale = 0ms;
  start();
  names();
  api_->push(FakeWatchApi::End{KubeError(503, "unavailable")});
  ASSERT_TRUE(eventually([&] { return informer_->stats().failures == 1; }));
  EXPECT_THROW(names(), KubeError);
}

TEST_F(InformerTest, AWatchThatWouldExceedTheObjectBoundListsAgain) {
  options_.max_objects = 3;
  start();
  names();
  api_->push(event("ADDED", metadataObject("one-too-many", {}, "11")));
  ASSERT_TRUE(eventually([&] { return api_->gets().size() >= 3; }));
  EXPECT_LE(informer_->stats().objects, 3u);
}

TEST_F(InformerTest, TheFieldSelectorGoesOnEveryListPageAndWatch) {
  options_.field_selector = "status.phase=Running,metadata.name!=web 2";
  const std::string query = "&fieldSelector=status.phase%3DRunning%2Cmetadata.name%21%3Dweb%202";
  const std::string first_page = kFirstPage + query;
  api_->setPage(first_page, listPage({metadataObject("web-1", {})}, "10", "next/1"));
  api_->setPage(first_page + "&continue=next%2F1", listPage({metadataObject("web-3", {})}, "10"));
  start();
  EXPECT_EQ(names(), (std::vector<std::string>{"web-1", "web-3"}));
  EXPECT_EQ(api_->gets(),
            (std::vector<std::string>{first_page, first_page + "&continue=next%2F1"}));
  ASSERT_TRUE(eventually([&] { return !api_->watches().empty(); }));
  EXPECT_NE(api_->watches()[0].find(query), std::string::npos) << api_->watches()[0];
  // The watch after a closed one asks with the same selector.
  api_->push(FakeWatchApi::End{});
  ASSERT_TRUE(eventually([&] { return api_->watches().size() >= 2; }));
  EXPECT_NE(api_->watches()[1].find(query), std::string::npos) << api_->watches()[1];
  EXPECT_EQ(informer_->key(), "pods/default?status.phase=Running,metadata.name!=web 2");
}

TEST_F(InformerTest, KeepsNamespaceAndCreationTimestampSortedByNamespaceThenName) {
  const auto created = [](nlohmann::json object, const std::string& timestamp) {
    object["metadata"]["creationTimestamp"] = timestamp;
    return object;
  };
  // "a-b/x" sorts before "a/x" as one string; by namespace, then name, "a" comes first.
  api_->setPage("/api/v1/pods?limit=2",
                listPage({created(metadataObject("x", {}, "", "a-b"), "2024-05-01T10:00:00Z"),
                          metadataObject("y", {}, "", "a")},
                         "10", "more"));
  api_->setPage("/api/v1/pods?limit=2&continue=more",
                listPage({metadataObject("x", {{"app", "web"}}, "", "a")}, "10"));
  informer_ =
      std::make_unique<Informer>(api_, informerPods(), "", options_, metrics_, [] { return 0.0; });
  informer_->start();
  const auto listed = informer_->objects(Informer::SteadyClock::now() + 5s);
  std::vector<std::string> keys;
  for (const auto& object : *listed) keys.push_back(object.namespace_name + "/" + object.name);
  EXPECT_EQ(keys, (std::vector<std::string>{"a/x", "a/y", "a-b/x"}));
  EXPECT_EQ(listed->at(2).creation_timestamp, "2024-05-01T10:00:00Z");
  EXPECT_EQ(listed->at(0).creation_timestamp, "");
  EXPECT_EQ(listed->at(0).labels.at("app"), "web");
  // A watch event replaces the object of the same namespace and name only.
  api_->push(event("MODIFIED", created(metadataObject("x", {{"app", "moved"}}, "11", "a-b"),
                                       "2024-05-02T00:00:00Z")));
  ASSERT_TRUE(eventually([&] { return informer_->stats().resource_version == "11"; }));
  const auto watched = informer_->objects(Informer::SteadyClock::now());
  ASSERT_EQ(watched->size(), 3u);
  EXPECT_EQ(watched->at(2).labels.at("app"), "moved");
  EXPECT_EQ(watched->at(2).creation_timestamp, "2024-05-02T00:00:00Z");
  EXPECT_EQ(watched->at(0).labels.at("app"), "web");
  // A cluster-scoped object has no namespace.
  api_->push(event("ADDED", metadataObject("z", {}, "12", "")));
  ASSERT_TRUE(eventually([&] { return informer_->stats().objects == 4; }));
  EXPECT_EQ(informer_->objects(Informer::SteadyClock::now())->front().namespace_name, "");
}

TEST(InformerKeyTest, Table) {
  const ResourceInfo nodes{"", "v1", "Node", "nodes", "node", false};
  EXPECT_EQ(informerKey(informerPods(), "default", ""), "pods/default");
  EXPECT_EQ(informerKey(informerPods(), "", "status.phase=Running"), "pods/?status.phase=Running");
  EXPECT_EQ(informerKey(nodes, "ignored", ""), "nodes/");
}

TEST(ObjectBudgetTest, TakesUpToTheLimitAndGivesBack) {
  ObjectBudget budget(10);
  EXPECT_TRUE(budget.take(6));
  EXPECT_FALSE(budget.take(5));  // nothing taken by a refusal
  EXPECT_EQ(budget.used(), 6u);
  EXPECT_TRUE(budget.take(4));
  EXPECT_FALSE(budget.take(1));
  budget.give(3);
  EXPECT_TRUE(budget.take(3));
  budget.give(100);  // never below zero
  EXPECT_EQ(budget.used(), 0u);
  EXPECT_TRUE(budget.take(0));
}

TEST(BackoffDelayTest, DoublesUpToTheCapAndJittersWithinHalfToWhole) {
  const struct {
    unsigned failures;
    double jitter;
    long long expected_ms;
  } cases[] = {
      {0, 0.5, 0},         // no failure, no wait
      {1, 0.0, 400},       // half of 800 ms
      {1, 0.999, 799},     // just under the whole
      {2, 0.0, 800},       // 1600 / 2
      {3, 1.0, 3200},      // jitter 1 (clamped) is the whole 3.2 s
      {6, 0.0, 12800},     // 25.6 s, under the cap
      {7, 0.0, 15000},     // 51.2 s capped at 30 s -> 15 s
      {1000, 0.0, 15000},  // no overflow after many failures
  };
  for (const auto& c : cases) {
    EXPECT_EQ(backoffDelay(c.failures, 800ms, 30s, c.jitter).count(), c.expected_ms)
        << c.failures << " failures, jitter " << c.jitter;
  }
}

}  // namespace
}  // namespace metrics_adapter::kube
