#include "metrics_adapter/audit/audit_options.h"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "audit/policy.h"
#include "audit/sinks.h"
#include "metrics_adapter/kube/kube_client.h"

namespace metrics_adapter::audit {
namespace {

[[noreturn]] void invalid(std::string_view flag, const std::string& message) {
  throw std::invalid_argument("--" + std::string(flag) + ": " + message);
}

std::string inQuotes(std::string_view text) { return "\"" + std::string(text) + "\""; }

// Go's strconv.ParseBool.
bool parseBool(std::string_view flag, std::string_view text) {
  for (const std::string_view yes : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (text == yes) return true;
  }
  for (const std::string_view no : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (text == no) return false;
  }
  invalid(flag, "invalid boolean " + inQuotes(text) + " (true or false)");
}

// Go's strconv.ParseInt: an optional sign and decimal digits.
std::int64_t parseInt(std::string_view flag, std::string_view text, std::int64_t min,
                      std::int64_t max) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    invalid(flag, "invalid integer " + inQuotes(text));
  }
  if (value < min || value > max) {
    invalid(flag, "must be " +
                      (max == std::numeric_limits<int>::max()
                           ? "at least " + std::to_string(min)
                           : "between " + std::to_string(min) + " and " + std::to_string(max)) +
                      ", not " + std::string(text));
  }
  return value;
}

int parseCount(std::string_view flag, std::string_view text, int min) {
  return static_cast<int>(parseInt(flag, text, min, std::numeric_limits<int>::max()));
}

// Go's time.ParseDuration ("30s", "1m30s", "250ms", "0"), to milliseconds; not negative.
std::chrono::milliseconds parseDuration(std::string_view flag, std::string_view text) {
  const auto bad = [&]() {
    invalid(flag, "invalid duration " + inQuotes(text) + " (e.g. 30s, 1m)");
  };
  std::string_view rest = text;
  if (rest == "0") return std::chrono::milliseconds(0);
  if (rest.empty()) bad();
  if (rest.front() == '-') invalid(flag, "must not be negative, not " + std::string(text));
  if (rest.front() == '+') rest.remove_prefix(1);
  double total_ms = 0;
  if (rest.empty()) bad();
  while (!rest.empty()) {
    std::size_t i = 0;
    while (i < rest.size() && ((rest[i] >= '0' && rest[i] <= '9') || rest[i] == '.')) ++i;
    if (i == 0 || (i == 1 && rest[0] == '.')) bad();
    double number = 0;
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + i, number);
    if (error != std::errc() || end != rest.data() + i) bad();
    rest.remove_prefix(i);
    std::size_t j = 0;
    while (j < rest.size() && !((rest[j] >= '0' && rest[j] <= '9') || rest[j] == '.')) ++j;
    const std::string_view unit = rest.substr(0, j);
    rest.remove_prefix(j);
    double scale = 0;
    if (unit == "ns") {
      scale = 1e-6;
    } else if (unit == "us" || unit == "\u00b5s" || unit == "\u03bcs") {
      scale = 1e-3;
    } else if (unit == "ms") {
      scale = 1;
    } else if (unit == "s") {
      scale = 1e3;
    } else if (unit == "m") {
      scale = 60e3;
    } else if (unit == "h") {
      scale = 3600e3;
    } else {
      bad();
    }
    total_ms += number * scale;
  }
  if (total_ms > 1e15) bad();
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(total_ms)));
}

double parseQps(std::string_view flag, std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    invalid(flag, "invalid number " + inQuotes(text));
  }
  if (value < 0) invalid(flag, "must not be negative, not " + std::string(text));
  return value;
}

AuditMode parseMode(std::string_view flag, std::string_view text) {
  if (text == "batch") return AuditMode::kBatch;
  if (text == "blocking") return AuditMode::kBlocking;
  if (text == "blocking-strict") return AuditMode::kBlockingStrict;
  invalid(flag, "invalid mode " + inQuotes(text) + " (batch, blocking or blocking-strict)");
}

std::string parseVersion(std::string_view flag, std::string_view text) {
  if (text != "audit.k8s.io/v1") {
    invalid(flag, "unsupported version " + inQuotes(text) + " (only audit.k8s.io/v1)");
  }
  return std::string(text);
}

FlagDefinition flag(std::string name, std::string help,
                    std::function<void(AuditOptions&, const std::string&, std::string_view)> apply,
                    bool boolean = false) {
  FlagDefinition definition;
  definition.name = name;
  definition.help = std::move(help);
  definition.boolean = boolean;
  definition.apply = [name = std::move(name), apply = std::move(apply)](AuditOptions& options,
                                                                        const std::string& value) {
    apply(options, value, name);
  };
  return definition;
}

