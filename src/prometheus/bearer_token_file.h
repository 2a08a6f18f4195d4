#pragma once

#include <chrono>
#include <string>
#include <utility>

#include "metrics_adapter/net/bearer_token_file.h"

namespace metrics_adapter::prometheus {

// The token of --prometheus-token-file; errors name the flag.
class BearerTokenFile : public net::BearerTokenFile {
 public:
  BearerTokenFile(std::string path, std::chrono::milliseconds recheck_interval)
      : net::BearerTokenFile(std::move(path), recheck_interval, "--prometheus-token-file") {}
};

}  // namespace metrics_adapter::prometheus
