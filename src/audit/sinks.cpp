#include "audit/sinks.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <thread>
#include <utility>

#include "metrics_adapter/net/bearer_token_file.h"
#include "metrics_adapter/net/call_canceller.h"
#include "metrics_adapter/net/http_call.h"
#include "metrics_adapter/net/http_client.h"

namespace metrics_adapter::audit {
namespace {

constexpr std::string_view kListHead =
    R"({"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[)";
constexpr std::string_view kListTail = "]}";
constexpr double kBackoffFactor = 1.5;
constexpr std::size_t kMaxAnswerBytes = 65536;

bool writeAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

}  // namespace

LogSink::LogSink(LogFileOptions file, AuditLogFormat format) : format_(format) {
  if (file.path != "-") file_ = std::make_unique<LogFile>(std::move(file));
}

void LogSink::serialize(std::string& out, const Event& event, bool with_bodies) const {
  if (format_ == AuditLogFormat::kLegacy) {
    out += legacyEventLine(event);
  } else {
    appendEventJson(out, event, with_bodies);
  }
}

bool LogSink::deliver(const std::vector<std::string>& events) {
  // The lines of a batch go out in as few writes as the rotation size allows (one write a line
  // cost the batch writer a system call per answer); rotation still falls between lines.
  const std::uint64_t chunk_limit = file_ ? file_->maxSize() : UINT64_MAX;
  bool all = true;
  const auto flush = [&] {
    if (buffer_.empty()) return;
    const bool written = file_ ? file_->write(buffer_) : writeAll(STDOUT_FILENO, buffer_);
    all = all && written;
    buffer_.clear();
  };
  for (const std::string& event : events) {
    if (!buffer_.empty() && buffer_.size() + event.size() + 1 > chunk_limit) flush();
    buffer_.append(event).push_back('\n');
  }
  flush();
  return all;
}

WebhookSink::WebhookSink(WebhookOptions options)
    : options_(std::move(options)), canceller_(std::make_shared<net::CallCanceller>()) {
  const kube::KubeClientOptions& config = options_.kubeconfig;
  const std::string& url = config.server;
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) {
    throw std::invalid_argument("server " + url + " is not an absolute http(s) URL");
  }
  scheme_ = url.substr(0, scheme_end);
  if (scheme_ != "https" && scheme_ != "http") {
    throw std::invalid_argument("server " + url + ": the scheme must be http or https");
  }
  const auto authority_start = scheme_end + 3;
  const auto path_start = url.find_first_of("/?#", authority_start);
  const std::string authority = url.substr(authority_start, path_start - authority_start);
  if (path_start != std::string::npos && url[path_start] != '/') {
    throw std::invalid_argument("server " + url + ": a query or fragment is not supported");
  }
  path_ = path_start == std::string::npos ? "/" : url.substr(path_start);
  if (authority.empty() || authority.find('@') != std::string::npos) {
    throw std::invalid_argument("server " + url + ": needs a host and no user info");
  }
  const auto bracket = authority.find(']');
  const auto colon = authority.find(':', bracket == std::string::npos ? 0 : bracket);
  host_ = authority.substr(0, colon);
  port_ = colon == std::string::npos ? (scheme_ == "https" ? "443" : "80")
                                     : authority.substr(colon + 1);
  if (!config.username.empty() || !config.password.empty()) {
    throw std::invalid_argument("basic authentication (username/password) is not supported");
  }
  net::HttpClientSettings settings;
  settings.origin = scheme_ + "://" + authority;
  settings.timeout = options_.timeout;
  settings.tls.ca = {config.ca_file, config.ca_data, "certificate-authority"};
  settings.tls.client_cert = {config.client_cert_file, config.client_cert_data,
                              "client-certificate"};
  settings.tls.client_key = {config.client_key_file, config.client_key_data, "client-key"};
  settings.tls.ca_replaces_system_roots = true;
  settings.verify_server = !config.insecure_skip_tls_verify;
  net::validateTlsSettings(settings.tls);
  client_ = net::makeHttpClient(settings);
  if (!config.token_file.empty()) {
    token_file_ = std::make_unique<net::BearerTokenFile>(config.token_file, std::chrono::seconds(5),
                                                         "tokenFile");
  }
}

WebhookSink::~WebhookSink() = default;

void WebhookSink::serialize(std::string& out, const Event& event, bool with_bodies) const {
  appendEventJson(out, event, with_bodies);
}

std::size_t WebhookSink::batchOverhead() const { return kListHead.size() + kListTail.size(); }

void WebhookSink::interrupt() {
  {
    std::lock_guard lock(mutex_);
    interrupted_ = true;
  }
  wake_.notify_all();
}

void WebhookSink::cancel() {
  interrupt();
  canceller_->cancelAll();
}

int WebhookSink::post(const std::string& body, std::string& failure) {
  net::HttpRequest request;
  request.method = "POST";
  request.target = path_;
  auto& headers = request.headers;
  headers.emplace_back("User-Agent", "metrics-adapter");
  headers.emplace_back("Accept", "application/json");
  const std::string token = token_file_ ? token_file_->current() : options_.kubeconfig.token;
  if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
  request.body = body;
  headers.emplace_back("Content-Type", "application/json");
  net::CallContext context{
      host_,
      port_,
      std::chrono::steady_clock::now() + options_.timeout,
      "(is the webhook's certificate issued by the kubeconfig's certificate-authority?)",
      [](const net::CallFailure& call_failure) {
        return std::make_exception_ptr(std::runtime_error(
            call_failure.kind == net::CallFailure::Kind::kTimeout ? "timed out"
                                                                  : call_failure.cause));
      },
      canceller_};
  try {
    net::HttpCall call(*client_, request, std::move(context));
    const int status = call.status();
    const net::BodyText answer = net::readBody(call, kMaxAnswerBytes);
    if (status < 200 || status >= 300) {
      failure = "HTTP " + std::to_string(status) + ": " + answer.bytes.substr(0, 200);
    }
    return status;
  } catch (const std::exception& e) {
    failure = e.what();
    return 0;
  }
}

bool WebhookSink::deliver(const std::vector<std::string>& events) {
  std::size_t size = batchOverhead();
  for (const std::string& event : events) size += event.size() + 1;
  std::string body;
  body.reserve(size);
  body += kListHead;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (i > 0) body += ',';
    body += events[i];
  }
  body += kListTail;
  auto backoff = std::chrono::duration<double, std::milli>(options_.initial_backoff);
  std::string failure;
  for (int attempt = 1;; ++attempt) {
    const int status = post(body, failure);
    if (status >= 200 && status < 300) return true;
    const bool retriable = status == 0 || status == 429 || status >= 500;
    std::unique_lock lock(mutex_);
    if (!retriable || attempt >= options_.attempts || interrupted_) break;
    SPDLOG_DEBUG("audit webhook: POST failed ({}), retrying in {:.0f} ms", failure,
                 backoff.count());
    if (wake_.wait_for(lock, backoff, [this] { return interrupted_; })) break;
    backoff *= kBackoffFactor;
  }
  SPDLOG_WARN("audit webhook: {} events lost: {}", events.size(), failure);
  return false;
}

}  // namespace metrics_adapter::audit
