#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "audit/backend.h"
#include "audit/log_file.h"
#include "metrics_adapter/audit/audit_options.h"
#include "metrics_adapter/kube/kube_client.h"

namespace metrics_adapter::net {
class BearerTokenFile;
class CallCanceller;
class HttpClient;
}  // namespace metrics_adapter::net

namespace metrics_adapter::audit {

// The log backend's sink: one line per event (JSON or legacy) to a rotated file, or to stdout
// for path "-".
class LogSink : public EventSink {
 public:
  LogSink(LogFileOptions file, AuditLogFormat format);
  void serialize(std::string& out, const Event& event, bool with_bodies) const override;
  bool deliver(const std::vector<std::string>& events) override;

 private:
  std::unique_ptr<LogFile> file_;  // null for stdout
  AuditLogFormat format_;
  std::string buffer_;
};

struct WebhookOptions {
  kube::KubeClientOptions kubeconfig;  // server: the URL to POST to, path included
  std::chrono::milliseconds initial_backoff{std::chrono::seconds(10)};
  int attempts = 5;  // upstream's DefaultRetryBackoff: 5 steps, factor 1.5
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};  // per POST
};

// The webhook backend's sink: POSTs {"kind":"EventList",...,"items":[...]} to the kubeconfig's
// server URL; a failed POST (no answer, 429 or 5xx) is retried with exponential backoff.
class WebhookSink : public EventSink {
 public:
  // Throws std::invalid_argument for an unusable URL or credentials.
  explicit WebhookSink(WebhookOptions options);
  ~WebhookSink() override;
  void serialize(std::string& out, const Event& event, bool with_bodies) const override;
  bool deliver(const std::vector<std::string>& events) override;
  std::size_t batchOverhead() const override;
  void interrupt() override;
  void cancel() override;

 private:
  // 0 when no answer came, else the HTTP status.
  int post(const std::string& body, std::string& failure);

  WebhookOptions options_;
  std::string scheme_;
  std::string host_;
  std::string port_;
  std::string path_;
  std::unique_ptr<net::HttpClient> client_;
  std::unique_ptr<net::BearerTokenFile> token_file_;
  std::shared_ptr<net::CallCanceller> canceller_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool interrupted_ = false;
};

}  // namespace metrics_adapter::audit
