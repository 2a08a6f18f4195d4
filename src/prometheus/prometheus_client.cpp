#include "metrics_adapter/prometheus/prometheus_client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <istream>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics_adapter/net/bearer_token_file.h"
#include "metrics_adapter/net/http_call.h"
#include "metrics_adapter/net/http_client.h"
#include "metrics_adapter/telemetry/self_metrics.h"
#include "metrics_adapter/text/ascii.h"
#include "prometheus/body_stream_buf.h"
#include "prometheus/request_builder.h"
#include "prometheus/request_headers.h"
#include "prometheus/response_parsing.h"
#include "prometheus/series_stream_parser.h"

namespace metrics_adapter::prometheus {
namespace {

using net::HttpCall;

constexpr const char* kTlsHint = "(is the server certificate trusted? see --prometheus-ca-file)";

// Appended to "larger than the limit" messages: the flag that raises the limit.
constexpr const char* kLimitHint = " (--prometheus-max-response-bytes)";
// Enough for any Prometheus error document; longer error bodies are only quoted, never parsed.
constexpr std::size_t kMaxErrorBodyBytes = std::size_t{64} * 1024;
// No label name or value comes near this; it only stops one endless JSON string.
constexpr std::size_t kMaxSeriesTokenBytes = 4u << 20;

// Values are never quoted in messages: they are often credentials.
void validateHeader(const std::string& name, const std::string& value) {
  if (name.empty() || !std::all_of(name.begin(), name.end(), isHeaderTokenChar)) {
    throw std::invalid_argument("--prometheus-header: \"" + sanitizeLine(name, 64) +
                                "\" is not a valid header name");
  }
  if (std::any_of(value.begin(), value.end(),
                  [](char c) { return c == '\r' || c == '\n' || c == '\0'; })) {
    throw std::invalid_argument("--prometheus-header: the value of " + name +
                                " contains a line break or NUL");
  }
}

// At most one source of the Authorization header; basic auth needs a user and one password.
void validateCredentials(const PrometheusClientOptions& options) {
  const bool basic = !options.basic_auth_username.empty() ||
                     !options.basic_auth_password_file.empty() ||
                     !options.basic_auth_password.empty();
  if (basic && options.basic_auth_username.empty()) {
    throw std::invalid_argument("basic_auth_username: not set, but a basic auth password is");
  }
  if (!options.basic_auth_password_file.empty() && !options.basic_auth_password.empty()) {
    throw std::invalid_argument(
        "basic_auth_password_file and an inline basic auth password are both set; use one");
  }
  if (basic && options.basic_auth_password_file.empty() && options.basic_auth_password.empty()) {
    throw std::invalid_argument("basic_auth_username is set without basic_auth_password_file");
  }
  const bool bearer = !options.token_file.empty() || !options.bearer_token.empty();
  if (basic && bearer) {
    throw std::invalid_argument(
        "basic auth (basic_auth_username) and a bearer token (--prometheus-token-file or a "
        "kubeconfig token) both set the Authorization header; use one of them");
  }
  if (!options.token_file.empty() && !options.bearer_token.empty()) {
    throw std::invalid_argument(
        "--prometheus-token-file and a kubeconfig token are both set; use one of them");
  }
  if (options.bearer_token.find_first_of("\r\n") != std::string::npos ||
      options.bearer_token.find('\0') != std::string::npos) {
    throw std::invalid_argument("the bearer token holds a line break or NUL");
  }
  for (const auto& [name, value] : options.headers) {
    if ((basic || bearer) && text::equalsIgnoringAsciiCase(name, "Authorization")) {
      throw std::invalid_argument(std::string("--prometheus-header Authorization=... and ") +
                                  (basic ? "basic auth" : "a bearer token") +
                                  " both set the Authorization header; use one of them");
    }
  }
}

bool isSuccess(int status) { return status >= 200 && status < 300; }

std::string readBody(HttpCall& call, std::size_t limit, bool fail_when_larger) {
  if (const auto length = call.contentLength(); fail_when_larger && length && *length > limit) {
    throw PrometheusError(PrometheusError::Kind::kBadResponse, call.status(),
                          "Prometheus answer of " + std::to_string(*length) +
                              " bytes is larger than the limit of " + std::to_string(limit) +
                              " bytes" + kLimitHint);
  }
  net::BodyText body = net::readBody(call, limit);
  if (!body.complete && fail_when_larger) {
    throw PrometheusError(PrometheusError::Kind::kBadResponse, call.status(),
                          "Prometheus answer is larger than the limit of " + std::to_string(limit) +
                              " bytes" + kLimitHint);
  }
  return std::move(body.bytes);
}

PrometheusError withStatus(const PrometheusError& error, int status) {
  return PrometheusError(error.kind(), status, error.what(), error.detail());
}

// The PrometheusError for a call that got no complete answer. The client redacts the cause
// (which may name the host) and adds the URL to the detail.
std::exception_ptr callError(const net::CallFailure& failure, std::chrono::milliseconds timeout) {
  using Kind = PrometheusError::Kind;
  switch (failure.kind) {
    case net::CallFailure::Kind::kTimeout:
      return std::make_exception_ptr(
          PrometheusError(Kind::kTimeout, failure.status,
                          "Prometheus did not answer within " + formatPrometheusDuration(timeout)));
    case net::CallFailure::Kind::kUnreachable:
      return std::make_exception_ptr(
          PrometheusError(Kind::kUnreachable, 0, "cannot reach Prometheus: " + failure.cause));
    case net::CallFailure::Kind::kBrokenBody:
      break;
  }
  return std::make_exception_ptr(PrometheusError(Kind::kBadResponse, failure.status,
                                                 "Prometheus answer broke off: " + failure.cause));
}

// The outcome label of metrics_adapter_prometheus_requests_total for a failed call.
const char* outcomeLabel(PrometheusError::Kind kind) {
  switch (kind) {
    case PrometheusError::Kind::kUnreachable:
      return "unreachable";
    case PrometheusError::Kind::kTimeout:
      return "timeout";
    case PrometheusError::Kind::kHttpStatus:
      return "http_error";
    case PrometheusError::Kind::kApiError:
      return "api_error";
    case PrometheusError::Kind::kBadResponse:
      return "bad_response";
  }
  return "bad_response";
}

constexpr std::string_view kRedacted = "[redacted]";
// Header values and URL query values shorter than this are not redacted: "1" or "true" would
// mangle every message, and they are no credentials.
constexpr std::size_t kMinRedactedValueBytes = 6;

bool isHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '_';
}

// `text` with every occurrence of `secret` replaced by kRedacted; with `whole_token`, only those
// not inside a longer host-like token (so host "10.0.0.1" leaves "10.0.0.10" alone).
std::string replaceAll(std::string text, std::string_view secret, bool whole_token) {
  if (secret.empty()) return text;
  std::size_t at = 0;
  while ((at = text.find(secret, at)) != std::string::npos) {
    const std::size_t end = at + secret.size();
    if (whole_token &&
        ((at > 0 && isHostChar(text[at - 1])) || (end < text.size() && isHostChar(text[end])))) {
      at = end;
      continue;
    }
    text.replace(at, secret.size(), kRedacted);
    at += kRedacted.size();
  }
  return text;
}

// Series answers are asked gzipped ("Accept-Encoding: gzip", the exact token: Prometheus 2.42,
// Debian 12's, does not compress for "gzip;q=0.5"). Prometheus's Go server sends an uncompressed
// answer as one HTTP chunk, which cpprestsdk holds whole before passing any of it on (530 MiB
// for a 1M-series relist); gzipped it comes in 2 KiB chunks, inflated by HttpCall and parsed as
// they arrive, 35 times smaller on the wire. Query answers are small and wanted soon: gzip
// cost Prometheus more time than it saved (pods/* p50 1.51 -> 1.75 ms against the real
// Prometheus, docs/performance.md, "Round 3"), so they are asked plain.
constexpr std::string_view kSeriesEndpoint = "/api/v1/series";

// "/api/v1/series" -> "series": the endpoint label of the self-metrics.
std::string_view endpointLabel(std::string_view endpoint) {
  return endpoint.substr(endpoint.rfind('/') + 1);
}

}  // namespace

