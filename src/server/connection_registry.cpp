#include "server/server_state.h"

namespace metrics_adapter::server {

void ConnectionRegistry::add(const std::shared_ptr<Connection>& connection) {
  std::lock_guard lock(mutex_);
  connections_.emplace(connection.get(), connection);
}

void ConnectionRegistry::remove(const Connection* connection) {
  std::lock_guard lock(mutex_);
  connections_.erase(connection);
}

std::size_t ConnectionRegistry::size() const {
  std::lock_guard lock(mutex_);
  return connections_.size();
}

std::vector<std::shared_ptr<Connection>> ConnectionRegistry::snapshot() const {
  std::vector<std::shared_ptr<Connection>> live;
  std::lock_guard lock(mutex_);
  live.reserve(connections_.size());
  for (const auto& [key, weak] : connections_) {
    if (auto connection = weak.lock()) live.push_back(std::move(connection));
  }
  return live;
}

}  // namespace metrics_adapter::server
