#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace metrics_adapter::auth {

// A thread-safe map whose entries expire `ttl` after their insertion and which never holds more
// than `max_entries` (at least one). When full, an insertion first drops expired entries, then
// the entry that would expire soonest. Time comes from the injected clock so tests control it.
template <typename Key, typename Value, typename Hash = std::hash<Key>>
class TtlCache {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = std::function<Clock::time_point()>;

  explicit TtlCache(std::size_t max_entries, Now now = Clock::now)
      : max_entries_(max_entries == 0 ? 1 : max_entries), now_(std::move(now)) {}

  // The value stored under `key`, or nullopt when absent or expired (an expired entry is
  // removed).
  std::optional<Value> get(const Key& key) {
    const Clock::time_point now = now_();
    std::lock_guard lock(mutex_);
    const auto found = entries_.find(key);
    if (found == entries_.end()) return std::nullopt;
    if (found->second.expiry->first <= now) {
      expiries_.erase(found->second.expiry);
      entries_.erase(found);
      return std::nullopt;
    }
    return found->second.value;
  }

  // Stores `value` under `key` until now + `ttl`, replacing any previous entry. A ttl <= 0
  // stores nothing (and removes a previous entry).
  void put(const Key& key, Value value, std::chrono::milliseconds ttl) {
    const Clock::time_point now = now_();
    std::lock_guard lock(mutex_);
    eraseLocked(key);
    if (ttl <= std::chrono::milliseconds::zero()) return;
    if (entries_.size() >= max_entries_) makeRoomLocked(now);
    const auto expiry = expiries_.emplace(now + ttl, key);
    entries_.emplace(key, Entry{std::move(value), expiry});
  }

  void erase(const Key& key) {
    std::lock_guard lock(mutex_);
    eraseLocked(key);
  }

  void clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
    expiries_.clear();
  }

  // Entries held, expired ones not yet dropped included.
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }

  std::size_t maxEntries() const { return max_entries_; }

 private:
  using Expiries = std::multimap<Clock::time_point, Key>;
  struct Entry {
    Value value;
    typename Expiries::iterator expiry;
  };

  void eraseLocked(const Key& key) {
    const auto found = entries_.find(key);
    if (found == entries_.end()) return;
    expiries_.erase(found->second.expiry);
    entries_.erase(found);
  }

  // Drops every expired entry, and the soonest-expiring one if that freed nothing.
  void makeRoomLocked(Clock::time_point now) {
    while (!expiries_.empty() && expiries_.begin()->first <= now) {
      entries_.erase(expiries_.begin()->second);
      expiries_.erase(expiries_.begin());
    }
    if (entries_.size() < max_entries_ || expiries_.empty()) return;
    entries_.erase(expiries_.begin()->second);
    expiries_.erase(expiries_.begin());
  }

  const std::size_t max_entries_;
  const Now now_;
  mutable std::mutex mutex_;
  std::unordered_map<Key, Entry, Hash> entries_;
  Expiries expiries_;  // each entry once, soonest first
};

}  // namespace metrics_adapter::auth