struct PrometheusClient::Impl {
  Impl(PrometheusClientOptions opts, std::shared_ptr<telemetry::SelfMetrics> metrics)
      : options(std::move(opts)),
        self_metrics(metrics ? std::move(metrics) : std::make_shared<telemetry::SelfMetrics>()) {
    base = parseBaseUrl(options.url);
    verb = parseVerb(options.verb);
    if (options.client_timeout.count() <= 0) {
      throw std::invalid_argument("the Prometheus client timeout must be positive");
    }
    for (const auto& [name, value] : options.headers) validateHeader(name, value);
    validateCredentials(options);
    wire_headers = wireHeaders(options.headers);
    if (!options.token_file.empty()) {
      token = std::make_unique<net::BearerTokenFile>(
          options.token_file, options.token_recheck_interval, "--prometheus-token-file");
    }
    if (!options.basic_auth_password_file.empty()) {
      basic_password = std::make_unique<net::BearerTokenFile>(options.basic_auth_password_file,
                                                              options.token_recheck_interval,
                                                              "basic_auth_password_file");
    }
    net::HttpClientSettings client;
    client.origin = base.origin;
    // cpprestsdk's timeout restarts with every network read; the per-call deadline is enforced
    // by HttpCall, this only bounds abandoned exchanges.
    client.timeout = options.client_timeout;
    client.tls.ca = {options.ca_file, options.ca_data, "--prometheus-ca-file"};
    client.tls.client_cert = {options.client_cert_file, options.client_cert_data,
                              "--prometheus-client-tls-cert-file"};
    client.tls.client_key = {options.client_key_file, options.client_key_data,
                             "--prometheus-client-tls-key-file"};
    client.tls.ca_replaces_system_roots = options.ca_replaces_system_roots;
    client.verify_server = !options.insecure_skip_tls_verify;
    net::validateTlsSettings(client.tls);
    http = net::makeHttpClient(client);
    port = base.port != 0 ? std::to_string(base.port) : (base.scheme == "https" ? "443" : "80");
    noteSecrets();
  }

