#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kube/watch_event.h"
#include "metrics_adapter/kube/kube_client.h"
#include "metrics_adapter/kube/object_lister.h"
#include "metrics_adapter/kube/rest_mapper.h"
#include "metrics_adapter/net/call_canceller.h"
#include "metrics_adapter/telemetry/self_metrics.h"

namespace metrics_adapter::kube {

// Objects held over all the informers that share it, so their sum has a bound. Thread-safe.
class ObjectBudget {
 public:
  explicit ObjectBudget(std::size_t limit) : limit_(limit) {}
  // Takes `count` more objects; false (and nothing taken) past the limit.
  bool take(std::size_t count);
  void give(std::size_t count);
  std::size_t used() const { return used_; }
  std::size_t limit() const { return limit_; }

 private:
  const std::size_t limit_;
  std::atomic<std::size_t> used_{0};
};

struct InformerOptions {
  std::chrono::milliseconds list_timeout{std::chrono::seconds(5)};  // per LIST page
  std::size_t page_size = 500;                                      // LIST ?limit=
  // A LIST with more objects fails, and so does a watch that would grow the store past it.
  std::size_t max_objects = 150000;
  // Asked as timeoutSeconds, spread over [watch_timeout, 2 x watch_timeout) as client-go does,
  // so the watches of many replicas do not all restart at once.
  std::chrono::seconds watch_timeout{300};
  // Waits after failures: backoff_initial doubling up to backoff_max, jittered (backoffDelay).
  std::chrono::milliseconds backoff_initial{800};
  std::chrono::milliseconds backoff_max{std::chrono::seconds(30)};
  // While the API fails, the store is still served for this long after the first failure.
  std::chrono::milliseconds max_stale{std::chrono::minutes(2)};
  // Shared with other informers: a LIST or watch that would take more fails like max_objects.
  std::shared_ptr<ObjectBudget> budget;
  // Sent as fieldSelector= (URL-encoded) on every LIST page and WATCH, as client-go's
  // ListOptions does: the API server then holds back the objects that do not match, and a
  // watched object that stops matching arrives as DELETED. "" = none.
  std::string field_selector;
};

// Orders objects by namespace, then name: the store's key and the order of every snapshot.
struct ByNamespaceAndName {
  bool operator()(const ObjectMeta& a, const ObjectMeta& b) const {
    return a.namespace_name != b.namespace_name ? a.namespace_name < b.namespace_name
                                                : a.name < b.name;
  }
};
using ObjectStore = std::set<ObjectMeta, ByNamespaceAndName>;
// Sorted by ByNamespaceAndName.
using ObjectSnapshot = std::shared_ptr<const std::vector<ObjectMeta>>;

// The LIST path of `resource` in `namespace_name` ("" = cluster scope or all namespaces).
std::string listPath(const ResourceInfo& resource, const std::string& namespace_name);

// Names one informer in logs, errors and the lister's map: "pods/default",
// "pods/?status.phase=Running" (all namespaces). The namespace of a cluster-scoped resource
// is left out.
std::string informerKey(const ResourceInfo& resource, const std::string& namespace_name,
                        const std::string& field_selector);

// The wait before retry number `failures` (1 after the first failure): backoff_initial doubled
// per failure, capped at `max`, then scaled into [1/2, 1) of that by `jitter` in [0, 1).
std::chrono::milliseconds backoffDelay(unsigned failures, std::chrono::milliseconds initial,
                                       std::chrono::milliseconds max, double jitter);

// Keeps the metadata of one resource in one namespace ("" = cluster scope or all namespaces)
// current in memory, as client-go's reflector does: a paged metadata-only LIST gives the objects
// and the list's resourceVersion, then a WATCH from that version applies ADDED, MODIFIED and
// DELETED events and BOOKMARKs move the version on. When a watch ends or breaks, the next one
// starts from the last version (no LIST); only 410 Gone (the version left the server's window)
// lists again. Failures wait with capped, jittered exponential backoff, at least as long as a
// Retry-After asks. One thread per informer, started by start(); stop() ends the watch through
// its canceller and joins. Thread-safe.
class Informer {
 public:
  using SteadyClock = std::chrono::steady_clock;

