#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace metrics_adapter::net {
class CallCanceller;
}

namespace metrics_adapter::kube {

// A failed Kubernetes API call. http_status is 0 when no answer came (unreachable, TLS,
// timeout); what() is one line and never contains credentials.
class KubeError : public std::runtime_error {
 public:
  KubeError(int http_status, const std::string& message)
      : std::runtime_error(message), http_status_(http_status) {}
  int httpStatus() const { return http_status_; }
  bool timedOut() const { return timed_out_; }
  KubeError& markTimeout() {
    timed_out_ = true;
    return *this;
  }
  // How long the API server asked callers to wait (Retry-After of a 429 or 5xx answer in
  // seconds); zero when it did not ask.
  std::chrono::seconds retryAfter() const { return retry_after_; }
  KubeError& withRetryAfter(std::chrono::seconds retry_after) {
    retry_after_ = retry_after;
    return *this;
  }

 private:
  int http_status_;
  bool timed_out_ = false;
  std::chrono::seconds retry_after_{0};
};

// The delay of a Retry-After header given in seconds ("3"); zero for an absent, negative or
// malformed value and for the HTTP-date form, capped at `cap`.
std::chrono::seconds parseRetryAfter(std::string_view value, std::chrono::seconds cap);

// One line of a watch stream (kube/watch_event.h: only the watch's implementers read it).
struct WatchEvent;

// One watch call.
struct WatchRequest {
  // With its query, already URL-encoded: "/api/v1/pods?watch=1&resourceVersion=7&...".
  std::string path;
  std::string accept;
  // The whole stream's life; ask the server for less (timeoutSeconds) so it ends the stream
  // first. Not capped by KubeClientOptions::timeout.
  std::chrono::milliseconds timeout{0};
  // Optional: cancelAll() ends the stream from another thread (shutdown).
  std::shared_ptr<net::CallCanceller> canceller;
};

// Called once per event, on the watching thread; false stops the watch.
using WatchHandler = std::function<bool(WatchEvent&&)>;

// The Kubernetes API calls the adapter makes. Implementations are thread-safe.
class KubeApi {
 public:
  virtual ~KubeApi() = default;

  // GET `path` ("/api/v1/namespaces/default/pods?labelSelector=..."; already URL-encoded) with
  // the given Accept header. Returns the parsed JSON body of a 2xx answer; any other answer
  // throws KubeError carrying the Status message when the body is a Status.
  virtual nlohmann::json get(const std::string& path, std::string_view accept,
                             std::chrono::milliseconds timeout) = 0;

  // POST a JSON body (TokenReview, SubjectAccessReview); same answer handling as get().
  virtual nlohmann::json post(const std::string& path, const nlohmann::json& body,
                              std::chrono::milliseconds timeout) = 0;

  // GET a watch stream (newline-delimited JSON events) and hand each event to `on_event` as it
  // arrives. Returns when the server ends the stream or `on_event` returns false. Throws
  // KubeError for a non-2xx answer (httpStatus() 410 for Gone), a stream that breaks off or
  // holds a malformed line, the request's timeout, and cancellation. The default throws: a
  // client that cannot watch (the lister then fails its requests with that message).
  virtual void watch(const WatchRequest& request, const WatchHandler& on_event);
};

// How to reach and authenticate to the API server.
struct KubeClientOptions {
  std::string server;  // "https://10.96.0.1:443"
  std::string ca_file;
  std::string ca_data;  // PEM (kubeconfig certificate-authority-data, base64-decoded)
  std::string client_cert_file;
  std::string client_key_file;
  std::string client_cert_data;  // PEM
  std::string client_key_data;   // PEM
  std::string token;             // static bearer token
  std::string token_file;        // re-read when it changes (projected service-account tokens)
  // Basic authentication (kubeconfig user.username/password): read for --prometheus-auth-config;
  // KubeClient refuses them, as Kubernetes itself no longer accepts basic authentication.
  std::string username;
  std::string password;
  bool insecure_skip_tls_verify = false;
  std::chrono::milliseconds timeout{std::chrono::seconds(10)};  // cap on every call
  std::string source;  // "in-cluster" or the kubeconfig path, for logs and errors
  // Larger 2xx answers fail with KubeError instead of being buffered.
  std::size_t max_response_bytes = std::size_t{64} << 20;
  // How often at most token_file's mtime/size/inode is compared to decide on a re-read.
  std::chrono::milliseconds token_recheck_interval{std::chrono::seconds(5)};
};

// Reads a kubeconfig (current-context; clusters/users/contexts; *-data fields base64; relative
// file paths resolved against the kubeconfig's directory). Throws std::invalid_argument naming
// the file and the field.
KubeClientOptions loadKubeconfig(const std::string& path);

// Where the pod's service-account token and CA are mounted: the environment variable
// METRICS_ADAPTER_SERVICE_ACCOUNT_DIR when set (for tests, which have no pod), else
// /var/run/secrets/kubernetes.io/serviceaccount.
std::string serviceAccountDir();

// The in-cluster configuration (KUBERNETES_SERVICE_HOST/PORT, the service-account token file
// and CA under `secrets_dir`), or nullopt outside a cluster.
std::optional<KubeClientOptions> inClusterOptions(
    const std::string& secrets_dir = serviceAccountDir());

// cpprestsdk-based client. Validates options in the constructor (unreadable files, bad PEM,
// bad server URL, basic authentication -> std::invalid_argument). A CA (file or data) is the only
// trust for the server when given, the system's roots otherwise; token_file wins over token. Calls
// block the calling thread until the answer or the deadline: the call's timeout capped by
// options.timeout (a timeout <= 0 means options.timeout). Redirects are not followed.
class KubeClient : public KubeApi {
 public:
  explicit KubeClient(KubeClientOptions options);
  ~KubeClient() override;

  nlohmann::json get(const std::string& path, std::string_view accept,
                     std::chrono::milliseconds timeout) override;
  nlohmann::json post(const std::string& path, const nlohmann::json& body,
                      std::chrono::milliseconds timeout) override;
  // Watch streams use a client of their own whose idle limit is the stream's life (an idle
  // watch is normal); event lines longer than options.max_response_bytes fail the stream.
  void watch(const WatchRequest& request, const WatchHandler& on_event) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace metrics_adapter::kube
