#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "metrics_adapter/server/https_server.h"
#include "server/request_tracker.h"
#include "server/worker_pool.h"

namespace metrics_adapter::server {

class Connection;

// The live connections, for the connection limit and for closing idle ones on shutdown.
// Thread-safe.
class ConnectionRegistry {
 public:
  void add(const std::shared_ptr<Connection>& connection);
  void remove(const Connection* connection);
  std::size_t size() const;
  std::vector<std::shared_ptr<Connection>> snapshot() const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> connections_;
};

// What every connection of one running server shares.
struct ServerState {
  ServerState(ServerOptions server_options, Handlers request_handlers,
              std::shared_ptr<ExchangeObserver> exchange_observer)
      : options(std::move(server_options)),
        handlers(std::move(request_handlers)),
        observer(std::move(exchange_observer)),
        pool(options.worker_threads, options.max_in_flight) {}

  const ServerOptions options;
  const Handlers handlers;
  const std::shared_ptr<ExchangeObserver> observer;  // may be null
  WorkerPool pool;
  RequestTracker requests;
  ConnectionRegistry connections;
  std::atomic<bool> stopping{false};
};

}  // namespace metrics_adapter::server