// The -batch-* and -truncate-* flags of one backend ("log" or "webhook").
void addBackendFlags(std::vector<FlagDefinition>& flags, const std::string& backend,
                     BatchOptions AuditOptions::*batch, TruncateOptions AuditOptions::*truncate,
                     const std::string& defaults) {
  const std::string prefix = "audit-" + backend + "-";
  flags.push_back(
      flag(prefix + "mode",
           "How audit events reach the " + backend +
               ": blocking (written before the answer is sent, on the request's thread), "
               "blocking-strict (the same, and the request fails with 500 when the event cannot be "
               "written) or batch (queued, written by a background thread; a full buffer drops "
               "events). Default " +
               defaults + ".",
           [batch](AuditOptions& o, const std::string& v, std::string_view f) {
             (o.*batch).mode = parseMode(f, v);
           }));
  flags.push_back(flag(prefix + "batch-buffer-size",
                       "Batch mode: events queued for the " + backend +
                           " at most; events beyond it are dropped and counted in "
                           "metrics_adapter_audit_events_dropped_total{reason=\"buffer_full\"}.",
                       [batch](AuditOptions& o, const std::string& v, std::string_view f) {
                         (o.*batch).buffer_size = static_cast<std::size_t>(parseCount(f, v, 1));
                       }));
  flags.push_back(flag(prefix + "batch-max-size",
                       "Batch mode: events written to the " + backend + " together at most.",
                       [batch](AuditOptions& o, const std::string& v, std::string_view f) {
                         (o.*batch).max_batch_size = static_cast<std::size_t>(parseCount(f, v, 1));
                       }));
  flags.push_back(flag(prefix + "batch-max-wait",
                       "Batch mode: how long a batch for the " + backend +
                           " waits to fill up before it is written anyway (Go duration).",
                       [batch](AuditOptions& o, const std::string& v, std::string_view f) {
                         (o.*batch).max_batch_wait = parseDuration(f, v);
                       }));
  flags.push_back(flag(
      prefix + "batch-throttle-enable",
      "Batch mode: limit the batches written to the " + backend + " per second.",
      [batch](AuditOptions& o, const std::string& v, std::string_view f) {
        (o.*batch).throttle_enable = parseBool(f, v);
      },
      true));
  flags.push_back(
      flag(prefix + "batch-throttle-qps",
           "Batch mode, throttled: batches per second written to the " + backend + " on average.",
           [batch](AuditOptions& o, const std::string& v, std::string_view f) {
             (o.*batch).throttle_qps = parseQps(f, v);
           }));
  flags.push_back(flag(prefix + "batch-throttle-burst",
                       "Batch mode, throttled: batches written to the " + backend +
                           " at once when none were for a while.",
                       [batch](AuditOptions& o, const std::string& v, std::string_view f) {
                         (o.*batch).throttle_burst = parseCount(f, v, 0);
                       }));
  flags.push_back(flag(
      prefix + "truncate-enabled",
      "Truncate events and batches for the " + backend +
          " that are over the limits below: an event first loses its response body "
          "(annotated audit.k8s.io/truncated), and is dropped when still too large; batches are "
          "split.",
      [truncate](AuditOptions& o, const std::string& v, std::string_view f) {
        (o.*truncate).enabled = parseBool(f, v);
      },
      true));
  flags.push_back(flag(
      prefix + "truncate-max-batch-size",
      "Bytes of one batch written to the " + backend + " at most, when truncating.",
      [truncate](AuditOptions& o, const std::string& v, std::string_view f) {
        (o.*truncate).max_batch_size = parseInt(f, v, 1, std::numeric_limits<std::int64_t>::max());
      }));
  flags.push_back(flag(
      prefix + "truncate-max-event-size",
      "Bytes of one event written to the " + backend + " at most, when truncating.",
      [truncate](AuditOptions& o, const std::string& v, std::string_view f) {
        (o.*truncate).max_event_size = parseInt(f, v, 1, std::numeric_limits<std::int64_t>::max());
      }));
}

