#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "metrics_adapter/kube/kube_client.h"
#include "metrics_adapter/kube/object_lister.h"

namespace metrics_adapter::kube {

struct ObjectListerOptions {
  // How long one LIST of a (resource, namespace) answers every selector. The HPA asks every
  // 15 s; pods created since the last LIST appear within this time.
  std::chrono::milliseconds ttl{std::chrono::seconds(10)};
  std::chrono::milliseconds timeout{std::chrono::seconds(5)};  // per LIST call
  std::size_t max_entries = 2048;  // (resource, namespace) lists kept; oldest dropped first
  std::size_t page_size = 500;     // LIST ?limit=, followed by ?continue=
  // While the API fails, a list older than `ttl` is still served for this much longer.
  std::chrono::milliseconds max_stale{std::chrono::minutes(2)};
  // A LIST with more objects fails instead of being held: the Kubernetes scalability limit for
  // pods in a whole cluster.
  std::size_t max_objects = 150000;
  // Objects held over all lists; the oldest lists are dropped to stay below it.
  std::size_t max_cached_objects = 300000;
};

// Lists object names with metadata-only LISTs (PartialObjectMetadataList) of a whole
// (resource, namespace), cached for `ttl` and filtered locally by label selector, so HPA polls
// with any selector share one LIST. Concurrent misses on one key share one call. When a LIST
// fails, the last good list is served for up to `max_stale` past its ttl; when the API answered
// with Retry-After (429, 503), that key is not listed again before the delay has passed.
// Thread-safe.
class CachedObjectLister : public ObjectLister {
 public:
  using SteadyClock = std::chrono::steady_clock;

  CachedObjectLister(std::shared_ptr<KubeApi> api, ObjectListerOptions options,
                     std::function<SteadyClock::time_point()> now = SteadyClock::now);

  // Throws std::runtime_error (a KubeError) when the Kubernetes API cannot answer.
  std::vector<std::string> listNames(const ResourceInfo& resource,
                                     const std::string& namespace_name,
                                     const promql::LabelSelector& selector) override;

  struct Stats {
    std::size_t hits = 0;
    std::size_t misses = 0;
    std::size_t list_calls = 0;
    std::size_t stale_answers = 0;  // lists served past their ttl because a LIST failed
    std::size_t cached_objects = 0;
    std::size_t entries = 0;
  };
  Stats stats() const;

 private:
  struct Object {
    std::string name;
    std::map<std::string, std::string> labels;
  };
  struct Entry {
    std::shared_ptr<const std::vector<Object>> objects;
    SteadyClock::time_point fetched_at;
    bool loading = false;
    // Set by a failure that carried Retry-After: until then the failure is answered again.
    SteadyClock::time_point retry_at;
    std::optional<KubeError> failure;
  };

  std::shared_ptr<const std::vector<Object>> objectsOf(const ResourceInfo& resource,
                                                       const std::string& namespace_name);
  std::vector<Object> fetch(const ResourceInfo& resource, const std::string& namespace_name);
  // The objects of `entry` if it may stand in for a failed LIST, else null.
  std::shared_ptr<const std::vector<Object>> staleObjects(const Entry& entry,
                                                          const std::string& key,
                                                          const std::string& why);
  void evictIfFull();
  void evictBeyondObjectLimit(const std::string& keep);

  std::shared_ptr<KubeApi> api_;
  ObjectListerOptions options_;
  std::function<SteadyClock::time_point()> now_;

  mutable std::mutex mutex_;  // never held during a LIST
  std::condition_variable loaded_;
  std::map<std::string, Entry> entries_;
  Stats stats_;
};

// The LIST path of `resource` in `namespace_name` ("" = cluster scope or all namespaces).
std::string listPath(const ResourceInfo& resource, const std::string& namespace_name);

}  // namespace metrics_adapter::kube
