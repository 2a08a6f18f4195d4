#include "metrics_adapter/kube/kube_client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <exception>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kube/api_answer.h"
#include "kube/server_url.h"
#include "kube/watch_stream.h"
#include "metrics_adapter/net/bearer_token_file.h"
#include "metrics_adapter/net/http_call.h"
#include "metrics_adapter/net/http_client.h"
#include "metrics_adapter/net/text.h"

namespace metrics_adapter::kube {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kJson = "application/json";
// Enough for any Status document; longer error bodies are only quoted.
constexpr std::size_t kMaxErrorBodyBytes = std::size_t{64} * 1024;
constexpr std::size_t kMaxPathInMessages = 200;
// Longer Retry-After values are taken as this: a misconfigured server cannot park callers for
// hours.
constexpr std::chrono::seconds kMaxRetryAfter{60};
// cpprestsdk's client timeout is an idle limit on the connection; a watch is idle between events
// for as long as the server's timeoutSeconds, so its client gets this instead. Each watch call
// still ends at its own deadline.
constexpr std::chrono::hours kWatchIdleLimit{1};
constexpr std::size_t kWatchReadBytes = std::size_t{16} * 1024;

bool hasControlCharacters(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 || byte == 0x7F;
  });
}

// client-go's rules: one source per PEM input, and no CA together with skipping verification.
void validate(const KubeClientOptions& options) {
  if (options.timeout.count() <= 0) throw std::invalid_argument("the timeout must be positive");
  const struct {
    const std::string& file;
    const std::string& data;
    const char* name;
  } inputs[] = {{options.ca_file, options.ca_data, "CA certificate"},
                {options.client_cert_file, options.client_cert_data, "client certificate"},
                {options.client_key_file, options.client_key_data, "client key"}};
  for (const auto& input : inputs) {
    if (!input.file.empty() && !input.data.empty()) {
      throw std::invalid_argument(std::string("both a file and PEM data are set for the ") +
                                  input.name);
    }
  }
  if (options.insecure_skip_tls_verify && (!options.ca_file.empty() || !options.ca_data.empty())) {
    throw std::invalid_argument(
        "insecure-skip-tls-verify cannot be combined with a CA certificate");
  }
  if (!options.username.empty() || !options.password.empty()) {
    throw std::invalid_argument(
        "basic authentication (username/password) is not supported; use a token or client "
        "certificate");
  }
  if (hasControlCharacters(options.token)) {
    throw std::invalid_argument("the token holds characters a header cannot carry");
  }
}

net::TlsClientSettings tlsSettings(const KubeClientOptions& options) {
  net::TlsClientSettings tls;
  tls.ca = {options.ca_file, options.ca_data, "CA certificate"};
  tls.client_cert = {options.client_cert_file, options.client_cert_data, "client certificate"};
  tls.client_key = {options.client_key_file, options.client_key_data, "client key"};
  tls.ca_replaces_system_roots = true;
  return tls;
}

// "GET /api/v1/pods": how messages name a call (never the query, which can be long).
std::string requestLine(std::string_view method, const std::string& path) {
  return std::string(method) + " " +
         net::sanitizeLine(path.substr(0, path.find('?')), kMaxPathInMessages);
}

KubeError invalidPath(const std::string& path) {
  return KubeError(
      0, "invalid Kubernetes API path \"" + net::sanitizeLine(path, kMaxPathInMessages) + "\"");
}

std::exception_ptr callError(const net::CallFailure& failure, const std::string& server,
                             std::chrono::milliseconds timeout, const std::string& request) {
  switch (failure.kind) {
    case net::CallFailure::Kind::kTimeout: {
      KubeError error(0, "Kubernetes API did not answer within " + formatTimeout(timeout));
      return std::make_exception_ptr(error.markTimeout());
    }
    case net::CallFailure::Kind::kUnreachable:
      // The address stays in the log (the startup line names it): these messages reach clients
      // in 503 answers, which must not show internal addresses.
      SPDLOG_DEBUG("cannot reach the Kubernetes API at {}: {}", server, failure.cause);
      return std::make_exception_ptr(
          KubeError(0, "cannot reach the Kubernetes API: " + failure.cause));
    case net::CallFailure::Kind::kBrokenBody:
      break;
  }
  return std::make_exception_ptr(
      KubeError(0, "the Kubernetes API answer to " + request + " broke off: " + failure.cause));
}

}  // namespace

