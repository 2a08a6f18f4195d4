#include "metrics_adapter/net/http_call.h"

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "net/connect_probe.h"

namespace metrics_adapter::net {
namespace {

constexpr std::size_t kReadChunkBytes = 64 * 1024;
constexpr const char* kCancelledCause = "the call was cancelled: the adapter is shutting down";

bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Waits for `task` until `deadline`; true when it finished (successfully or not).
template <typename T>
bool waitUntil(const pplx::task<T>& task, std::chrono::steady_clock::time_point deadline) {
  struct Signal {
    std::mutex mutex;
    std::condition_variable done_changed;
    bool done = false;
  };
  auto signal = std::make_shared<Signal>();
  task.then([signal](pplx::task<T> finished) {
    try {
      finished.wait();  // marks a failure as observed; pplx aborts the process otherwise
    } catch (...) {
    }
    {
      std::lock_guard lock(signal->mutex);
      signal->done = true;
    }
    signal->done_changed.notify_all();
  });
  std::unique_lock lock(signal->mutex);
  return signal->done_changed.wait_until(lock, deadline, [&] { return signal->done; });
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

}  // namespace

HttpCall::HttpCall(web::http::client::http_client& client, web::http::http_request request,
                   CallContext context)
    : context_(std::move(context)),
      pipe_(std::make_shared<BodyPipe>()),
      registration_(this, context_.canceller) {
  if (registration_.refused()) fail(CallFailure::Kind::kUnreachable, kCancelledCause);
  request.set_response_stream(
      concurrency::streams::streambuf<std::uint8_t>(pipe_).create_ostream());
  const pplx::task<web::http::http_response> answer =
      client.request(std::move(request), cancellation_.get_token());
  const bool answered = waitUntil(answer, context_.deadline);
  failIfInterrupted();
  if (!answered) {
    abandon();
    fail(CallFailure::Kind::kTimeout, "");
  }
  try {
    response_ = answer.get();
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
  status_ = response_.status_code();
  // The writer finishes the pipe: cleanly once the whole body went through it, or with the
  // transport's error. Either way the exception is observed here.
  response_.content_ready().then([pipe = pipe_](pplx::task<web::http::http_response> ready) {
    try {
      ready.wait();
      pipe->finish(nullptr);
    } catch (...) {
      pipe->finish(std::current_exception());
    }
  });
}

HttpCall::~HttpCall() {
  if (!ended_) abandon();
}

std::optional<std::uint64_t> HttpCall::contentLength() const {
  std::uint64_t length = 0;
  if (response_.headers().match(web::http::header_names::content_length, length)) return length;
  return std::nullopt;
}

std::string HttpCall::header(const std::string& name) const {
  const auto found = response_.headers().find(name);
  return found == response_.headers().end() ? std::string() : found->second;
}

std::size_t HttpCall::read(char* destination, std::size_t capacity) {
  if (ended_) return 0;
  const BodyPipe::ReadResult result = pipe_->read(destination, capacity, context_.deadline);
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
  cancellation_.cancel();
  pipe_->abandon();
}

void HttpCall::failIfInterrupted() {
  if (!interrupted_) return;
  abandon();
  fail(CallFailure::Kind::kUnreachable, kCancelledCause);
}

void HttpCall::abandon() {
  if (abandoned_) return;
  abandoned_ = true;
  ended_ = true;
  cancellation_.cancel();
  pipe_->abandon();
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
