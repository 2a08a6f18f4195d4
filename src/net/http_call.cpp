#include "metrics_adapter/net/http_call.h"

#include <stdexcept>
#include <string_view>
#include <utility>

#include "metrics_adapter/net/done_signal.h"
#include "metrics_adapter/net/gzip_decoder.h"
#include "metrics_adapter/text/ascii.h"
#include "net/body_pipe.h"
#include "net/connect_probe.h"
#include "net/cpprest.h"
#include "net/http_client_native.h"

namespace metrics_adapter::net {
namespace {

constexpr std::size_t kReadChunkBytes = std::size_t{64} * 1024;
constexpr const char* kCancelledCause = "the call was cancelled: the adapter is shutting down";
// How long a finished or abandoned call waits for cpprestsdk to run its last continuation. It
// takes milliseconds once the call is cancelled; the bound only guards against a stuck pool.
constexpr std::chrono::milliseconds kSettleLimit{250};

bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Waits for `task` until `deadline`; true when it finished (successfully or not).
template <typename T>
bool waitUntil(const pplx::task<T>& task, std::chrono::steady_clock::time_point deadline) {
  auto finished = std::make_shared<DoneSignal>();
  task.then([finished](pplx::task<T> outcome) {
    try {
      outcome.wait();  // marks a failure as observed; pplx aborts the process otherwise
    } catch (...) {
    }
    finished->set();
  });
  return finished->waitUntil(deadline);
}

std::string describe(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

// Content-Encoding names gzip ("gzip", any case, or the old alias "x-gzip").
bool isGzip(std::string_view value) {
  value = text::trimAsciiSpace(value);
  return text::equalsIgnoringAsciiCase(value, "gzip") ||
         text::equalsIgnoringAsciiCase(value, "x-gzip");
}

bool isTimeout(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const web::http::http_exception& e) {
    const int code = e.error_code().value();
    return code == static_cast<int>(std::errc::timed_out) ||
           code == static_cast<int>(std::errc::operation_canceled);
  } catch (...) {
    return false;
  }
}

web::http::http_request nativeRequest(const HttpRequest& request) {
  web::http::http_request native{web::http::method(request.method)};
  native.set_request_uri(web::uri(request.target));
  if (!request.body.empty()) {
    // The byte-vector overload: the std::string one reinterprets a char stream buffer as a
    // uint8_t one, which UBSan rightly reports. It sets a Content-Type the caller's replaces.
    native.set_body(std::vector<unsigned char>(request.body.begin(), request.body.end()));
    if (request.hasHeader("Content-Type")) {
      native.headers().remove(web::http::header_names::content_type);
    }
  }
  for (const auto& [name, value] : request.headers) native.headers().add(name, value);
  return native;
}

}  // namespace

struct HttpCall::Exchange {
  std::shared_ptr<BodyPipe> pipe = std::make_shared<BodyPipe>();
  std::shared_ptr<DoneSignal> settled = std::make_shared<DoneSignal>();
  pplx::cancellation_token_source cancellation;
  web::http::http_response response;
  // For a gzipped answer: the decoder and the compressed bytes read but not yet inflated.
  struct Inflation {
    GzipDecoder decoder;
    std::vector<char> wire;
    std::size_t at = 0;       // the first byte of `wire` not yet inflated
    std::size_t pending = 0;  // bytes of `wire` from `at` not yet inflated
    std::size_t wire_total = 0;
    bool wire_ended = false;
  };
  std::unique_ptr<Inflation> inflation;