  // `jitter` returns values in [0, 1) (tests pass a constant).
  Informer(std::shared_ptr<KubeApi> api, ResourceInfo resource, std::string namespace_name,
           InformerOptions options, std::shared_ptr<telemetry::SelfMetrics> metrics,
           std::function<double()> jitter);
  ~Informer();  // stop()
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void start();
  // Idempotent. Returns once the thread has ended: a watch is cancelled at once, a LIST page in
  // flight is waited for (at most list_timeout).
  void stop();
  // stop() without the wait: the thread ends by itself soon after (then finished() is true).
  void requestStop();
  bool finished() const;

  // The objects as of the last event applied, sorted by ByNamespaceAndName. Before the first LIST
  // has succeeded, asks for an attempt now (cutting a backoff short, unless the API asked for
  // Retry-After) and waits for it until `deadline`. Throws KubeError: the last failure when there
  // is no list yet or the failures have lasted longer than max_stale; a timeout when `deadline`
  // passed first.
  ObjectSnapshot objects(SteadyClock::time_point deadline);
  // Whether objects() answers now without waiting or throwing: listed, running, and not failing
  // for longer than max_stale.
  bool serving() const;

  struct Stats {
    std::size_t lists = 0;          // LISTs completed (all pages)
    std::size_t watches = 0;        // watch calls started
    std::size_t events = 0;         // ADDED, MODIFIED and DELETED applied
    std::size_t gone = 0;           // 410 Gone answers (each followed by a LIST)
    std::size_t failures = 0;       // failed LISTs and watches
    std::size_t stale_answers = 0;  // objects() answered while the API was failing
    std::size_t objects = 0;
    std::string resource_version;
  };
  Stats stats() const;
  const std::string& key() const { return key_; }

 private:
  // How one watch call ended.
  enum class WatchEnd { kClosed, kGone, kFailed, kStopped };

  void run();
  void runLoop(std::unique_lock<std::mutex>& lock);
  // One paged LIST; fills `objects` and `resource_version`. Throws KubeError.
  void list(ObjectStore& objects, std::string& resource_version) const;
  WatchEnd watch(const std::string& resource_version, std::optional<KubeError>& error);
  // Applies one event under mutex_; false ends the watch (`error` says why, or it is stopping).
  bool apply(WatchEvent&& event, std::optional<KubeError>& error);
  // Requires mutex_ held: notes a failure and sleeps out its backoff (woken by stop or a reader).
  void fail(std::unique_lock<std::mutex>& lock, const KubeError& error, bool listing);
  ObjectSnapshot snapshot();  // requires mutex_
  KubeError overBudget() const;

  const std::shared_ptr<KubeApi> api_;
  const ResourceInfo resource_;
  const std::string namespace_name_;
  const std::string key_;    // informerKey(): logs and errors
  const std::string path_;   // the LIST path
  const std::string query_;  // "&fieldSelector=..." or "", appended to every LIST and WATCH
  const InformerOptions options_;
  const std::shared_ptr<telemetry::SelfMetrics> metrics_;
  const std::function<double()> jitter_;
  const std::shared_ptr<net::CallCanceller> canceller_ = std::make_shared<net::CallCanceller>();

  mutable std::mutex mutex_;  // never held during a call to the API
  std::condition_variable changed_;
  std::thread thread_;
  bool started_ = false;
  bool finished_ = false;  // run() returned
  bool stopping_ = false;
  bool kick_ = false;  // a reader waits for a LIST: skip the backoff
  bool need_list_ = true;
  const char* list_reason_ = "initial";  // for the self-metric of the next LIST
  bool has_list_ = false;
  std::size_t attempts_done_ = 0;  // LIST attempts finished, for readers waiting on one
  unsigned failures_ = 0;          // consecutive, for the backoff
  std::optional<KubeError> failure_;
  std::optional<SteadyClock::time_point> failing_since_;
  SteadyClock::time_point retry_at_{};  // Retry-After of the last failure
  ObjectStore store_;
  std::string resource_version_;
  ObjectSnapshot snapshot_;  // built from store_ on the first read after a change
  bool dirty_ = true;
  Stats stats_;
};

}  // namespace metrics_adapter::kube
