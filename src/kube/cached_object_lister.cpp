#include "metrics_adapter/kube/cached_object_lister.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "metrics_adapter/telemetry/self_metrics.h"

namespace metrics_adapter::kube {
namespace {

// Metadata only: names and labels are all the lister needs, and they are a fraction of the
// bytes of full objects (client-go's metadata informers ask the same way).
constexpr std::string_view kMetadataAccept =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

std::string urlEncode(const std::string& text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

}  // namespace

std::string listPath(const ResourceInfo& resource, const std::string& namespace_name) {
  std::string path = resource.group.empty() ? "/api/" + resource.version
                                            : "/apis/" + resource.group + "/" + resource.version;
  if (resource.namespaced && !namespace_name.empty()) {
    path += "/namespaces/" + urlEncode(namespace_name);
  }
  return path + "/" + resource.plural;
}

CachedObjectLister::CachedObjectLister(std::shared_ptr<KubeApi> api, ObjectListerOptions options,
                                       std::function<SteadyClock::time_point()> now)
    : api_(std::move(api)), options_(options), now_(std::move(now)) {}

std::vector<CachedObjectLister::Object> CachedObjectLister::fetch(
    const ResourceInfo& resource, const std::string& namespace_name) {
  std::vector<Object> objects;
  const std::string path = listPath(resource, namespace_name);
  const std::string base = path + "?limit=" + std::to_string(options_.page_size);
  // Enough pages for max_objects at page_size each: an API that keeps answering "continue"
  // with few items cannot keep the LIST going forever.
  const std::size_t max_pages =
      options_.max_objects / std::max<std::size_t>(options_.page_size, 1) + 2;
  const auto too_large = [&] {
    return KubeError(0, "the LIST of " + path + " holds more than " +
                            std::to_string(options_.max_objects) +
                            " objects, the most the adapter keeps for one list");
  };
  std::string continue_token;
  std::size_t pages = 0;
  do {
    if (++pages > max_pages) throw too_large();
    std::string page_path = base;
    if (!continue_token.empty()) page_path += "&continue=" + urlEncode(continue_token);
    nlohmann::json page = api_->get(page_path, kMetadataAccept, options_.timeout);
    continue_token.clear();
    if (auto metadata = page.find("metadata"); metadata != page.end() && metadata->is_object()) {
      auto token = metadata->find("continue");
      if (token != metadata->end() && token->is_string())
        continue_token = token->get<std::string>();
    }
    auto items = page.find("items");
    if (items == page.end() || !items->is_array()) break;
    for (const auto& item : *items) {
      auto metadata = item.find("metadata");
      if (metadata == item.end() || !metadata->is_object()) continue;
      auto name = metadata->find("name");
      if (name == metadata->end() || !name->is_string()) continue;
      if (objects.size() >= options_.max_objects) throw too_large();
      Object object{name->get<std::string>(), {}};
      if (auto labels = metadata->find("labels");
          labels != metadata->end() && labels->is_object()) {
        for (const auto& [key, value] : labels->items()) {
          if (value.is_string()) object.labels.emplace(key, value.get<std::string>());
        }
      }
      objects.push_back(std::move(object));
    }
  } while (!continue_token.empty());
  return objects;
}

std::vector<std::string> CachedObjectLister::listNames(const ResourceInfo& resource,
                                                       const std::string& namespace_name,
                                                       const promql::LabelSelector& selector) {
  const std::shared_ptr<const std::vector<Object>> objects = objectsOf(resource, namespace_name);
  std::vector<std::string> names;
  for (const auto& object : *objects) {
    if (promql::matches(selector, object.labels)) names.push_back(object.name);
  }
  return names;
}

std::shared_ptr<const std::vector<CachedObjectLister::Object>> CachedObjectLister::objectsOf(
    const ResourceInfo& resource, const std::string& namespace_name) {
  const std::string key = resource.groupResource() + "/" + namespace_name;
  std::unique_lock lock(mutex_);
  for (;;) {
    auto it = entries_.find(key);
    if (it != entries_.end() && it->second.objects &&
        now_() - it->second.fetched_at < options_.ttl) {
      ++stats_.hits;
      telemetry::SelfMetrics::instance().countObjectCache(true);
      return it->second.objects;
    }
    if (it != entries_.end() && it->second.loading) {
      loaded_.wait(lock);  // another request is listing this key: share its answer
      continue;
    }
    if (it != entries_.end() && it->second.failure && now_() < it->second.retry_at) {
      // Not asking again yet: the last list if it is recent enough, else the last failure.
      if (auto stale = staleObjects(it->second, key, "")) return stale;
      throw *it->second.failure;
    }
    ++stats_.misses;
    telemetry::SelfMetrics::instance().countObjectCache(false);
    ++stats_.list_calls;
    evictIfFull();
    entries_[key].loading = true;
    lock.unlock();
    std::vector<Object> fetched;
    try {
      fetched = fetch(resource, namespace_name);
    } catch (const std::exception& e) {
      lock.lock();
      Entry& entry = entries_[key];
      entry.loading = false;
      loaded_.notify_all();
      const auto* kube_error = dynamic_cast<const KubeError*>(&e);
      auto delay = kube_error ? std::chrono::milliseconds(kube_error->retryAfter())
                              : std::chrono::milliseconds(0);
      auto stale = staleObjects(entry, key, e.what());
      // A stale answer stands for one more ttl, so a failing API is not asked on every request.
      if (stale) delay = std::max(delay, options_.ttl);
      if (delay.count() > 0) {
        entry.failure = kube_error ? *kube_error : KubeError(0, e.what());
        entry.retry_at = now_() + delay;
      }
      if (stale) return stale;
      throw;
    } catch (...) {
      lock.lock();
      entries_[key].loading = false;
      loaded_.notify_all();
      throw;
    }
    lock.lock();
    auto& entry = entries_[key];
    entry.loading = false;
    entry.failure.reset();
    entry.objects = std::make_shared<const std::vector<Object>>(std::move(fetched));
    entry.fetched_at = now_();
    loaded_.notify_all();
    evictBeyondObjectLimit(key);
    return entry.objects;
  }
}

std::shared_ptr<const std::vector<CachedObjectLister::Object>> CachedObjectLister::staleObjects(
    const Entry& entry, const std::string& key, const std::string& why) {
  if (!entry.objects) return nullptr;
  const auto age = now_() - entry.fetched_at;
  if (age >= options_.ttl + options_.max_stale) return nullptr;
  ++stats_.stale_answers;
  if (!why.empty()) {
    spdlog::warn("listing {} failed, serving the list from {}s ago: {}", key,
                 std::chrono::duration_cast<std::chrono::seconds>(age).count(), why);
  }
  return entry.objects;
}

void CachedObjectLister::evictIfFull() {
  while (entries_.size() >= options_.max_entries) {
    auto oldest = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.loading) continue;
      if (oldest == entries_.end() || it->second.fetched_at < oldest->second.fetched_at)
        oldest = it;
    }
    if (oldest == entries_.end()) return;
    entries_.erase(oldest);
  }
}

void CachedObjectLister::evictBeyondObjectLimit(const std::string& keep) {
  std::size_t total = 0;
  for (const auto& [key, entry] : entries_) total += entry.objects ? entry.objects->size() : 0;
  while (total > options_.max_cached_objects) {
    auto oldest = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.loading || !it->second.objects || it->first == keep) continue;
      if (oldest == entries_.end() || it->second.fetched_at < oldest->second.fetched_at)
        oldest = it;
    }
    if (oldest == entries_.end()) return;
    total -= oldest->second.objects->size();
    entries_.erase(oldest);
  }
}

CachedObjectLister::Stats CachedObjectLister::stats() const {
  std::lock_guard lock(mutex_);
  Stats stats = stats_;
  stats.entries = entries_.size();
  for (const auto& [key, entry] : entries_) {
    stats.cached_objects += entry.objects ? entry.objects->size() : 0;
  }
  return stats;
}

}  // namespace metrics_adapter::kube
