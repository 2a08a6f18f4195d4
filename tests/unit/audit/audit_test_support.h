#pragma once

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "metrics_adapter/server/exchange_observer.h"
#include "metrics_adapter/telemetry/self_metrics.h"

namespace metrics_adapter::audit::testing {

// An exchange and the notes it points to, kept together.
struct TestExchange {
  server::ResponseNotes notes;
  server::Exchange exchange;

  TestExchange(std::string_view method, std::string_view target, int code,
               std::string_view body = "") {
    exchange.method = method;
    exchange.target = target;
    exchange.remote = "10.1.2.3:51234";
    exchange.user_agent = "kube-controller-manager/v1.30";
    exchange.code = code;
    exchange.latency = std::chrono::microseconds(1500);
    exchange.notes = &notes;
    exchange.response_body = body;
  }
  TestExchange& as(std::string user, std::vector<std::string> groups) {
    notes.user = std::move(user);
    notes.groups = std::move(groups);
    return *this;
  }
  TestExchange& decided(std::string_view decision, std::string reason = "") {
    notes.decision = decision;
    notes.decision_reason = std::move(reason);
    return *this;
  }
};

// The value of the sample with exactly these labels in the exposition, 0 when absent.
inline double sample(const telemetry::SelfMetrics& metrics, const std::string& series) {
  std::istringstream lines(metrics.exposition());
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return 0;
}

inline std::vector<nlohmann::json> jsonLines(const std::string& text) {
  std::vector<nlohmann::json> result;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty()) result.push_back(nlohmann::json::parse(line));
  }
  return result;
}

}  // namespace metrics_adapter::audit::testing
