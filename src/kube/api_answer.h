#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "metrics_adapter/kube/kube_client.h"

namespace metrics_adapter::kube {

// The JSON document of a 2xx answer to `request` ("GET /api/v1/pods"). Throws KubeError(status)
// for malformed JSON and for nesting deeper than any Kubernetes object needs.
nlohmann::json parseAnswer(int status, std::string_view body, const std::string& request);

// The error for a non-2xx answer: the Status `message` when the body is a Kubernetes Status,
// otherwise the start of the body, as one line.
KubeError errorForAnswer(int status, std::string_view body, const std::string& request);

// "2s" for whole seconds, else "300ms".
std::string formatTimeout(std::chrono::milliseconds timeout);

}  // namespace metrics_adapter::kube