  // Finishes the body pipe when cpprestsdk completes the exchange, then sets `settled`.
  void settleWhenDone(const pplx::task<web::http::http_response>& answer) const;
};

HttpCall::HttpCall(HttpClient& client, const HttpRequest& request, CallContext context)
    : context_(std::move(context)),
      exchange_(std::make_unique<Exchange>()),
      registration_(this, context_.canceller) {
  if (registration_.refused()) fail(CallFailure::Kind::kUnreachable, kCancelledCause);
  web::http::http_request native = nativeRequest(request);
  native.set_response_stream(
      concurrency::streams::streambuf<std::uint8_t>(exchange_->pipe).create_ostream());
  const pplx::task<web::http::http_response> answer =
      client.native().client.request(native, exchange_->cancellation.get_token());
  exchange_->settleWhenDone(answer);
  const bool answered = waitUntil(answer, context_.deadline);
  failIfInterrupted();
  if (!answered) {
    abandon();
    fail(CallFailure::Kind::kTimeout, "");
  }
  try {
    exchange_->response = answer.get();
  } catch (...) {
    abandon();
    failIfInterrupted();
    const std::exception_ptr error = std::current_exception();
    if (isTimeout(error)) fail(CallFailure::Kind::kTimeout, "");
    const std::string what = describe(error);
    std::string cause;
    if (startsWith(what, "Error resolving address") || startsWith(what, "Failed to resolve")) {
      cause = "cannot resolve host " + context_.host;
    } else if (startsWith(what, "Failed to connect to any resolved endpoint")) {
      cause = diagnoseConnectFailure(context_.host, context_.port, context_.deadline);
    } else if (startsWith(what, "Error in SSL handshake")) {
      cause = "TLS handshake failed";
      if (!context_.tls_hint.empty()) cause += " " + context_.tls_hint;
    } else {
      cause = what;
    }
    fail(CallFailure::Kind::kUnreachable, cause);
  }
  status_ = exchange_->response.status_code();
  answered_ = true;
  if (isGzip(header(web::http::header_names::content_encoding))) {
    exchange_->inflation = std::make_unique<Exchange::Inflation>();
    exchange_->inflation->wire.resize(kReadChunkBytes);
  }
}

HttpCall::~HttpCall() {
  if (!ended_) abandon();
  waitSettled();
}

std::optional<std::uint64_t> HttpCall::contentLength() const {
  std::uint64_t length = 0;
  const web::http::http_headers& headers = exchange_->response.headers();
  if (headers.match(web::http::header_names::content_length, length)) return length;
  return std::nullopt;
}

std::string HttpCall::header(const std::string& name) const {
  const web::http::http_headers& headers = exchange_->response.headers();
  const auto found = headers.find(name);
  return found == headers.end() ? std::string() : found->second;
}

std::size_t HttpCall::read(char* destination, std::size_t capacity) {
  return exchange_->inflation ? readInflated(destination, capacity)
                              : readWire(destination, capacity);
}

std::size_t HttpCall::readInflated(char* destination, std::size_t capacity) {
  Exchange::Inflation& in = *exchange_->inflation;
  auto* out = reinterpret_cast<std::uint8_t*>(destination);
  while (capacity > 0) {
    if (in.pending == 0 && !in.wire_ended) {
      in.at = 0;
      in.pending = readWire(in.wire.data(), in.wire.size());
      in.wire_total += in.pending;
      in.wire_ended = in.pending == 0;
    }
    if (in.pending == 0) {
      // An empty body is empty whatever its Content-Encoding says (a HEAD, a 204).
      if (in.wire_total > 0 && !in.decoder.complete()) {
        fail(CallFailure::Kind::kBrokenBody, "the gzip answer was cut short");
      }
      return 0;
    }
    GzipDecoder::Step step;
    try {
      step = in.decoder.decode(reinterpret_cast<const std::uint8_t*>(in.wire.data()) + in.at,
                               in.pending, out, capacity);
    } catch (const std::runtime_error& e) {
      abandon();
      fail(CallFailure::Kind::kBrokenBody, e.what());
    }
    in.at += step.consumed;
    in.pending -= step.consumed;
    if (step.produced > 0) return step.produced;
  }
  return 0;
}

std::size_t HttpCall::readWire(char* destination, std::size_t capacity) {
  if (ended_) return 0;
  const BodyPipe::ReadResult result =
      exchange_->pipe->read(destination, capacity, context_.deadline);
  failIfInterrupted();
  switch (result.status) {
    case BodyPipe::ReadStatus::kData:
      return result.size;
    case BodyPipe::ReadStatus::kEnd:
      ended_ = true;
      return 0;
    case BodyPipe::ReadStatus::kTimedOut:
      abandon();
      fail(CallFailure::Kind::kTimeout, "");
    case BodyPipe::ReadStatus::kFailed:
      abandon();
      if (isTimeout(result.error)) fail(CallFailure::Kind::kTimeout, "");
      fail(CallFailure::Kind::kBrokenBody, describe(result.error));
  }
  return 0;
}

void HttpCall::fail(CallFailure::Kind kind, std::string cause) const {
  const CallFailure failure{kind, status_, std::move(cause)};
  std::exception_ptr error = context_.to_error ? context_.to_error(failure) : nullptr;
  if (error == nullptr) {
    throw std::runtime_error(failure.cause.empty() ? "HTTP call timed out" : failure.cause);
  }
  std::rethrow_exception(error);
}

HttpCall::Registration::Registration(HttpCall* call, std::shared_ptr<CallCanceller> canceller)
    : call_(call), canceller_(std::move(canceller)) {
  if (canceller_ && !canceller_->add(call_)) {
    refused_ = true;
    canceller_.reset();
  }
}

HttpCall::Registration::~Registration() {
  if (canceller_) canceller_->remove(call_);
}

void HttpCall::interrupt() {
  interrupted_ = true;
  exchange_->pipe
      ->abandon();  // wakes a reader; an answered exchange then ends as abandon() describes
  // Only an exchange still waiting for its answer needs the cross-thread cancel. An answered one
  // (a watch stream idle between events, say) is cancelled, if at all, by its own thread in
  // abandon(), after cpprestsdk had time to finish a read it may be starting.
  if (!answered_) exchange_->cancellation.cancel();
}

void HttpCall::failIfInterrupted() {
  if (!interrupted_) return;
  abandon();
  fail(CallFailure::Kind::kUnreachable, kCancelledCause);
}

void HttpCall::Exchange::settleWhenDone(const pplx::task<web::http::http_response>& answer) const {
  // The writer finishes the pipe: cleanly once the whole body went through it, or with the
  // transport's error. Either way the exception is observed here. The call is settled once
  // cpprestsdk has nothing left to run for it.
  // NOLINTBEGIN(performance-unnecessary-value-param): pplx tells a task-based continuation by
  // its by-value task parameter.
  answer.then([pipe = pipe, settled = settled](pplx::task<web::http::http_response> answered) {
    try {
      answered.get().content_ready().then(
          [pipe, settled](pplx::task<web::http::http_response> ready) {
            try {
              ready.wait();
              pipe->finish(nullptr);
            } catch (...) {
              pipe->finish(std::current_exception());
            }
            settled->set();
          });
    } catch (...) {
      settled->set();  // no answer, so no body: the constructor reports the failure
    }
  });
  // NOLINTEND(performance-unnecessary-value-param)
}

void HttpCall::abandon() {
  if (abandoned_) return;
  abandoned_ = true;
  ended_ = true;
  exchange_->pipe->abandon();
  // Once the headers are in, failing the pipe's writes makes cpprestsdk end the exchange on its
  // own threads. Cancelling closes the socket from this thread instead, which races with a read
  // cpprestsdk may be starting on another (a rare null dereference inside Boost.Asio, seen under
  // UBSan). So cancelling is for what cannot end by itself: no answer yet, or a stalled body.
  if (status_ != 0 &&
      exchange_->settled->waitUntil(std::chrono::steady_clock::now() + kSettleLimit)) {
    return;
  }
  exchange_->cancellation.cancel();
  waitSettled();
}

void HttpCall::waitSettled() {
  // Not returning while cpprestsdk still runs work for the call keeps a process that exits
  // right after a failed call from dropping that work (and its memory) unrun.
  exchange_->settled->waitUntil(std::chrono::steady_clock::now() + kSettleLimit);
}

BodyText readBody(HttpCall& call, std::size_t limit) {
  BodyText body;
  while (body.bytes.size() <= limit) {
    const std::size_t used = body.bytes.size();
    body.bytes.resize(used + kReadChunkBytes);
    const std::size_t count = call.read(body.bytes.data() + used, kReadChunkBytes);
    body.bytes.resize(used + count);
    if (count == 0) return body;
  }
  body.bytes.resize(limit);
  body.complete = false;
  return body;
}

}  // namespace metrics_adapter::net