  // What a client-facing message must not contain: where Prometheus is and how the adapter
  // authenticates to it. Longest first, so a URL goes as a whole before its host does.
  void noteSecrets() {
    plain_secrets = {options.url, base.display(), base.origin, base.query};
    for (const auto& [name, value] : options.headers) {
      if (value.size() >= kMinRedactedValueBytes) plain_secrets.push_back(value);
    }
    for (std::string_view rest = base.query; !rest.empty();) {
      const std::string_view item = rest.substr(0, rest.find('&'));
      rest.remove_prefix(std::min(rest.size(), item.size() + 1));
      const auto eq = item.find('=');
      if (eq != std::string_view::npos && item.size() - eq - 1 >= kMinRedactedValueBytes) {
        plain_secrets.emplace_back(item.substr(eq + 1));
      }
    }
    // The bare host only when it looks like an address or a domain name: a single-label name
    // such as "prometheus" would also match Prometheus's own words.
    token_secrets = {base.host + ":" + port};
    if (base.host.find_first_of(".:") != std::string::npos) token_secrets.push_back(base.host);
    const auto longest_first = [](const std::string& a, const std::string& b) {
      return a.size() > b.size();
    };
    std::sort(plain_secrets.begin(), plain_secrets.end(), longest_first);
    std::sort(token_secrets.begin(), token_secrets.end(), longest_first);
  }

  // The Authorization header value of the configured credential; "" for none.
  std::string authorization() const {
    if (token) return "Bearer " + token->current();
    if (!options.bearer_token.empty()) return "Bearer " + options.bearer_token;
    if (basic_password) {
      return basicAuthorization(options.basic_auth_username, basic_password->current());
    }
    if (!options.basic_auth_username.empty()) {
      return basicAuthorization(options.basic_auth_username, options.basic_auth_password);
    }
    return "";
  }

  // The credentials as they stand now (tokens and passwords rotate).
  std::vector<std::string> currentSecrets() const {
    std::vector<std::string> secrets;
    if (token) secrets.push_back(token->current());
    secrets.push_back(options.bearer_token);
    secrets.push_back(options.basic_auth_password);
    if (basic_password) secrets.push_back(basic_password->current());
    if (const std::string value = authorization(); value.starts_with("Basic ")) {
      secrets.push_back(value.substr(6));
    }
    return secrets;
  }

  // `message` as a client may see it.
  std::string redact(std::string message) const {
    for (const auto& secret : plain_secrets) {
      message = replaceAll(std::move(message), secret, false);
    }
    for (const auto& secret : currentSecrets()) {
      if (secret.size() >= kMinRedactedValueBytes) {
        message = replaceAll(std::move(message), secret, false);
      }
    }
    for (const auto& secret : token_secrets) message = replaceAll(std::move(message), secret, true);
    return message;
  }

