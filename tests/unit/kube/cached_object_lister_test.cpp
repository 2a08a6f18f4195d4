#include "metrics_adapter/kube/cached_object_lister.h"

#include <gtest/gtest.h>

#include <string>
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
