#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
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
};

// Lists object names with metadata-only LISTs (PartialObjectMetadataList) of a whole
// (resource, namespace), cached for `ttl` and filtered locally by label selector, so HPA polls
// with any selector share one LIST. Concurrent misses on one key share one call. Thread-safe.
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
  };

  std::vector<Object> fetch(const ResourceInfo& resource, const std::string& namespace_name);
  void evictIfFull();

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
