#include "metrics_adapter/kube/cached_object_lister.h"

#include <spdlog/spdlog.h>

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
  const std::string base =
      listPath(resource, namespace_name) + "?limit=" + std::to_string(options_.page_size);
  std::string continue_token;
  do {
    std::string path = base;
    if (!continue_token.empty()) path += "&continue=" + urlEncode(continue_token);
    nlohmann::json page = api_->get(path, kMetadataAccept, options_.timeout);
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
  const std::string key = resource.groupResource() + "/" + namespace_name;
  std::shared_ptr<const std::vector<Object>> objects;
  {
    std::unique_lock lock(mutex_);
    for (;;) {
      auto it = entries_.find(key);
      if (it != entries_.end() && it->second.objects &&
          now_() - it->second.fetched_at < options_.ttl) {
        ++stats_.hits;
        telemetry::SelfMetrics::instance().countObjectCache(true);
        objects = it->second.objects;
        break;
      }
      if (it != entries_.end() && it->second.loading) {
        loaded_.wait(lock);  // another request is listing this key: share its answer
        continue;
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
      } catch (...) {
        lock.lock();
        entries_[key].loading = false;
        loaded_.notify_all();
        throw;
      }
      lock.lock();
      auto& entry = entries_[key];
      entry.loading = false;
      entry.objects = std::make_shared<const std::vector<Object>>(std::move(fetched));
      entry.fetched_at = now_();
      objects = entry.objects;
      loaded_.notify_all();
      break;
    }
  }
  std::vector<std::string> names;
  for (const auto& object : *objects) {
    if (promql::matches(selector, object.labels)) names.push_back(object.name);
  }
  return names;
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

CachedObjectLister::Stats CachedObjectLister::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace metrics_adapter::kube
