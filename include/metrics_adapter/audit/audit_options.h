#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace metrics_adapter::audit {

// --audit-log-mode / --audit-webhook-mode.
enum class AuditMode {
  kBlocking,        // written in Auditor::record(), on the caller's thread
  kBlockingStrict,  // the same, and record() reports a failed write
  kBatch,           // queued in a bounded buffer and written by a background thread
};

// One backend's -batch-* flags.
struct BatchOptions {
  AuditMode mode = AuditMode::kBlocking;
  std::size_t buffer_size = 10000;  // events queued at most; more are dropped (buffer_full)
  std::size_t max_batch_size = 1;   // events written or sent together at most
  std::chrono::milliseconds max_batch_wait{0};  // how long a batch waits to fill up
  bool throttle_enable = false;                 // a token bucket in front of the batches
  double throttle_qps = 0;                      // batches per second
  int throttle_burst = 0;                       // batches at once
};

// One backend's -truncate-* flags (bytes of the JSON encoding).
struct TruncateOptions {
  bool enabled = false;
  std::int64_t max_event_size = 102400;
  std::int64_t max_batch_size = 10485760;
};

// --audit-log-format.
enum class AuditLogFormat { kJson, kLegacy };

// Everything the --audit-* flags decide, with upstream's (k8s.io/apiserver) defaults.
struct AuditOptions {
  std::string policy_file;

  std::string log_path;  // "-" is stdout; "" turns the log backend off
  AuditLogFormat log_format = AuditLogFormat::kJson;
  std::string log_version = "audit.k8s.io/v1";
  int log_max_age_days = 0;   // 0: backups kept whatever their age
  int log_max_backups = 0;    // 0: every backup kept
  int log_max_size_mb = 0;    // 0: lumberjack's 100 MB
  bool log_compress = false;  // gzip rotated files
  BatchOptions log_batch;     // blocking, buffer 10000, max size 1, no wait, no throttle
  TruncateOptions log_truncate;

  std::string webhook_config_file;  // a kubeconfig; "" turns the webhook backend off
  std::chrono::milliseconds webhook_initial_backoff{std::chrono::seconds(10)};
  std::string webhook_version = "audit.k8s.io/v1";
  BatchOptions webhook_batch{AuditMode::kBatch, 10000, 400, std::chrono::seconds(30), true, 10, 15};
  TruncateOptions webhook_truncate;
};

// One --audit-* flag: `name` without the leading "--". `apply` parses and validates `value` into
// the options and throws std::invalid_argument whose message starts with "--<name>: ". For a
// boolean flag a bare "--name" passes "true".
struct FlagDefinition {
  std::string name;
  std::string help;
  bool boolean = false;
  std::function<void(AuditOptions&, const std::string& value)> apply;
};

// The 31 --audit-* flags of the Kubernetes generic apiserver, in upstream's order.
const std::vector<FlagDefinition>& auditFlags();

// Checks what single flags cannot: combinations, the policy file (read and validated), that the
// log file's directory can be written (or created), and that the webhook's kubeconfig can be
// read and used. Starts nothing and writes nothing. Throws std::invalid_argument naming the flag
// and the file (for the policy: the rule index and field).
void checkAuditOptions(const AuditOptions& options);

}  // namespace metrics_adapter::audit