  // The error for a non-2xx answer. The body is redacted before it is quoted: quoting shortens
  // it, and a secret cut in half there would no longer be recognised.
  PrometheusError errorAnswer(HttpCall& call) const {
    const std::string body = readBody(call, kMaxErrorBodyBytes, /*fail_when_larger=*/false);
    return errorForHttpStatus(call.status(), redact(body));
  }

  std::chrono::milliseconds effectiveTimeout(std::chrono::milliseconds timeout) const {
    if (timeout.count() <= 0) return options.client_timeout;
    return std::min(timeout, options.client_timeout);
  }

  net::HttpRequest makeRequest(const HttpRequestSpec& spec, bool gzipped) const {
    net::HttpRequest request;
    request.method = spec.verb == Verb::kPost ? "POST" : "GET";
    request.target = spec.target;
    auto& headers = request.headers;
    for (const auto& [name, value] : wire_headers) headers.emplace_back(name, value);
    // Defaults only: a user's own Accept or User-Agent replaces them rather than being merged.
    if (!request.hasHeader("Accept")) headers.emplace_back("Accept", "application/json");
    if (!request.hasHeader("User-Agent")) headers.emplace_back("User-Agent", "metrics-adapter");
    if (gzipped && !request.hasHeader("Accept-Encoding")) {
      headers.emplace_back("Accept-Encoding", "gzip");  // the exact token: below
    }
    if (const std::string value = authorization(); !value.empty()) {
      headers.emplace_back("Authorization", value);
    }
    if (spec.verb == Verb::kPost) {
      request.body = spec.body;
      headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
    }
    return request;
  }

  // Runs one exchange with `handle` reading the answer; logs path, status and duration.
  template <typename Handle>
  auto run(std::string_view endpoint, const Params& params, std::chrono::milliseconds timeout,
           Handle&& handle) {
    const auto started = std::chrono::steady_clock::now();
    const HttpRequestSpec spec =
        buildRequest(base, endpoint, params, verb, options.post_threshold_bytes);
    const std::string path = base.path_prefix + std::string(endpoint);
    const char* method = spec.verb == Verb::kPost ? "POST" : "GET";
    const auto observe = [&](std::string_view outcome) {
      const auto waited = std::chrono::steady_clock::now() - started;
      self_metrics->observePrometheusCall(options.backend, endpointLabel(endpoint), outcome,
                                          waited);
      telemetry::PrometheusTimeOnThisThread::add(waited);
    };
    const auto elapsed_ms = [&] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::steady_clock::now() - started)
          .count();
    };
    try {
      net::CallContext context{
          base.host,
          port,
          started + timeout,
          kTlsHint,
          [timeout](const net::CallFailure& f) { return callError(f, timeout); },
          canceller};
      HttpCall call(*http, makeRequest(spec, endpoint == kSeriesEndpoint), std::move(context));
      auto result = handle(call);
      observe("success");
      SPDLOG_DEBUG("prometheus {} {}: {} in {} ms", method, path, call.status(), elapsed_ms());
      return result;
    } catch (const PrometheusError& e) {
      observe(outcomeLabel(e.kind()));
      SPDLOG_DEBUG("prometheus {} {}: {} (status {}) after {} ms", method, path,
                   outcomeLabel(e.kind()), e.httpStatus(), elapsed_ms());
      throw PrometheusError(
          e.kind(), e.httpStatus(), redact(e.what()),
          std::string(method) + " " + base.display() + std::string(endpoint) + ": " + e.detail());
    } catch (...) {
      SPDLOG_DEBUG("prometheus {} {}: abandoned after {} ms", method, path, elapsed_ms());
      throw;
    }
  }

  PrometheusClientOptions options;
  BaseUrl base;
  Verb verb = Verb::kGet;
  std::string port;
  HeaderList wire_headers;  // options.headers as wireHeaders() groups them
  std::unique_ptr<net::BearerTokenFile> token;
  std::unique_ptr<net::BearerTokenFile> basic_password;  // basic_auth_password_file
  std::unique_ptr<net::HttpClient> http;
  const std::shared_ptr<net::CallCanceller> canceller = std::make_shared<net::CallCanceller>();
  std::shared_ptr<telemetry::SelfMetrics> self_metrics;
  std::vector<std::string> plain_secrets;  // redacted wherever they occur
  std::vector<std::string> token_secrets;  // redacted where they are a whole host-like token
};

