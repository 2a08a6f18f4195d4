#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "metrics_adapter/kube/kube_client.h"
#include "metrics_adapter/kube/object_lister.h"
#include "metrics_adapter/telemetry/self_metrics.h"

namespace metrics_adapter::kube {

class Informer;
class ObjectBudget;

struct ObjectListerOptions {
  // Per LIST page call. A request for a (resource, namespace, field selector) not yet listed
  // waits for its first LIST at most twice this long.
  std::chrono::milliseconds timeout{std::chrono::seconds(5)};
  std::size_t page_size = 500;  // LIST ?limit=, followed by ?continue=
  // A LIST (or a watched store) with more objects fails instead of being held: the Kubernetes
  // scalability limit for pods in a whole cluster.
  std::size_t max_objects = 150000;
  // Objects held over all informers; a LIST or watch event that would go past it fails (and is
  // retried with backoff). The memory bound (see docs/kubernetes.md).
  std::size_t max_cached_objects = 300000;
  // Informers kept, one per (resource, namespace, field selector) asked for (each one thread
  // and one watch); beyond it the least recently read is stopped.
  std::size_t max_informers = 256;
  // An informer no request has read for this long is stopped (its namespace has no HPA left).
  std::chrono::milliseconds idle{std::chrono::minutes(15)};
  // While the API fails, an informer's objects are still served for this long.
  std::chrono::milliseconds max_stale{std::chrono::minutes(2)};
  std::chrono::seconds watch_timeout{300};  // timeoutSeconds, spread over [t, 2t)
  std::chrono::milliseconds backoff_initial{800};
  std::chrono::milliseconds backoff_max{std::chrono::seconds(30)};
};

// Answers label selectors from informers: one per (resource, namespace, field selector) asked
// for, started by the first request for it, which keeps the objects' metadata current with a
// metadata-only LIST and then a WATCH (see kube/informer.h). Requests read the informer's
// memory only, so there is no LIST per request and a pod the API server knows is answered as
// soon as its watch event arrives. Label selectors are evaluated locally; field selectors by
// the API server (each one its own informer).
//
// A request for one namespace is answered from the all-namespaces informer of the same
// resource and field selector when that one is serving (listed, not stale): filtered by
// namespace, and the namespace's own informer, if any, is stopped. Otherwise (none, still
// listing, failing) the namespace has its own informer, so an all-namespaces request (e.g.
// `kubectl top pods -A`) that the API refuses or that does not fit the object budget never
// takes the namespaces' answers with it. Thread-safe; the destructor stops every informer.
class CachedObjectLister : public ObjectLister {
 public:
  using SteadyClock = std::chrono::steady_clock;

  // `metrics` may be null (nothing recorded).
  CachedObjectLister(std::shared_ptr<KubeApi> api, ObjectListerOptions options,
                     std::shared_ptr<telemetry::SelfMetrics> metrics);
  ~CachedObjectLister() override;
  CachedObjectLister(const CachedObjectLister&) = delete;
  CachedObjectLister& operator=(const CachedObjectLister&) = delete;

  // Throws std::runtime_error (a KubeError) when the Kubernetes API cannot answer.
  std::vector<std::string> listNames(const ResourceInfo& resource,
                                     const std::string& namespace_name,
                                     const promql::LabelSelector& selector) override;
  // Throws std::runtime_error (a KubeError) when the Kubernetes API cannot answer.
  std::vector<ObjectMeta> listObjects(const ResourceInfo& resource,
                                      const std::string& namespace_name,
                                      const promql::LabelSelector& selector,
                                      const std::string& field_selector = "") override;

  // Stops every informer (their watches end at once) and fails later requests. Idempotent.
  void stop();

  struct Stats {
    std::size_t hits = 0;    // answered from a listed informer
    std::size_t misses = 0;  // waited for a first LIST
    std::size_t list_calls = 0;
    std::size_t watch_calls = 0;
    std::size_t stale_answers = 0;  // answered while the API was failing
    std::size_t cached_objects = 0;
    std::size_t entries = 0;  // informers running
  };
  Stats stats() const;

 private:
  struct Entry {
    std::shared_ptr<Informer> informer;
    SteadyClock::time_point last_read;
  };

  // The objects of the informer that answers for (resource, namespace, field selector), all
  // namespaces when it is the all-namespaces one; sorted by namespace, then name.
  std::shared_ptr<const std::vector<ObjectMeta>> read(const ResourceInfo& resource,
                                                      const std::string& namespace_name,
                                                      const std::string& field_selector);
  std::shared_ptr<Informer> informerFor(const ResourceInfo& resource,
                                        const std::string& namespace_name,
                                        const std::string& field_selector, bool& first);
  // Requires mutex_: asks the entry's informer to stop and keeps it in retired_ until its
  // thread has ended. Returns the next entry.
  std::map<std::string, Entry>::iterator retire(std::map<std::string, Entry>::iterator entry);

  std::shared_ptr<KubeApi> api_;
  ObjectListerOptions options_;
  std::shared_ptr<telemetry::SelfMetrics> metrics_;

  mutable std::mutex mutex_;  // guards the map only; never held while waiting on an informer
  std::map<std::string, Entry> entries_;
  std::shared_ptr<ObjectBudget> budget_;
  std::vector<std::shared_ptr<Informer>> retired_;  // stopping; released once finished
  SteadyClock::time_point last_sweep_{};
  bool stopped_ = false;
  std::size_t hits_ = 0;
  std::size_t misses_ = 0;
};

}  // namespace metrics_adapter::kube
