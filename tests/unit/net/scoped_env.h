#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace metrics_adapter::net::testing {

// Sets (or, for a null value, clears) one environment variable until destroyed, then restores
// it: for settings read from the environment (in-cluster service address, OpenSSL's
// SSL_CERT_FILE standing in for the system's roots).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace metrics_adapter::net::testing