PrometheusClient::PrometheusClient(PrometheusClientOptions options,
                                   std::shared_ptr<telemetry::SelfMetrics> self_metrics)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(self_metrics))) {}

PrometheusClient::~PrometheusClient() = default;

void PrometheusClient::cancelCalls() { impl_->canceller->cancelAll(); }

QueryResult PrometheusClient::query(const std::string& promql, Clock::time_point at,
                                    std::chrono::milliseconds timeout) {
  const auto effective = impl_->effectiveTimeout(timeout);
  const Params params{{"query", promql},
                      {"time", formatPrometheusTime(at)},
                      {"timeout", formatPrometheusDuration(effective)}};
  return impl_->run("/api/v1/query", params, effective, [&](HttpCall& call) {
    if (!isSuccess(call.status())) throw impl_->errorAnswer(call);
    const std::string body = readBody(call, impl_->options.max_response_bytes, true);
    QueryResult result;
    try {
      result = parseQueryResponse(body);
    } catch (const PrometheusError& e) {
      throw withStatus(e, call.status());
    }
    if (!result.warnings.empty()) {
      SPDLOG_WARN("Prometheus warned about query {}: {}", sanitizeLine(promql, 200),
                  sanitizeLine(result.warnings.front(), 500));
    }
    if (result.bad_samples > 0) {
      SPDLOG_WARN(
          "Prometheus answered query {} with {} sample(s) timed before 1970, after 9999 or not "
          "at all; they are left out",
          sanitizeLine(promql, 200), result.bad_samples);
      impl_->self_metrics->countBadSamples(result.bad_samples);
    }
    return result;
  });
}

RangeResult PrometheusClient::queryRange(const std::string& promql, Clock::time_point start,
                                         Clock::time_point end, std::chrono::milliseconds step,
                                         std::chrono::milliseconds timeout) {
  const auto effective = impl_->effectiveTimeout(timeout);
  const Params params{{"query", promql},
                      {"start", formatPrometheusTime(start)},
                      {"end", formatPrometheusTime(end)},
                      {"step", formatPrometheusSeconds(step)},
                      {"timeout", formatPrometheusDuration(effective)}};
  return impl_->run("/api/v1/query_range", params, effective, [&](HttpCall& call) {
    if (!isSuccess(call.status())) throw impl_->errorAnswer(call);
    const std::string body = readBody(call, impl_->options.max_response_bytes, true);
    RangeResult result;
    try {
      result = parseRangeResponse(body);
    } catch (const PrometheusError& e) {
      throw withStatus(e, call.status());
    }
    if (!result.warnings.empty()) {
      SPDLOG_WARN("Prometheus warned about range query {}: {}", sanitizeLine(promql, 200),
                  sanitizeLine(result.warnings.front(), 500));
    }
    if (result.bad_samples > 0) {
      SPDLOG_WARN(
          "Prometheus answered range query {} with {} point(s) timed before 1970 or after 9999; "
          "they are left out",
          sanitizeLine(promql, 200), result.bad_samples);
      impl_->self_metrics->countBadSamples(result.bad_samples);
    }
    return result;
  });
}

void PrometheusClient::series(const std::string& selector, Clock::time_point start,
                              std::chrono::milliseconds timeout, const SeriesVisitor& visitor) {
  const auto effective = impl_->effectiveTimeout(timeout);
  const Params params{{"match[]", selector}, {"start", formatPrometheusTime(start)}};
  impl_->run(kSeriesEndpoint, params, effective, [&](HttpCall& call) {
    if (!isSuccess(call.status())) throw impl_->errorAnswer(call);
    BodyStreamBuf body(call, kMaxSeriesTokenBytes);
    std::istream in(&body);
    SeriesAnswer answer;
    try {
      answer = parseSeriesStream(in, visitor, [&body] { body.tokenDone(); });
    } catch (const PrometheusError& e) {
      // A timeout or a broken connection shows up to the parser as a truncated document.
      if (body.error() != nullptr) std::rethrow_exception(body.error());
      throw withStatus(e, call.status());
    }
    if (body.error() != nullptr) std::rethrow_exception(body.error());
    if (!answer.warnings.empty()) {
      SPDLOG_WARN("Prometheus warned about series {}: {}", sanitizeLine(selector, 200),
                  answer.warnings.front());
    }
    return answer.series;
  });
}

}  // namespace metrics_adapter::prometheus
