#pragma once

#include <memory>
#include <string>

#include "metrics_adapter/server/https_server.h"

namespace metrics_adapter::server {

// Plain HTTP/1.1 on a Unix socket (--debug-socket-path), for an operator inside the pod or on
// the node (`curl --unix-socket PATH http://x/metrics`): no TLS and no authentication, as
// upstream serves its debug handlers there; the socket file is made 0600, so only the adapter's
// own user (and root) can connect. One thread; `handler` runs on it, so it must answer from
// memory (metrics, health, flags). Requests are read up to 64 KiB; one request a connection.
class DebugSocketServer {
 public:
  DebugSocketServer(std::string path, RequestHandler handler);
  ~DebugSocketServer();  // stops

  // Removes a stale socket file, binds and listens; throws std::runtime_error naming the path.
  void start();
  void stop();  // closes the socket and removes its file; idempotent

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace metrics_adapter::server
