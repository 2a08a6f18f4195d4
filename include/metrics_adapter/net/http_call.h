#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "metrics_adapter/net/call_canceller.h"
#include "metrics_adapter/net/http_client.h"

namespace metrics_adapter::net {

// Why an exchange produced no complete answer.
struct CallFailure {
  enum class Kind {
    kTimeout,      // the deadline passed
    kUnreachable,  // no answer: refused, DNS, TLS, connection closed before the status line
    kBrokenBody,   // the answer broke off after its headers
  };
  Kind kind = Kind::kUnreachable;
  int status = 0;     // the HTTP status once the headers had arrived, else 0
  std::string cause;  // in a few words ("Connection refused"); empty for kTimeout
};

// What one call needs besides the request itself.
struct CallContext {
  std::string host;  // for diagnosing connect failures; IPv6 literals keep their brackets
  std::string port;
  std::chrono::steady_clock::time_point deadline;  // nothing of the call outlives this
  std::string tls_hint;  // follows "TLS handshake failed", e.g. which setting adds trust
  // The exception the caller's API promises for a failure; every failure is thrown as this.
  std::function<std::exception_ptr(const CallFailure&)> to_error;
  // Optional: cancelAll() ends the call at once, as kUnreachable.
  std::shared_ptr<CallCanceller> canceller;
};

// One HTTP exchange whose body is read as a stream. Not thread-safe; one per call. Do not run it
// on cpprestsdk's own thread pool: it blocks until the answer or the deadline.
class HttpCall {
 public:
  // Sends `request` and waits for the status line and headers. Throws the context's error for
  // kTimeout past the deadline and kUnreachable when no answer could be had or the context's
  // canceller ended the call.
  HttpCall(HttpClient& client, const HttpRequest& request, CallContext context);
  // Abandons an unfinished exchange: the connection is closed rather than drained.
  ~HttpCall();

  HttpCall(const HttpCall&) = delete;
  HttpCall& operator=(const HttpCall&) = delete;

  int status() const { return status_; }
  std::optional<std::uint64_t> contentLength() const;
  // The value of a response header (case-insensitive name), or "" when it is absent.
  std::string header(const std::string& name) const;

  // Copies up to `capacity` body bytes; returns 0 at the end of the body. An answer with
  // Content-Encoding: gzip (the caller asked with Accept-Encoding) is inflated here, straight
  // into `destination`. Throws the context's error for kTimeout past the deadline, kBrokenBody
  // when the answer breaks off or its gzip stream is damaged or cut short, and kUnreachable
  // when the context's canceller ended the call.
  std::size_t read(char* destination, std::size_t capacity);

 private:
  friend class CallCanceller;

  // The call's membership in its canceller, for as long as the call lives.
  class Registration {
   public:
    Registration(HttpCall* call, std::shared_ptr<CallCanceller> canceller);
    ~Registration();
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    bool refused() const { return refused_; }  // the canceller had already cancelled

   private:
    HttpCall* call_;
    std::shared_ptr<CallCanceller> canceller_;
    bool refused_ = false;
  };

  // The exchange in cpprestsdk's terms (its task, response, body pipe): http_call.cpp.
  struct Exchange;

  // The body's bytes as they came over the wire.
  std::size_t readWire(char* destination, std::size_t capacity);
  std::size_t readInflated(char* destination, std::size_t capacity);
  // Cancels the exchange and waits (bounded) until it settled.
  void abandon();
  void waitSettled();
  // Ends the call from another thread (CallCanceller::cancelAll, under its lock).
  void interrupt();
  void failIfInterrupted();
  [[noreturn]] void fail(CallFailure::Kind kind, std::string cause) const;

  CallContext context_;
  std::unique_ptr<Exchange> exchange_;
  int status_ = 0;
  bool ended_ = false;
  bool abandoned_ = false;
  std::atomic<bool> interrupted_{false};
  std::atomic<bool> answered_{false};  // the status line and headers are in
  // Last: it is removed from the canceller before the members interrupt() uses are destroyed.
  Registration registration_;
};

// The body read to its end, or its first `limit` bytes.
struct BodyText {
  std::string bytes;
  bool complete = true;  // false: the body went on past `limit`
};

// Reads the rest of the body, stopping after `limit` bytes. Throws what HttpCall::read throws.
BodyText readBody(HttpCall& call, std::size_t limit);

}  // namespace metrics_adapter::net