std::chrono::seconds parseRetryAfter(std::string_view value, std::chrono::seconds cap) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  // Digits only: this also turns away the HTTP-date form and negative numbers.
  if (value.empty() ||
      !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::chrono::seconds(0);
  }
  long long seconds = 0;
  const auto result = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (result.ec == std::errc::result_out_of_range) return cap;
  return std::min(std::chrono::seconds(seconds), cap);
}

struct KubeClient::Impl {
  explicit Impl(KubeClientOptions opts) : options(std::move(opts)) {
    try {
      server = parseServerUrl(options.server);
      validate(options);
      if (!options.token_file.empty()) {
        token_file = std::make_unique<net::BearerTokenFile>(
            options.token_file, options.token_recheck_interval, "token file");
      }
      net::HttpClientSettings client;
      client.origin = server.origin;
      // Bounds abandoned exchanges only; HttpCall enforces each call's deadline.
      client.timeout = options.timeout;
      client.tls = tlsSettings(options);
      client.verify_server = !options.insecure_skip_tls_verify;
      net::validateTlsSettings(client.tls);
      http = net::makeHttpClient(client);
      client.timeout = kWatchIdleLimit;
      watch_http = net::makeHttpClient(client);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("Kubernetes API client (" + source() + "): " + e.what());
    }
    if (options.insecure_skip_tls_verify && server.scheme == "https") {
      SPDLOG_WARN(
          "Kubernetes API client ({}): insecure-skip-tls-verify is set; the certificate of {} is "
          "not verified",
          source(), server.origin);
    }
  }

  std::string source() const { return options.source.empty() ? options.server : options.source; }

  std::string tlsHint() const {
    if (!options.ca_file.empty() || !options.ca_data.empty()) {
      return "(is the server's certificate issued by the configured CA, and is the client "
             "certificate accepted?)";
    }
    return "(no CA is configured, so only the system's roots are trusted)";
  }

  net::HttpRequest makeRequest(std::string_view method, const std::string& path,
                               std::string_view accept, const nlohmann::json* body) const {
    if (path.empty() || path.front() != '/') {
      throw invalidPath(path);
    }
    if (hasControlCharacters(accept)) throw std::invalid_argument("invalid Accept header");
    net::HttpRequest request;
    request.method = method;
    request.target = server.path_prefix + path;
    if (!net::isValidRequestTarget(request.target)) throw invalidPath(path);
    auto& headers = request.headers;
    headers.emplace_back("Accept", accept.empty() ? kJson : accept);
    headers.emplace_back("User-Agent", "metrics-adapter");
    const std::string token = token_file ? token_file->current() : options.token;
    if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
    if (body != nullptr) {
      request.body = body->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      headers.emplace_back("Content-Type", kJson);
    }
    return request;
  }

  // Throws the KubeError for a non-2xx answer (with Retry-After for 429 and 5xx).
  static void throwUnlessSuccess(net::HttpCall& call, const std::string& request) {
    const int status = call.status();
    if (status >= 200 && status < 300) return;
    KubeError error =
        errorForAnswer(status, net::readBody(call, kMaxErrorBodyBytes).bytes, request);
    if (status == 429 || status >= 500) {
      error.withRetryAfter(parseRetryAfter(call.header("Retry-After"), kMaxRetryAfter));
    }
    throw error;
  }

