#include "metrics_adapter/audit/auditor.h"

#include <spdlog/spdlog.h>

#include <array>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "audit/backend.h"
#include "audit/event.h"
#include "audit/policy.h"
#include "audit/sinks.h"
#include "audit/source_ips.h"
#include "metrics_adapter/kube/kube_client.h"
#include "metrics_adapter/server/audit_id.h"
#include "metrics_adapter/server/request_info.h"
#include "metrics_adapter/text/ascii.h"

namespace metrics_adapter::audit {
namespace {

constexpr std::uint64_t kMegabyte = std::uint64_t{1} << 20;
constexpr int kLumberjackDefaultMegabytes = 100;

std::string_view modeName(AuditMode mode) {
  switch (mode) {
    case AuditMode::kBlocking:
      return "blocking";
    case AuditMode::kBlockingStrict:
      return "blocking-strict";
    case AuditMode::kBatch:
      return "batch";
  }
  return "batch";
}

// The stages an answer is recorded at. A refused authentication is recorded once, at
// ResponseStarted, as upstream's failed-authentication handler does (it runs outside the audit
// filter, so there is no RequestReceived); every other answer at RequestReceived and
// ResponseComplete (upstream adds ResponseStarted only for long-running requests: we have none).
std::span<const Stage> stagesOf(const server::ResponseNotes& notes) {
  static constexpr std::array<Stage, 1> kFailedAuthentication = {Stage::kResponseStarted};
  static constexpr std::array<Stage, 2> kAnswered = {Stage::kRequestReceived,
                                                     Stage::kResponseComplete};
  if (!notes.failed_authentication.empty()) return kFailedAuthentication;
  return kAnswered;
}

}  // namespace

std::unique_ptr<Auditor> Auditor::start(const AuditOptions& options,
                                        std::shared_ptr<telemetry::SelfMetrics> metrics) {
  const bool has_backend = !options.log_path.empty() || !options.webhook_config_file.empty();
  if (options.policy_file.empty()) {
    if (has_backend) {
      SPDLOG_WARN(
          "audit: --audit-log-path or --audit-webhook-config-file is set without "
          "--audit-policy-file; nothing is audited");
    }
    return nullptr;
  }
  if (!has_backend) {
    SPDLOG_WARN(
        "audit: --audit-policy-file is set without --audit-log-path or "
        "--audit-webhook-config-file; nothing is audited");
    return nullptr;
  }
  checkAuditOptions(options);
  auto policy = std::make_shared<const Policy>(loadPolicy(options.policy_file));
  std::vector<std::unique_ptr<Backend>> backends;
  std::string where;
  if (!options.log_path.empty()) {
    LogFileOptions file;
    file.path = options.log_path;
    file.max_size_bytes = kMegabyte * static_cast<std::uint64_t>(options.log_max_size_mb > 0
                                                                     ? options.log_max_size_mb
                                                                     : kLumberjackDefaultMegabytes);
    file.max_backups = options.log_max_backups;
    file.max_age_days = options.log_max_age_days;
    file.compress = options.log_compress;
    backends.push_back(
        std::make_unique<Backend>("log", std::make_unique<LogSink>(file, options.log_format),
                                  options.log_batch, options.log_truncate, metrics, "write_error"));
    where = fmt::format("log {} ({}, {})", options.log_path == "-" ? "stdout" : options.log_path,
                        options.log_format == AuditLogFormat::kJson ? "json" : "legacy",
                        modeName(options.log_batch.mode));
  }
  if (!options.webhook_config_file.empty()) {
    WebhookOptions webhook;
    webhook.kubeconfig = kube::loadKubeconfig(options.webhook_config_file);
    webhook.initial_backoff = options.webhook_initial_backoff;
    const std::string server = webhook.kubeconfig.server;
    backends.push_back(std::make_unique<Backend>(
        "webhook", std::make_unique<WebhookSink>(std::move(webhook)), options.webhook_batch,
        options.webhook_truncate, std::move(metrics), "send_error"));
    if (!where.empty()) where += " and ";
    where += fmt::format("webhook {} ({})", server, modeName(options.webhook_batch.mode));
  }
  SPDLOG_INFO("audit: requests audited as {} says ({} rules), written to {}", options.policy_file,
              policy->rules.size(), where);
  return std::make_unique<Auditor>(std::move(policy), std::move(backends));
}

Auditor::Auditor(std::shared_ptr<const Policy> policy,
                 std::vector<std::unique_ptr<Backend>> backends)
    : policy_(std::move(policy)), backends_(std::move(backends)) {}

Auditor::~Auditor() { stop(); }

void Auditor::stop() {
  for (auto& backend : backends_) backend->stop();
}

bool Auditor::record(const server::Exchange& exchange) {
  bool ok = true;
  try {
    // Parsed into one RequestInfo per thread, which keeps its capacity from target to target.
    thread_local server::RequestInfo info;
    ParsedRequest request;
    try {
      server::parseRequestInfo(exchange.method, exchange.target, info);
      request.info = &info;
    } catch (const std::exception&) {
      request.verb = text::lowerAscii(exchange.method);
      request.path = exchange.target.substr(0, exchange.target.find('?'));
    }
    const PolicyDecision decision = evaluatePolicy(*policy_, attributesOf(exchange, request));
    if (decision.level == Level::kNone) return true;
    const auto now = std::chrono::system_clock::now();
    std::string_view audit_id = exchange.audit_id;
    server::AuditId fresh{};
    if (audit_id.empty()) {  // a request that could not be read: the server gave it no ID
      fresh = server::newAuditId();
      audit_id = {fresh.data(), fresh.size()};
    }
    thread_local std::vector<std::string> source_ips;  // keeps its capacity
    sourceIps(exchange.forwarded_for, exchange.real_ip, exchange.remote, source_ips);
    const RequestOrigin origin{.audit_id = audit_id, .source_ips = source_ips};
    for (const Stage stage : stagesOf(*exchange.notes)) {
      if ((decision.omit_stages & static_cast<StageSet>(stage)) != 0) continue;
      const Event event = makeEvent(exchange, request, decision.level, stage, now, origin);
      for (const auto& backend : backends_) ok = backend->submit(event) && ok;
    }
  } catch (const std::exception& e) {
    SPDLOG_WARN("audit: cannot record {} {}: {}", exchange.method, exchange.target, e.what());
    for (const auto& backend : backends_) {
      if (backend->mode() == AuditMode::kBlockingStrict) ok = false;
    }
  }
  return ok;
}

}  // namespace metrics_adapter::audit
