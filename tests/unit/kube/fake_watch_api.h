#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "kube/watch_event.h"
#include "metrics_adapter/kube/kube_client.h"
#include "metrics_adapter/net/call_canceller.h"

namespace metrics_adapter::kube::testing {

// A Kubernetes API for informer tests: LIST pages from a table, and watch streams the test
// drives live. Each watch call takes the next "step" from a queue: events are delivered, an
// end step closes the stream (or throws), and an empty queue blocks the stream until the test
// pushes more or the call's canceller fires.
class FakeWatchApi : public KubeApi {
 public:
  struct End {
    std::optional<KubeError> error;  // thrown when set; the stream closes cleanly otherwise
  };
  using Step = std::variant<WatchEvent, End>;

  nlohmann::json get(const std::string& path, std::string_view,
                     std::chrono::milliseconds) override {
    std::lock_guard lock(mutex_);
    gets_.push_back(path);
    if (list_failure_) throw *list_failure_;
    auto it = pages_.find(path);
    if (it == pages_.end()) throw KubeError(404, "not found: " + path);
    return it->second;
  }

  nlohmann::json post(const std::string&, const nlohmann::json&,
                      std::chrono::milliseconds) override {
    return nullptr;
  }

  void watch(const WatchRequest& request, const WatchHandler& on_event) override {
    std::unique_lock lock(mutex_);
    watches_.push_back(request.path);
    changed_.notify_all();
    if (watch_failure_) throw *watch_failure_;
    for (;;) {
      changed_.wait_for(lock, std::chrono::milliseconds(5), [&] {
        return !steps_.empty() || (request.canceller && request.canceller->cancelled());
      });
      if (request.canceller && request.canceller->cancelled()) {
        throw KubeError(0, "the call was cancelled");
      }
      if (steps_.empty()) continue;
      Step step = std::move(steps_.front());
      steps_.pop_front();
      if (auto* end = std::get_if<End>(&step)) {
        if (end->error) throw *end->error;
        return;
      }
      lock.unlock();
      const bool go_on = on_event(std::move(std::get<WatchEvent>(step)));
      lock.lock();
      ++delivered_;
      changed_.notify_all();
      if (!go_on) return;
    }
  }

  // Test side.
  void setPage(const std::string& path, nlohmann::json page) {
    std::lock_guard lock(mutex_);
    pages_[path] = std::move(page);
  }
  void failLists(std::optional<KubeError> error) {
    std::lock_guard lock(mutex_);
    list_failure_ = std::move(error);
  }
  void failWatches(std::optional<KubeError> error) {
    std::lock_guard lock(mutex_);
    watch_failure_ = std::move(error);
  }
  void push(Step step) {
    std::lock_guard lock(mutex_);
    steps_.push_back(std::move(step));
    changed_.notify_all();
  }
  std::vector<std::string> gets() const {
    std::lock_guard lock(mutex_);
    return gets_;
  }
  std::vector<std::string> watches() const {
    std::lock_guard lock(mutex_);
    return watches_;
  }
  // Waits until `count` watch calls were made and every pushed step was consumed.
  bool waitForWatches(std::size_t count,
                      std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, limit,
                             [&] { return watches_.size() >= count && steps_.empty(); });
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, nlohmann::json> pages_;
  std::optional<KubeError> list_failure_;
  std::optional<KubeError> watch_failure_;
  std::deque<Step> steps_;
  std::vector<std::string> gets_;
  std::vector<std::string> watches_;
  std::size_t delivered_ = 0;
};

inline nlohmann::json metadataObject(const std::string& name, nlohmann::json labels,
                                     const std::string& version = "",
                                     const std::string& namespace_name = "default") {
  nlohmann::json metadata = {{"name", name}, {"namespace", namespace_name}, {"labels", labels}};
  if (!version.empty()) metadata["resourceVersion"] = version;
  return {
      {"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", metadata}};
}

inline nlohmann::json listPage(std::vector<nlohmann::json> items, const std::string& version,
                               const std::string& next = "") {
  nlohmann::json metadata = {{"resourceVersion", version}};
  if (!next.empty()) metadata["continue"] = next;
  return {{"kind", "PartialObjectMetadataList"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", metadata},
          {"items", items}};
}

inline WatchEvent event(const std::string& type, nlohmann::json object) {
  return WatchEvent{type, std::move(object)};
}

inline WatchEvent bookmark(const std::string& version) {
  return WatchEvent{
      "BOOKMARK",
      {{"kind", "PartialObjectMetadata"}, {"metadata", {{"resourceVersion", version}}}}};
}

inline WatchEvent gone() {
  return WatchEvent{"ERROR",
                    {{"kind", "Status"},
                     {"apiVersion", "v1"},
                     {"status", "Failure"},
                     {"message", "too old resource version: 5 (20)"},
                     {"reason", "Expired"},
                     {"code", 410}}};
}

// Polls `condition` every millisecond for up to `limit`.
template <typename Condition>
bool eventually(Condition condition, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return condition();
}

}  // namespace metrics_adapter::kube::testing
