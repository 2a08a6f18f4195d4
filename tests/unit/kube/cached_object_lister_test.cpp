#include "metrics_adapter/kube/cached_object_lister.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "kube/informer.h"
#include "unit/kube/fake_watch_api.h"

namespace metrics_adapter::kube {
namespace {

using namespace std::chrono_literals;
using testing::event;
using testing::eventually;
using testing::FakeWatchApi;
using testing::listPage;
using testing::metadataObject;

ResourceInfo pods() { return {"", "v1", "Pod", "pods", "pod", true}; }

class CachedObjectListerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = std::make_shared<FakeWatchApi>();
    api_->setPage("/api/v1/namespaces/default/pods?limit=2",
                  listPage({metadataObject("web-1", {{"app", "web"}, {"tier", "backend"}}),
                            metadataObject("web-2", {{"app", "web"}, {"tier", "cache"}})},
                           "7", "token/1"));
    api_->setPage(
        "/api/v1/namespaces/default/pods?limit=2&continue=token%2F1",
        listPage({metadataObject("other-1", {{"app", "other"}}), metadataObject("bare", nullptr)},
                 "7"));
    makeLister({.timeout = 1s, .page_size = 2, .max_informers = 2});
  }

  void makeLister(ObjectListerOptions options) {
    lister_.reset();
    if (options.backoff_initial == ObjectListerOptions{}.backoff_initial) {
      options.backoff_initial = 1ms;
      options.backoff_max = 2ms;
    }
    lister_ = std::make_unique<CachedObjectLister>(api_, options, metrics_);
  }

  std::vector<std::string> list(const std::string& selector,
                                const std::string& namespace_name = "default") {
    return lister_->listNames(pods(), namespace_name, promql::parseLabelSelector(selector));
  }

  std::shared_ptr<FakeWatchApi> api_;
  std::shared_ptr<telemetry::SelfMetrics> metrics_ = std::make_shared<telemetry::SelfMetrics>();
  std::unique_ptr<CachedObjectLister> lister_;
};

TEST_F(CachedObjectListerTest, AnswersEverySelectorFromOneList) {
  const struct {
    const char* selector;
    std::vector<std::string> names;
  } cases[] = {
      {"app=web", {"web-1", "web-2"}},
      {"app=web,tier in (backend)", {"web-1"}},
      {"app!=web", {"bare", "other-1"}},
      {"!app", {"bare"}},
      {"app=none", {}},
      {"", {"bare", "other-1", "web-1", "web-2"}},
  };
  for (const auto& c : cases) EXPECT_EQ(list(c.selector), c.names) << c.selector;
  // One LIST (two pages) for six requests; every later answer came from the informer's store.
  EXPECT_EQ(api_->gets().size(), 2u);
  EXPECT_EQ(lister_->stats().list_calls, 1u);
  EXPECT_EQ(lister_->stats().hits, 5u);
  EXPECT_EQ(lister_->stats().misses, 1u);
  const std::string exposition = metrics_->exposition();
  EXPECT_NE(exposition.find("metrics_adapter_object_cache_requests_total{result=\"hit\"} 5"),
            std::string::npos);
  EXPECT_NE(exposition.find("metrics_adapter_object_lists_total{reason=\"initial\"} 1"),
            std::string::npos);
}

TEST_F(CachedObjectListerTest, APodAddedInTheApiIsInTheNextAnswer) {
  EXPECT_EQ(list("app=web").size(), 2u);
  api_->push(event("ADDED", metadataObject("web-3", {{"app", "web"}}, "8")));
  ASSERT_TRUE(eventually([&] { return list("app=web").size() == 3; }));
  api_->push(event("DELETED", metadataObject("web-1", {{"app", "web"}}, "9")));
  ASSERT_TRUE(eventually([&] {
    return list("app=web") == std::vector<std::string>{"web-2", "web-3"};
  }));
  EXPECT_EQ(lister_->stats().list_calls, 1u);
}

TEST_F(CachedObjectListerTest, ApiFailureIsAnErrorUntilTheApiAnswers) {
  api_->failLists(KubeError(503, "the server is currently unable to handle the request"));
  EXPECT_THROW(list("app=web"), KubeError);
  api_->failLists(std::nullopt);
  // The informer may have failed once more before the API recovered; until its backoff (at most
  // 2 ms here) has passed, a read gets that failure again rather than another list.
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(list("app=web").size(), 2u);
}

TEST_F(CachedObjectListerTest, InformersAreBoundedAndTheLeastRecentlyReadGoesFirst) {
  for (const char* ns : {"a", "b", "c"}) {
    api_->setPage(std::string("/api/v1/namespaces/") + ns + "/pods?limit=2", listPage({}, "1"));
  }
  list("", "a");
  list("", "b");
  list("", "a");  // "b" is now the least recently read
  list("", "c");  // stops "b"
  EXPECT_EQ(lister_->stats().entries, 2u);
  const std::size_t gets = api_->gets().size();
  list("", "a");
  EXPECT_EQ(api_->gets().size(), gets);  // still watched
  list("", "b");
  EXPECT_EQ(api_->gets().size(), gets + 1);  // listed anew
}

