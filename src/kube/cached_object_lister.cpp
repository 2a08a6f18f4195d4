#include "metrics_adapter/kube/cached_object_lister.h"

#include <algorithm>
#include <random>
#include <span>
#include <utility>

#include "kube/informer.h"

namespace metrics_adapter::kube {
namespace {

// How often at most listNames looks for idle informers to stop.
constexpr std::chrono::minutes kIdleSweepInterval{1};

// Jitter for backoffs and watch timeouts; each informer has its own generator, used only from
// its own thread.
std::function<double()> makeJitter() {
  auto engine = std::make_shared<std::minstd_rand>(std::random_device{}());
  return [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
}

// The objects of `namespace_name` in `objects` (sorted by namespace, then name); all of them
// for a cluster-scoped resource or all namespaces.
std::span<const ObjectMeta> objectsInNamespace(const std::vector<ObjectMeta>& objects,
                                               const ResourceInfo& resource,
                                               const std::string& namespace_name) {
  if (!resource.namespaced || namespace_name.empty()) return objects;
  const auto first = std::lower_bound(objects.begin(), objects.end(), namespace_name,
                                      [](const ObjectMeta& object, const std::string& name) {
                                        return object.namespace_name < name;
                                      });
  const auto last = std::upper_bound(first, objects.end(), namespace_name,
                                     [](const std::string& name, const ObjectMeta& object) {
                                       return name < object.namespace_name;
                                     });
  return {first, last};
}

}  // namespace

CachedObjectLister::CachedObjectLister(std::shared_ptr<KubeApi> api, ObjectListerOptions options,
                                       std::shared_ptr<telemetry::SelfMetrics> metrics)
    : api_(std::move(api)),
      options_(options),
      metrics_(std::move(metrics)),
      budget_(std::make_shared<ObjectBudget>(options_.max_cached_objects)) {}

CachedObjectLister::~CachedObjectLister() { stop(); }

void CachedObjectLister::stop() {
  std::map<std::string, Entry> entries;
  std::vector<std::shared_ptr<Informer>> retired;
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    entries.swap(entries_);
    retired.swap(retired_);
  }
  // Every watch is cancelled first, then each thread is joined: shutdown takes one cancel's
  // time, not one per informer.
  for (auto& [key, entry] : entries) entry.informer->requestStop();
  for (auto& [key, entry] : entries) entry.informer->stop();
  for (auto& informer : retired) informer->stop();
}

std::vector<std::string> CachedObjectLister::listNames(const ResourceInfo& resource,
                                                       const std::string& namespace_name,
                                                       const promql::LabelSelector& selector) {
  const ObjectSnapshot objects = read(resource, namespace_name, "");
  std::vector<std::string> names;
  for (const auto& object : objectsInNamespace(*objects, resource, namespace_name)) {
    if (promql::matches(selector, object.labels)) names.push_back(object.name);
  }
  return names;
}

std::vector<ObjectMeta> CachedObjectLister::listObjects(const ResourceInfo& resource,
                                                        const std::string& namespace_name,
                                                        const promql::LabelSelector& selector,
                                                        const std::string& field_selector) {
  const ObjectSnapshot objects = read(resource, namespace_name, field_selector);
  std::vector<ObjectMeta> matching;
  for (const auto& object : objectsInNamespace(*objects, resource, namespace_name)) {
    if (promql::matches(selector, object.labels)) matching.push_back(object);
  }
  return matching;
}

ObjectSnapshot CachedObjectLister::read(const ResourceInfo& resource,
                                        const std::string& namespace_name,
                                        const std::string& field_selector) {
  bool first = false;
  const std::shared_ptr<Informer> informer =
      informerFor(resource, namespace_name, field_selector, first);
  if (metrics_) metrics_->countObjectCache(!first);
  return informer->objects(SteadyClock::now() + 2 * options_.timeout);
}

std::shared_ptr<Informer> CachedObjectLister::informerFor(const ResourceInfo& resource,
                                                          const std::string& namespace_name,
                                                          const std::string& field_selector,
                                                          bool& first) {
  // The namespace of a cluster-scoped resource means nothing: one informer for all requests.
  const std::string scope = resource.namespaced ? namespace_name : std::string();
  const std::string key = informerKey(resource, scope, field_selector);
  std::lock_guard lock(mutex_);
  if (stopped_) throw KubeError(0, "the object lister is shutting down");
  const auto now = SteadyClock::now();
  if (now - last_sweep_ >= kIdleSweepInterval) {
    last_sweep_ = now;
    for (auto it = entries_.begin(); it != entries_.end();) {
      it = now - it->second.last_read >= options_.idle ? retire(it) : std::next(it);
    }
  }
  if (!scope.empty()) {
    auto everywhere = entries_.find(informerKey(resource, "", field_selector));
    if (everywhere != entries_.end() && everywhere->second.informer->serving()) {
      ++hits_;
      everywhere->second.last_read = now;
      if (auto own = entries_.find(key); own != entries_.end()) retire(own);
      return everywhere->second.informer;
    }
  }
  auto found = entries_.find(key);
  if (found != entries_.end()) {
    ++hits_;
    found->second.last_read = now;
    return found->second.informer;
  }
  ++misses_;
  first = true;
  while (!entries_.empty() && entries_.size() >= std::max<std::size_t>(options_.max_informers, 1)) {
    retire(std::min_element(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
      return a.second.last_read < b.second.last_read;
    }));
  }
  // Informers stopped earlier whose threads have ended are released here, off the hot path.
  std::erase_if(retired_,
                [](const std::shared_ptr<Informer>& informer) { return informer->finished(); });
  InformerOptions options;
  options.list_timeout = options_.timeout;
  options.page_size = options_.page_size;
  options.max_objects = options_.max_objects;
  options.watch_timeout = options_.watch_timeout;
  options.backoff_initial = options_.backoff_initial;
  options.backoff_max = options_.backoff_max;
  options.max_stale = options_.max_stale;
  options.budget = budget_;
  options.field_selector = field_selector;
  auto informer =
      std::make_shared<Informer>(api_, resource, scope, options, metrics_, makeJitter());
  informer->start();
  entries_[key] = Entry{informer, now};
  return informer;
}

std::map<std::string, CachedObjectLister::Entry>::iterator CachedObjectLister::retire(
    std::map<std::string, Entry>::iterator entry) {
  entry->second.informer->requestStop();  // never joined under the lock: see stop()
  retired_.push_back(std::move(entry->second.informer));
  return entries_.erase(entry);
}

CachedObjectLister::Stats CachedObjectLister::stats() const {
  std::lock_guard lock(mutex_);
  Stats stats;
  stats.hits = hits_;
  stats.misses = misses_;
  stats.entries = entries_.size();
  for (const auto& [key, entry] : entries_) {
    const Informer::Stats informer = entry.informer->stats();
    stats.list_calls += informer.lists;
    stats.watch_calls += informer.watches;
    stats.stale_answers += informer.stale_answers;
    stats.cached_objects += informer.objects;
  }
  return stats;
}

}  // namespace metrics_adapter::kube
