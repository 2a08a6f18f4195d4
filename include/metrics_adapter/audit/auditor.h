#pragma once

#include <memory>

#include "metrics_adapter/audit/audit_options.h"
#include "metrics_adapter/server/exchange_observer.h"
#include "metrics_adapter/telemetry/self_metrics.h"

namespace metrics_adapter::audit {

class Backend;
struct Policy;

// Writes audit.k8s.io/v1 Events for the answers the server gives, as the policy file says, to
// the log file and/or the webhook. Thread-safe.
class Auditor {
 public:
  // nullptr when auditing is off: no --audit-policy-file, or no backend (neither --audit-log-path
  // nor --audit-webhook-config-file). Logs what is audited where, and warns when a backend is
  // set without a policy file (upstream records nothing then). Throws std::invalid_argument as
  // checkAuditOptions() does, and std::runtime_error when the log file cannot be opened.
  static std::unique_ptr<Auditor> start(const AuditOptions& options,
                                        std::shared_ptr<telemetry::SelfMetrics> metrics);

  Auditor(std::shared_ptr<const Policy> policy, std::vector<std::unique_ptr<Backend>> backends);
  ~Auditor();
  Auditor(const Auditor&) = delete;
  Auditor& operator=(const Auditor&) = delete;

  // Records one answer, before its bytes are written; on any thread. Never throws. In batch mode
  // it only builds the events and queues them (a full buffer drops them, counted buffer_full).
  // Returns false only when a blocking-strict backend could not write the event (the caller
  // then answers 500 instead).
  bool record(const server::Exchange& exchange);

  // Writes what is queued (a few seconds at most, then the rest is dropped and counted) and
  // joins the background threads. Idempotent; the destructor calls it.
  void stop();

 private:
  std::shared_ptr<const Policy> policy_;
  std::vector<std::unique_ptr<Backend>> backends_;
};

}  // namespace metrics_adapter::audit