TEST_F(CachedObjectListerTest, AListWithMoreThanMaxObjectsFails) {
  makeLister({.timeout = 1s, .page_size = 2, .max_objects = 3});
  try {
    list("");
    ADD_FAILURE() << "four objects were accepted";
  } catch (const KubeError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 3 objects"), std::string::npos) << e.what();
  }
  EXPECT_EQ(lister_->stats().cached_objects, 0u);
}

TEST_F(CachedObjectListerTest, ObjectsHeldOverAllInformersAreBounded) {
  api_->setPage(
      "/api/v1/namespaces/small/pods?limit=2",
      listPage({metadataObject("s-1", {}, "", "small"), metadataObject("s-2", {}, "", "small")},
               "7"));
  makeLister({.timeout = 1s, .page_size = 2, .max_cached_objects = 5});
  EXPECT_EQ(list("").size(), 4u);
  try {
    list("", "small");
    ADD_FAILURE() << "six objects were held";
  } catch (const KubeError& e) {
    EXPECT_NE(std::string(e.what()).find("over all lists past 5"), std::string::npos) << e.what();
  }
  EXPECT_EQ(lister_->stats().cached_objects, 4u);
  // A pod deleted in default makes room; the informer of "small" lists again by itself.
  api_->push(event("DELETED", metadataObject("bare", nullptr, "8")));
  ASSERT_TRUE(eventually([&] { return lister_->stats().cached_objects == 5; }));
  EXPECT_EQ(list("", "small"), (std::vector<std::string>{"s-1", "s-2"}));
}

TEST_F(CachedObjectListerTest, AnEndlessChainOfContinueTokensEnds) {
  api_->setPage("/api/v1/namespaces/loop/pods?limit=2", listPage({}, "1", "again"));
  api_->setPage("/api/v1/namespaces/loop/pods?limit=2&continue=again", listPage({}, "1", "again"));
  makeLister({.timeout = 1s, .page_size = 2, .max_objects = 10, .backoff_initial = 1h});
  EXPECT_THROW(list("", "loop"), KubeError);
  EXPECT_GE(api_->gets().size(), 10u / 2u + 2u);
}

TEST_F(CachedObjectListerTest, StopEndsEveryWatchAndLaterRequestsFail) {
  list("app=web");
  ASSERT_TRUE(eventually([&] { return api_->watches().size() == 1; }));
  lister_->stop();
  EXPECT_THROW(list("app=web"), KubeError);
}

class ListObjectsTest : public CachedObjectListerTest {
 protected:
  static constexpr const char* kRunning = "status.phase=Running";
  static constexpr const char* kRunningQuery = "&fieldSelector=status.phase%3DRunning";

  void SetUp() override {
    CachedObjectListerTest::SetUp();
    api_->setPage(std::string("/api/v1/namespaces/default/pods?limit=2") + kRunningQuery,
                  listPage({metadataObject("web-1", {{"app", "web"}})}, "7"));
    api_->setPage(std::string("/api/v1/pods?limit=2") + kRunningQuery,
                  listPage({metadataObject("x", {{"app", "web"}}, "", "a-b"),
                            metadataObject("web-1", {{"app", "web"}}),
                            metadataObject("y", {{"app", "db"}}, "", "a")},
                           "7", "more"));
    api_->setPage(std::string("/api/v1/pods?limit=2") + kRunningQuery + "&continue=more",
                  listPage({metadataObject("x", {{"app", "web"}}, "", "a")}, "7"));
  }

  static std::vector<std::string> keys(const std::vector<ObjectMeta>& objects) {
    std::vector<std::string> out;
    out.reserve(objects.size());
    for (const auto& object : objects) out.push_back(object.namespace_name + "/" + object.name);
    return out;
  }

  std::vector<ObjectMeta> objects(const std::string& namespace_name, const std::string& selector,
                                  const std::string& field_selector = kRunning) {
    return lister_->listObjects(pods(), namespace_name, promql::parseLabelSelector(selector),
                                field_selector);
  }

  std::size_t getsOf(const std::string& prefix) const {
    std::size_t count = 0;
    for (const auto& path : api_->gets()) count += path.rfind(prefix, 0) == 0 ? 1 : 0;
    return count;
  }
};

