#include "kube/informer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <utility>

namespace metrics_adapter::kube {
namespace {

// Metadata only: names, labels and the like are all the lister needs, a fraction of the
// bytes of full objects (client-go's metadata informers ask the same way).
constexpr std::string_view kListAccept =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
constexpr std::string_view kWatchAccept =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
// The server ends a watch at timeoutSeconds; past this margin the client gives up on it.
constexpr std::chrono::seconds kWatchDeadlineMargin{30};
// A watch that ends sooner than this with no event is counted as a failure, so a server that
// closes every watch at once is not asked again in a tight loop.
constexpr std::chrono::seconds kShortWatch{1};

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

const nlohmann::json* member(const nlohmann::json& object, const char* name) {
  if (!object.is_object()) return nullptr;
  auto found = object.find(name);
  return found == object.end() ? nullptr : &*found;
}

std::string stringMember(const nlohmann::json* object, const char* name) {
  const nlohmann::json* value = object ? member(*object, name) : nullptr;
  return value && value->is_string() ? value->get<std::string>() : std::string();
}

// An object's metadata as the store keeps it; nullopt without a name.
std::optional<ObjectMeta> metaOf(const nlohmann::json& object) {
  const nlohmann::json* metadata = member(object, "metadata");
  ObjectMeta meta;
  meta.name = stringMember(metadata, "name");
  if (meta.name.empty()) return std::nullopt;
  meta.namespace_name = stringMember(metadata, "namespace");
  meta.creation_timestamp = stringMember(metadata, "creationTimestamp");
  if (const nlohmann::json* labels = member(*metadata, "labels"); labels && labels->is_object()) {
    for (const auto& [key, value] : labels->items()) {
      if (value.is_string()) meta.labels.emplace(key, value.get<std::string>());
    }
  }
  return meta;
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

std::string informerKey(const ResourceInfo& resource, const std::string& namespace_name,
                        const std::string& field_selector) {
  std::string key = resource.groupResource() + "/" + (resource.namespaced ? namespace_name : "");
  if (!field_selector.empty()) key += "?" + field_selector;
  return key;
}

bool ObjectBudget::take(std::size_t count) {
  std::size_t used = used_.load();
  do {
    if (count > limit_ - std::min(used, limit_)) return false;
  } while (!used_.compare_exchange_weak(used, used + count));
  return true;
}

void ObjectBudget::give(std::size_t count) { used_ -= std::min(count, used_.load()); }

std::chrono::milliseconds backoffDelay(unsigned failures, std::chrono::milliseconds initial,
                                       std::chrono::milliseconds max, double jitter) {
  if (failures == 0) return std::chrono::milliseconds(0);
  std::chrono::milliseconds base = initial;
  for (unsigned i = 1; i < failures && base < max; ++i) base *= 2;
  base = std::min(base, max);
  jitter = std::clamp(jitter, 0.0, 1.0);
  return std::chrono::milliseconds(
      static_cast<long long>(static_cast<double>(base.count()) * (0.5 + jitter / 2)));
}

Informer::Informer(std::shared_ptr<KubeApi> api, ResourceInfo resource, std::string namespace_name,
                   InformerOptions options, std::shared_ptr<telemetry::SelfMetrics> metrics,
                   std::function<double()> jitter)
    : api_(std::move(api)),
      resource_(std::move(resource)),
      namespace_name_(std::move(namespace_name)),
      key_(informerKey(resource_, namespace_name_, options.field_selector)),
      path_(listPath(resource_, namespace_name_)),
      query_(options.field_selector.empty()
                 ? ""
                 : "&fieldSelector=" + urlEncode(options.field_selector)),
      options_(std::move(options)),
      metrics_(std::move(metrics)),
      jitter_(std::move(jitter)) {}

Informer::~Informer() {
  stop();
  if (options_.budget) options_.budget->give(store_.size());
}

void Informer::start() {
  std::lock_guard lock(mutex_);
  if (started_ || stopping_) return;
  started_ = true;
  thread_ = std::thread([this] { run(); });
}

void Informer::requestStop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  canceller_->cancelAll();
}

void Informer::stop() {
  requestStop();
  if (thread_.joinable()) thread_.join();
}

bool Informer::finished() const {
  std::lock_guard lock(mutex_);
  return finished_ || !started_;
}

ObjectSnapshot Informer::objects(SteadyClock::time_point deadline) {
  std::unique_lock lock(mutex_);
  if (!has_list_ && !stopping_) {
    if (failure_ && SteadyClock::now() < retry_at_) throw *failure_;
    kick_ = true;
    changed_.notify_all();
    const std::size_t seen = attempts_done_;
    changed_.wait_until(lock, deadline,
                        [&] { return has_list_ || stopping_ || attempts_done_ != seen; });
  }
  if (stopping_) throw KubeError(0, "the object lister is shutting down");
  if (!has_list_) {
    if (failure_) throw *failure_;
    KubeError timeout(0, "the Kubernetes API did not list " + key_ + " in time");
    throw timeout.markTimeout();
  }
  if (failing_since_) {
    if (SteadyClock::now() - *failing_since_ >= options_.max_stale && failure_) throw *failure_;
    ++stats_.stale_answers;
  }
  return snapshot();
}

bool Informer::serving() const {
  std::lock_guard lock(mutex_);
  return has_list_ && !stopping_ &&
         !(failure_ && failing_since_ &&
           SteadyClock::now() - *failing_since_ >= options_.max_stale);
}

ObjectSnapshot Informer::snapshot() {
  if (dirty_ || !snapshot_) {
    auto objects = std::make_shared<std::vector<ObjectMeta>>();
    objects->reserve(store_.size());
    objects->assign(store_.begin(), store_.end());
    snapshot_ = std::move(objects);
    dirty_ = false;
  }
  return snapshot_;
}

Informer::Stats Informer::stats() const {
  std::lock_guard lock(mutex_);
  Stats stats = stats_;
  stats.objects = store_.size();
  stats.resource_version = resource_version_;
  return stats;
}

void Informer::list(ObjectStore& objects, std::string& resource_version) const {
  const std::string base = path_ + "?limit=" + std::to_string(options_.page_size) + query_;
  // Enough pages for max_objects at page_size each: an API that keeps answering "continue"
  // with few items cannot keep the LIST going forever.
  const std::size_t max_pages =
      options_.max_objects / std::max<std::size_t>(options_.page_size, 1) + 2;
  const auto too_large = [&] {
    return KubeError(0, "the LIST of " + path_ + " holds more than " +
                            std::to_string(options_.max_objects) +
                            " objects, the most the adapter keeps for one list");
  };
  std::string continue_token;
  std::size_t pages = 0;
  do {
    if (++pages > max_pages) throw too_large();
    std::string page_path = base;
    if (!continue_token.empty()) page_path += "&continue=" + urlEncode(continue_token);
    const nlohmann::json page = api_->get(page_path, kListAccept, options_.list_timeout);
    const nlohmann::json* metadata = member(page, "metadata");
    continue_token = stringMember(metadata, "continue");
    // A paged LIST is one consistent snapshot; its version is the one to watch from. Each page
    // carries it; the last one read is kept.
    if (std::string version = stringMember(metadata, "resourceVersion"); !version.empty()) {
      resource_version = std::move(version);
    }
    const nlohmann::json* items = member(page, "items");
    if (items == nullptr || !items->is_array()) break;
    for (const auto& item : *items) {
      auto meta = metaOf(item);
      if (!meta) continue;
      if (objects.size() >= options_.max_objects) throw too_large();
      objects.erase(*meta);  // the same object twice in one LIST (not expected): the last wins
      objects.insert(std::move(*meta));
    }
  } while (!continue_token.empty());
}

void Informer::run() {
  std::unique_lock lock(mutex_);
  runLoop(lock);
  finished_ = true;
}

void Informer::runLoop(std::unique_lock<std::mutex>& lock) {
  while (!stopping_) {
    if (need_list_) {
      const char* reason = list_reason_;
      lock.unlock();
      if (metrics_) metrics_->countObjectList(reason);
      ObjectStore listed;
      std::string version;
      std::optional<KubeError> error;
      try {
        list(listed, version);
      } catch (const KubeError& e) {
        error = e;
      } catch (const std::exception& e) {
        error = KubeError(0, e.what());
      }
      lock.lock();
      ++attempts_done_;
      kick_ = false;
      if (error) {
        changed_.notify_all();
        list_reason_ = "retry";
        fail(lock, *error, /*listing=*/true);
        continue;
      }
      if (options_.budget && listed.size() > store_.size() &&
          !options_.budget->take(listed.size() - store_.size())) {
        list_reason_ = "retry";
        changed_.notify_all();
        fail(lock, overBudget(), /*listing=*/true);
        continue;
      }
      if (options_.budget && listed.size() < store_.size()) {
        options_.budget->give(store_.size() - listed.size());
      }
      store_ = std::move(listed);
      dirty_ = true;
      resource_version_ = std::move(version);
      need_list_ = false;
      has_list_ = true;
      failure_.reset();
      failing_since_.reset();
      failures_ = 0;
      ++stats_.lists;
      changed_.notify_all();
      continue;
    }
    const std::string version = resource_version_;
    ++stats_.watches;
    lock.unlock();
    std::optional<KubeError> error;
    const auto started = SteadyClock::now();
    const std::size_t events_before = stats().events;
    const WatchEnd end = watch(version, error);
    lock.lock();
    const bool quiet = stats_.events == events_before;
    switch (end) {
      case WatchEnd::kStopped:
        break;
      case WatchEnd::kGone:
        // The version left the server's window: only a new LIST can say what changed since.
        ++stats_.gone;
        if (metrics_) metrics_->countObjectWatch("gone");
        SPDLOG_INFO("watch of {} expired (410 Gone at resourceVersion {}): listing again", key_,
                    version);
        need_list_ = true;
        list_reason_ = "gone";
        resource_version_.clear();
        break;
      case WatchEnd::kClosed:
        if (metrics_) metrics_->countObjectWatch("closed");
        if (quiet && SteadyClock::now() - started < kShortWatch) {
          fail(lock, KubeError(0, "the Kubernetes API ended the watch of " + path_ + " at once"),
               /*listing=*/false);
        } else {
          failures_ = 0;
          failure_.reset();
          failing_since_.reset();
        }
        break;
      case WatchEnd::kFailed:
        if (metrics_) metrics_->countObjectWatch("error");
        if (!quiet) failures_ = 0;  // it worked for a while: start the backoff over
        fail(lock, error.value_or(KubeError(0, "the watch of " + path_ + " failed")),
             /*listing=*/false);
        break;
    }
  }
}

Informer::WatchEnd Informer::watch(const std::string& resource_version,
                                   std::optional<KubeError>& error) {
  // client-go's spread: timeoutSeconds in [watch_timeout, 2 x watch_timeout).
  const auto timeout_seconds = static_cast<long long>(
      static_cast<double>(options_.watch_timeout.count()) * (1.0 + jitter_()));
  WatchRequest request;
  request.path = path_ + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=" +
                 std::to_string(std::max(1LL, timeout_seconds)) + query_;
  if (!resource_version.empty()) request.path += "&resourceVersion=" + urlEncode(resource_version);
  request.accept = std::string(kWatchAccept);
  request.timeout = std::chrono::seconds(timeout_seconds) + kWatchDeadlineMargin;
  request.canceller = canceller_;
  try {
    api_->watch(request, [&](WatchEvent&& event) { return apply(std::move(event), error); });
  } catch (const KubeError& e) {
    error = e;
  } catch (const std::exception& e) {
    error = KubeError(0, e.what());
  }
  std::lock_guard lock(mutex_);
  if (stopping_) return WatchEnd::kStopped;
  if (!error) return WatchEnd::kClosed;
  if (error->httpStatus() == 410) return WatchEnd::kGone;
  return WatchEnd::kFailed;
}

bool Informer::apply(WatchEvent&& event, std::optional<KubeError>& error) {
  std::lock_guard lock(mutex_);
  if (stopping_) return false;
  if (event.type == "ERROR") {
    // A Status: 410 Gone (Expired) when the version is too old, anything else a failure.
    const auto* code = member(event.object, "code");
    const int status = code && code->is_number_integer() ? code->get<int>() : 0;
    std::string message = stringMember(&event.object, "message");
    if (message.empty()) message = "no message";
    error = KubeError(status, "the Kubernetes API ended the watch of " + path_ + " with " +
                                  (status ? "HTTP " + std::to_string(status) : "an error") + ": " +
                                  message);
    return false;
  }
  const nlohmann::json* metadata = member(event.object, "metadata");
  if (std::string version = stringMember(metadata, "resourceVersion"); !version.empty()) {
    resource_version_ = std::move(version);
  }
  // Progress of any kind means the API answers again.
  failing_since_.reset();
  failure_.reset();
  if (event.type == "BOOKMARK") return true;
  const bool deleted = event.type == "DELETED";
  if (!deleted && event.type != "ADDED" && event.type != "MODIFIED") {
    SPDLOG_DEBUG("watch of {}: ignoring an event of type {}", key_, event.type);
    return true;
  }
  auto meta = metaOf(event.object);
  if (!meta) return true;
  ++stats_.events;
  dirty_ = true;
  if (deleted) {
    if (store_.erase(*meta) > 0 && options_.budget) options_.budget->give(1);
    return true;
  }
  // A set's elements are const: the node is taken out, updated and put back (no allocation).
  if (auto node = store_.extract(*meta)) {
    node.value() = std::move(*meta);
    store_.insert(std::move(node));
    return true;
  }
  const bool within_list_bound = store_.size() < options_.max_objects;
  if (!within_list_bound || (options_.budget && !options_.budget->take(1))) {
    // Dropping the event would leave a store that looks current but is not; list again, which
    // fails the same way until the resource shrinks, and the store ages out by max_stale.
    need_list_ = true;
    list_reason_ = "retry";
    error = within_list_bound
                ? overBudget()
                : KubeError(0, "the watch of " + path_ + " would hold more than " +
                                   std::to_string(options_.max_objects) +
                                   " objects, the most the adapter keeps for one list");
    return false;
  }
  store_.insert(std::move(*meta));
  return true;
}

KubeError Informer::overBudget() const {
  return KubeError(0, "listing " + path_ +
                          " would take the objects the adapter holds over all "
                          "lists past " +
                          std::to_string(options_.budget->limit()));
}

void Informer::fail(std::unique_lock<std::mutex>& lock, const KubeError& error, bool listing) {
  ++stats_.failures;
  ++failures_;
  failure_ = error;
  const auto now = SteadyClock::now();
  if (!failing_since_) failing_since_ = now;
  if (has_list_ && !listing && failures_ == 1) {
    // One broken stream is routine (a proxy's idle timeout, an API server restart); it is news
    // when the next watch fails too.
    SPDLOG_INFO("watch of {} ended ({}); watching again from resourceVersion {}", key_,
                error.what(), resource_version_);
  } else if (has_list_) {
    SPDLOG_WARN("listing {} failed, serving the list from {}s ago: {}", key_,
                std::chrono::duration_cast<std::chrono::seconds>(now - *failing_since_).count(),
                error.what());
  } else {
    SPDLOG_WARN("{} {} failed: {}", listing ? "listing" : "watching", key_, error.what());
  }
  const std::chrono::milliseconds retry_after = error.retryAfter();
  retry_at_ = now + retry_after;
  const auto delay =
      std::max(backoffDelay(failures_, options_.backoff_initial, options_.backoff_max, jitter_()),
               retry_after);
  // A reader waiting for a first list cuts the backoff short, unless the API asked for the wait.
  changed_.wait_until(lock, now + delay, [&] {
    return stopping_ || (kick_ && !has_list_ && SteadyClock::now() >= retry_at_);
  });
}

}  // namespace metrics_adapter::kube