std::vector<FlagDefinition> makeFlags() {
  std::vector<FlagDefinition> flags;
  flags.push_back(
      flag("audit-policy-file",
           "An audit.k8s.io/v1 Policy file: which requests are audited at which "
           "level. Without it nothing is audited.",
           [](AuditOptions& o, const std::string& v, std::string_view) { o.policy_file = v; }));
  flags.push_back(
      flag("audit-log-path",
           "Write audit events to this file (\"-\" for standard output), one per "
           "line. Without it (and without --audit-webhook-config-file) nothing is "
           "audited.",
           [](AuditOptions& o, const std::string& v, std::string_view) { o.log_path = v; }));
  flags.push_back(flag("audit-log-maxage",
                       "Days a rotated audit log file is kept at most (by the time in its "
                       "name); 0 keeps them whatever their age.",
                       [](AuditOptions& o, const std::string& v, std::string_view f) {
                         o.log_max_age_days = parseCount(f, v, 0);
                       }));
  flags.push_back(flag("audit-log-maxbackup",
                       "Rotated audit log files kept at most; 0 keeps all (subject to "
                       "--audit-log-maxage).",
                       [](AuditOptions& o, const std::string& v, std::string_view f) {
                         o.log_max_backups = parseCount(f, v, 0);
                       }));
  flags.push_back(flag("audit-log-maxsize",
                       "Megabytes the audit log file may reach before it is rotated (renamed to "
                       "<name>-<UTC time>.<ext>); 0 means 100.",
                       [](AuditOptions& o, const std::string& v, std::string_view f) {
                         o.log_max_size_mb = parseCount(f, v, 0);
                       }));
  flags.push_back(flag("audit-log-format",
                       "Format of the audit log lines: json (one Event object per line) or "
                       "legacy (upstream's one line of text).",
                       [](AuditOptions& o, const std::string& v, std::string_view f) {
                         if (v == "json") {
                           o.log_format = AuditLogFormat::kJson;
                         } else if (v == "legacy") {
                           o.log_format = AuditLogFormat::kLegacy;
                         } else {
                           invalid(f, "invalid format " + inQuotes(v) + " (json or legacy)");
                         }
                       }));
  flags.push_back(flag(
      "audit-log-compress", "Gzip rotated audit log files.",
      [](AuditOptions& o, const std::string& v, std::string_view f) {
        o.log_compress = parseBool(f, v);
      },
      true));
  flags.push_back(flag("audit-log-version",
                       "API group and version of the audit log's events (only "
                       "audit.k8s.io/v1).",
                       [](AuditOptions& o, const std::string& v, std::string_view f) {
                         o.log_version = parseVersion(f, v);
                       }));
  addBackendFlags(flags, "log", &AuditOptions::log_batch, &AuditOptions::log_truncate, "blocking");
  flags.push_back(flag(
      "audit-webhook-config-file",
      "A kubeconfig naming the audit webhook: its cluster's server URL (path "
      "included) receives EventList POSTs, with its credentials. Without it "
      "(and without --audit-log-path) nothing is audited.",
      [](AuditOptions& o, const std::string& v, std::string_view) { o.webhook_config_file = v; }));
  flags.push_back(flag("audit-webhook-initial-backoff",
                       "How long to wait before retrying a failed webhook POST; each further "
                       "retry waits 1.5 times longer, and the batch is dropped after 5 attempts.",
                       [](AuditOptions& o, const std::string& v, std::string_view f) {
                         o.webhook_initial_backoff = parseDuration(f, v);
                         if (o.webhook_initial_backoff.count() <= 0) invalid(f, "must be positive");
                       }));
  addBackendFlags(flags, "webhook", &AuditOptions::webhook_batch, &AuditOptions::webhook_truncate,
                  "batch");
  flags.push_back(flag("audit-webhook-version",
                       "API group and version of the events sent to the webhook (only "
                       "audit.k8s.io/v1).",
                       [](AuditOptions& o, const std::string& v, std::string_view f) {
                         o.webhook_version = parseVersion(f, v);
                       }));
  return flags;
}

void checkBackend(const std::string& backend, const BatchOptions& batch,
                  const TruncateOptions& truncate) {
  const std::string prefix = "audit-" + backend + "-";
  if (batch.mode == AuditMode::kBatch && batch.throttle_enable) {
    if (batch.throttle_qps <= 0) {
      invalid(prefix + "batch-throttle-qps", "must be positive when throttling is enabled");
    }
    if (batch.throttle_burst <= 0) {
      invalid(prefix + "batch-throttle-burst", "must be positive when throttling is enabled");
    }
  }
  if (truncate.enabled && truncate.max_event_size > truncate.max_batch_size) {
    invalid(prefix + "truncate-max-event-size",
            "must not be larger than --" + prefix + "truncate-max-batch-size");
  }
}

void checkLogPath(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::exists(path, error)) {
    if (fs::is_directory(path, error)) invalid("audit-log-path", path + ": is a directory");
    if (::access(path.c_str(), W_OK) != 0) invalid("audit-log-path", path + ": not writable");
    return;
  }
  fs::path dir = fs::absolute(fs::path(path), error).parent_path();
  while (!dir.empty() && !fs::exists(dir, error) && dir != dir.parent_path()) {
    dir = dir.parent_path();
  }
  if (!fs::is_directory(dir, error) || ::access(dir.c_str(), W_OK | X_OK) != 0) {
    invalid("audit-log-path", path + ": the directory " + dir.string() + " is not writable");
  }
}

}  // namespace

const std::vector<FlagDefinition>& auditFlags() {
  static const std::vector<FlagDefinition> kFlags = makeFlags();
  return kFlags;
}

void checkAuditOptions(const AuditOptions& options) {
  if (!options.policy_file.empty()) {
    try {
      loadPolicy(options.policy_file);
    } catch (const std::invalid_argument& e) {
      invalid("audit-policy-file", e.what());
    }
  }
  if (!options.log_path.empty()) {
    checkBackend("log", options.log_batch, options.log_truncate);
    if (options.log_path != "-") checkLogPath(options.log_path);
  }
  if (!options.webhook_config_file.empty()) {
    checkBackend("webhook", options.webhook_batch, options.webhook_truncate);
    try {
      WebhookOptions webhook;
      webhook.kubeconfig = kube::loadKubeconfig(options.webhook_config_file);
      const WebhookSink sink(std::move(webhook));  // checks the URL and the TLS inputs
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      const std::string& file = options.webhook_config_file;
      invalid("audit-webhook-config-file",
              what.find(file) == std::string::npos ? file + ": " + what : what);
    }
  }
}

}  // namespace metrics_adapter::audit