TEST_F(ListObjectsTest, SortedByNamespaceThenNameAndFilteredByTheLabelSelector) {
  makeLister({.timeout = 1s, .page_size = 2});
  const struct {
    const char* namespace_name;
    const char* selector;
    std::vector<std::string> keys;
  } cases[] = {
      {"", "", {"a/x", "a/y", "a-b/x", "default/web-1"}},
      {"", "app=web", {"a/x", "a-b/x", "default/web-1"}},
      {"", "app in (db)", {"a/y"}},
      {"", "app=none", {}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(keys(objects(c.namespace_name, c.selector)), c.keys)
        << c.namespace_name << " " << c.selector;
  }
  EXPECT_EQ(lister_->stats().entries, 1u);
  EXPECT_EQ(lister_->stats().list_calls, 1u);
}

TEST_F(ListObjectsTest, EachFieldSelectorHasItsOwnInformer) {
  makeLister({.timeout = 1s, .page_size = 2});
  EXPECT_EQ(keys(objects("default", "app=web")), (std::vector<std::string>{"default/web-1"}));
  EXPECT_EQ(keys(objects("default", "app=web", "")),
            (std::vector<std::string>{"default/web-1", "default/web-2"}));
  EXPECT_EQ(list("app=web"), (std::vector<std::string>{"web-1", "web-2"}));  // shares the second
  EXPECT_EQ(lister_->stats().entries, 2u);
  ASSERT_TRUE(eventually([&] { return api_->watches().size() == 2; }));
  std::size_t selected_watches = 0;
  for (const auto& watch : api_->watches()) {
    selected_watches += watch.find(kRunningQuery) != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(selected_watches, 1u);
}

TEST_F(ListObjectsTest, ANamespaceIsAnsweredFromTheAllNamespacesInformerOnceItServes) {
  makeLister({.timeout = 1s, .page_size = 2});
  EXPECT_EQ(keys(objects("default", "")), (std::vector<std::string>{"default/web-1"}));
  api_->setPage(std::string("/api/v1/namespaces/a/pods?limit=2") + kRunningQuery,
                listPage({}, "7"));
  EXPECT_EQ(keys(objects("a", "")), (std::vector<std::string>{}));  // its own informer
  EXPECT_EQ(lister_->stats().entries, 2u);
  EXPECT_EQ(objects("", "").size(), 4u);
  const std::size_t gets = api_->gets().size();
  // Served from the all-namespaces list, filtered; the namespace's informer is stopped.
  EXPECT_EQ(keys(objects("a", "")), (std::vector<std::string>{"a/x", "a/y"}));
  EXPECT_EQ(keys(objects("default", "app=web")), (std::vector<std::string>{"default/web-1"}));
  EXPECT_EQ(keys(objects("empty", "")), (std::vector<std::string>{}));
  EXPECT_EQ(api_->gets().size(), gets);
  EXPECT_EQ(lister_->stats().entries, 1u);
  // Other field selectors are not answered from it.
  EXPECT_EQ(list("app=web"), (std::vector<std::string>{"web-1", "web-2"}));
  EXPECT_EQ(lister_->stats().entries, 2u);
}

TEST_F(ListObjectsTest, AFailingAllNamespacesListLeavesTheNamespacesTheirOwn) {
  api_->setPage(std::string("/api/v1/pods?limit=2") + kRunningQuery, listPage({}, "7", "missing"));
  makeLister({.timeout = 1s, .page_size = 2, .backoff_initial = 1h});
  EXPECT_THROW(objects("", ""), KubeError);  // the second page is not found
  EXPECT_EQ(keys(objects("default", "")), (std::vector<std::string>{"default/web-1"}));
  EXPECT_EQ(keys(objects("default", "")), (std::vector<std::string>{"default/web-1"}));
  EXPECT_EQ(lister_->stats().entries, 2u);
  EXPECT_EQ(getsOf("/api/v1/namespaces/default/pods"), 1u);
}

TEST_F(ListObjectsTest, AClusterScopedResourceHasOneInformerWhateverTheNamespace) {
  const ResourceInfo nodes{"", "v1", "Node", "nodes", "node", false};
  api_->setPage(
      "/api/v1/nodes?limit=2",
      listPage({metadataObject("node-2", {}, "", ""), metadataObject("node-1", {}, "", "")}, "7"));
  makeLister({.timeout = 1s, .page_size = 2});
  const auto all = lister_->listObjects(nodes, "", promql::parseLabelSelector(""));
  EXPECT_EQ(keys(all), (std::vector<std::string>{"/node-1", "/node-2"}));
  EXPECT_EQ(keys(lister_->listObjects(nodes, "default", promql::parseLabelSelector(""))),
            keys(all));
  EXPECT_EQ(lister_->listNames(nodes, "other", promql::parseLabelSelector("")),
            (std::vector<std::string>{"node-1", "node-2"}));
  EXPECT_EQ(lister_->stats().entries, 1u);
  EXPECT_EQ(lister_->stats().list_calls, 1u);
}

TEST(ListPathTest, Table) {
  const ResourceInfo deployments{"apps", "v1", "Deployment", "deployments", "deployment", true};
  const ResourceInfo nodes{"", "v1", "Node", "nodes", "node", false};
  const ResourceInfo crd{"serving.kserve.io", "v1beta1",          "InferenceService",
                         "inferenceservices", "inferenceservice", true};
  EXPECT_EQ(listPath(pods(), "default"), "/api/v1/namespaces/default/pods");
  EXPECT_EQ(listPath(pods(), ""), "/api/v1/pods");
  EXPECT_EQ(listPath(nodes, "ignored"), "/api/v1/nodes");
  EXPECT_EQ(listPath(deployments, "ml"), "/apis/apps/v1/namespaces/ml/deployments");
  EXPECT_EQ(listPath(crd, "default"),
            "/apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices");
  EXPECT_EQ(listPath(pods(), "a/b?c"), "/api/v1/namespaces/a%2Fb%3Fc/pods");
}

}  // namespace
}  // namespace metrics_adapter::kube
