#pragma once

#include <mutex>
#include <set>

namespace metrics_adapter::net {

class HttpCall;

// Ends outbound calls early at shutdown, so no call can hold the process for its whole
// deadline. Calls whose CallContext names a canceller register with it while they run.
// Thread-safe.
class CallCanceller {
 public:
  // Every registered call fails at once (as kUnreachable), and so does every call started
  // later. Idempotent.
  void cancelAll();
  bool cancelled() const;

 private:
  friend class HttpCall;
  // Registers a running call; false (and not registered) once cancelAll() has run.
  bool add(HttpCall* call);
  void remove(HttpCall* call);

  mutable std::mutex mutex_;
  bool cancelled_ = false;
  std::set<HttpCall*> calls_;
};

}  // namespace metrics_adapter::net
