#include "metrics_adapter/kube/cached_object_lister.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

namespace metrics_adapter::kube {
namespace {

using namespace std::chrono_literals;

// Serves PartialObjectMetadataList pages from a table and counts calls.
class FakeKubeApi : public KubeApi {
 public:
  std::map<std::string, nlohmann::json> pages;  // full path -> answer
  std::vector<std::string> calls;
  std::vector<std::string> accepts;
  bool down = false;
  std::optional<KubeError> failure;  // thrown by every call while set

  nlohmann::json get(const std::string& path, std::string_view accept,
                     std::chrono::milliseconds) override {
    calls.push_back(path);
    accepts.emplace_back(accept);
    if (down) throw KubeError(503, "the server is currently unable to handle the request");
    if (failure) throw *failure;
    auto it = pages.find(path);
    if (it == pages.end()) throw KubeError(404, "not found: " + path);
    return it->second;
  }
  nlohmann::json post(const std::string&, const nlohmann::json&,
                      std::chrono::milliseconds) override {
    return nullptr;
  }
};

nlohmann::json object(const std::string& name, nlohmann::json labels) {
  return {{"kind", "PartialObjectMetadata"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", {{"name", name}, {"namespace", "default"}, {"labels", labels}}}};
}

nlohmann::json page(std::vector<nlohmann::json> items, std::string next = "") {
  nlohmann::json metadata = {{"resourceVersion", "7"}};
  if (!next.empty()) metadata["continue"] = next;
  return {{"kind", "PartialObjectMetadataList"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", metadata},
          {"items", items}};
}

ResourceInfo pods() { return {"", "v1", "Pod", "pods", "pod", true}; }

class CachedObjectListerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = std::make_shared<FakeKubeApi>();
    api_->pages["/api/v1/namespaces/default/pods?limit=2"] =
        page({object("web-1", {{"app", "web"}, {"tier", "backend"}}),
              object("web-2", {{"app", "web"}, {"tier", "cache"}})},
             "token/1");
    api_->pages["/api/v1/namespaces/default/pods?limit=2&continue=token%2F1"] =
        page({object("other-1", {{"app", "other"}}), object("bare", nullptr)});
    lister_ = std::make_unique<CachedObjectLister>(
        api_, ObjectListerOptions{.ttl = 10s, .timeout = 1s, .max_entries = 2, .page_size = 2},
        [this] { return now_; });
  }

  std::vector<std::string> list(const std::string& selector,
                                const std::string& namespace_name = "default") {
    return lister_->listNames(pods(), namespace_name, promql::parseLabelSelector(selector));
  }

  std::shared_ptr<FakeKubeApi> api_;
  std::unique_ptr<CachedObjectLister> lister_;
  CachedObjectLister::SteadyClock::time_point now_{};
};

TEST_F(CachedObjectListerTest, FiltersEveryPageBySelectorLocally) {
  EXPECT_EQ(list("app=web"), (std::vector<std::string>{"web-1", "web-2"}));
  EXPECT_EQ(list("app=web,tier in (backend)"), (std::vector<std::string>{"web-1"}));
  EXPECT_EQ(list("app!=web"), (std::vector<std::string>{"other-1", "bare"}));
  EXPECT_EQ(list("!app"), (std::vector<std::string>{"bare"}));
  EXPECT_EQ(list("app=none"), std::vector<std::string>{});
  // Two pages once; every other selector was answered from the cache.
  EXPECT_EQ(api_->calls.size(), 2u);
  EXPECT_EQ(api_->accepts[0],
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json");
  EXPECT_EQ(lister_->stats().list_calls, 1u);
  EXPECT_EQ(lister_->stats().hits, 4u);
}

TEST_F(CachedObjectListerTest, ListsAgainAfterTheTtl) {
  list("app=web");
  now_ += 9s;
  list("app=web");
  EXPECT_EQ(lister_->stats().list_calls, 1u);
  now_ += 2s;
  list("app=web");
  EXPECT_EQ(lister_->stats().list_calls, 2u);
}

TEST_F(CachedObjectListerTest, ApiFailureIsAnErrorAndNotCached) {
  api_->down = true;
  EXPECT_THROW(list("app=web"), KubeError);
  api_->down = false;
  EXPECT_EQ(list("app=web").size(), 2u);
}

TEST_F(CachedObjectListerTest, EntriesAreBounded) {
  for (const char* ns : {"a", "b", "c"}) {
    api_->pages[std::string("/api/v1/namespaces/") + ns + "/pods?limit=2"] = page({});
  }
  list("", "a");
  now_ += 1s;
  list("", "b");
  now_ += 1s;
  list("", "c");  // evicts "a", the oldest
  list("", "b");
  EXPECT_EQ(lister_->stats().list_calls, 3u);
  list("", "a");
  EXPECT_EQ(lister_->stats().list_calls, 4u);
}

TEST_F(CachedObjectListerTest, ServesTheLastListWhileTheApiFailsForAtMostMaxStale) {
  EXPECT_EQ(list("app=web").size(), 2u);
  api_->down = true;
  now_ += 11s;  // past the ttl: a LIST is due, and fails
  EXPECT_EQ(list("app=web"), (std::vector<std::string>{"web-1", "web-2"}));
  EXPECT_EQ(lister_->stats().stale_answers, 1u);
  EXPECT_EQ(lister_->stats().list_calls, 2u);
  // The stale list stands for one more ttl without asking the failing API again.
  const std::size_t calls = api_->calls.size();
  now_ += 9s;
  EXPECT_EQ(list("app=web").size(), 2u);
  EXPECT_EQ(api_->calls.size(), calls);
  now_ += 2s;
  EXPECT_EQ(list("app=web").size(), 2u);
  EXPECT_EQ(lister_->stats().list_calls, 3u);
  // Never older than ttl + max_stale (2 minutes by default).
  now_ += 2min;
  EXPECT_THROW(list("app=web"), KubeError);
  api_->down = false;
  now_ += 10s;
  EXPECT_EQ(list("app=web").size(), 2u);
}

TEST_F(CachedObjectListerTest, RetryAfterIsHonouredBeforeListingAgain) {
  api_->failure = KubeError(429, "Too many requests").withRetryAfter(3s);
  EXPECT_THROW(list("app=web"), KubeError);
  EXPECT_EQ(api_->calls.size(), 1u);
  api_->failure.reset();
  now_ += 2s;
  try {
    list("app=web");
    ADD_FAILURE() << "no error within the Retry-After delay";
  } catch (const KubeError& e) {
    EXPECT_EQ(e.httpStatus(), 429);
    EXPECT_STREQ(e.what(), "Too many requests");
  }
  EXPECT_EQ(api_->calls.size(), 1u);  // the API was not asked again
  now_ += 1s;
  EXPECT_EQ(list("app=web").size(), 2u);
}

TEST_F(CachedObjectListerTest, AListWithMoreThanMaxObjectsFailsAndIsNotKept) {
  lister_ = std::make_unique<CachedObjectLister>(
      api_, ObjectListerOptions{.ttl = 10s, .page_size = 2, .max_objects = 3},
      [this] { return now_; });
  try {
    list("");
    ADD_FAILURE() << "four objects were accepted";
  } catch (const KubeError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 3 objects"), std::string::npos) << e.what();
  }
  EXPECT_EQ(lister_->stats().cached_objects, 0u);
}

TEST_F(CachedObjectListerTest, AnEndlessChainOfContinueTokensEnds) {
  api_->pages["/api/v1/namespaces/loop/pods?limit=2"] = page({}, "again");
  api_->pages["/api/v1/namespaces/loop/pods?limit=2&continue=again"] = page({}, "again");
  lister_ = std::make_unique<CachedObjectLister>(
      api_, ObjectListerOptions{.ttl = 10s, .page_size = 2, .max_objects = 10},
      [this] { return now_; });
  EXPECT_THROW(list("", "loop"), KubeError);
  EXPECT_EQ(api_->calls.size(), 10u / 2u + 2u);
}

TEST_F(CachedObjectListerTest, ObjectsHeldOverAllListsAreBounded) {
  api_->pages["/api/v1/namespaces/small/pods?limit=2"] = page({object("s-1", nullptr)});
  lister_ = std::make_unique<CachedObjectLister>(
      api_, ObjectListerOptions{.ttl = 10s, .page_size = 2, .max_cached_objects = 4},
      [this] { return now_; });
  list("");  // four objects in default
  EXPECT_EQ(lister_->stats().cached_objects, 4u);
  now_ += 1s;
  list("", "small");  // five in all: the older list goes
  EXPECT_EQ(lister_->stats().cached_objects, 1u);
  EXPECT_EQ(lister_->stats().entries, 1u);
  list("", "small");
  EXPECT_EQ(lister_->stats().list_calls, 2u);
  list("");
  EXPECT_EQ(lister_->stats().list_calls, 3u);
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