  nlohmann::json readAnswer(net::HttpCall& call, const std::string& request) const {
    throwUnlessSuccess(call, request);
    const int status = call.status();
    const std::size_t limit = options.max_response_bytes;
    const auto length = call.contentLength();
    const bool announced_too_large = length && *length > limit;
    net::BodyText body;
    if (!announced_too_large) body = net::readBody(call, limit);
    if (announced_too_large || !body.complete) {
      throw KubeError(status, "the Kubernetes API answer to " + request +
                                  " is larger than the limit of " + std::to_string(limit) +
                                  " bytes");
    }
    return parseAnswer(status, body.bytes, request);
  }

  nlohmann::json call(std::string_view method, const std::string& path, std::string_view accept,
                      const nlohmann::json* body, std::chrono::milliseconds timeout) {
    const auto started = Clock::now();
    const auto effective =
        timeout.count() <= 0 ? options.timeout : std::min(timeout, options.timeout);
    const std::string request = requestLine(method, path);
    const auto elapsed_ms = [&] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
    };
    net::CallContext context{server.host,
                             server.port,
                             started + effective,
                             tlsHint(),
                             [display = server.origin + server.path_prefix, effective,
                              request](const net::CallFailure& failure) {
                               return callError(failure, display, effective, request);
                             },
                             /*canceller=*/nullptr};
    try {
      net::HttpCall exchange(*http, makeRequest(method, path, accept, body), std::move(context));
      nlohmann::json answer = readAnswer(exchange, request);
      SPDLOG_DEBUG("kube {}: {} in {} ms", request, exchange.status(), elapsed_ms());
      return answer;
    } catch (const KubeError& e) {
      SPDLOG_DEBUG("kube {}: status {} after {} ms", request, e.httpStatus(), elapsed_ms());
      throw;
    }
  }

  void watch(const WatchRequest& watch_request, const WatchHandler& on_event) {
    const auto started = Clock::now();
    const std::string request = requestLine("GET", watch_request.path);
    const auto timeout =
        watch_request.timeout.count() > 0 ? watch_request.timeout : options.timeout;
    net::CallContext context{server.host,
                             server.port,
                             started + timeout,
                             tlsHint(),
                             [display = server.origin + server.path_prefix, timeout,
                              request](const net::CallFailure& failure) {
                               return callError(failure, display, timeout, request);
                             },
                             watch_request.canceller};
    net::HttpCall exchange(*watch_http,
                           makeRequest("GET", watch_request.path, watch_request.accept, nullptr),
                           std::move(context));
    throwUnlessSuccess(exchange, request);
    WatchStream stream(options.max_response_bytes, request);
    std::string chunk(kWatchReadBytes, '\0');
    for (;;) {
      const std::size_t count = exchange.read(chunk.data(), chunk.size());
      if (count == 0) {
        stream.finish(on_event);
        break;
      }
      if (!stream.feed(std::string_view(chunk.data(), count), on_event)) break;
    }
    SPDLOG_DEBUG(
        "kube watch {} ended after {} ms", request,
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count());
  }

  KubeClientOptions options;
  ServerUrl server;
  std::unique_ptr<net::BearerTokenFile> token_file;
  std::unique_ptr<net::HttpClient> http;
  std::unique_ptr<net::HttpClient> watch_http;
};

void KubeApi::watch(const WatchRequest& request, const WatchHandler&) {
  throw KubeError(0, "this Kubernetes API client cannot watch " +
                         request.path.substr(0, request.path.find('?')));
}

KubeClient::KubeClient(KubeClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

KubeClient::~KubeClient() = default;

nlohmann::json KubeClient::get(const std::string& path, std::string_view accept,
                               std::chrono::milliseconds timeout) {
  return impl_->call("GET", path, accept, nullptr, timeout);
}

nlohmann::json KubeClient::post(const std::string& path, const nlohmann::json& body,
                                std::chrono::milliseconds timeout) {
  return impl_->call("POST", path, kJson, &body, timeout);
}

void KubeClient::watch(const WatchRequest& request, const WatchHandler& on_event) {
  impl_->watch(request, on_event);
}

}  // namespace metrics_adapter::kube
