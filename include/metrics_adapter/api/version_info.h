#pragma once

#include <string>

#include "metrics_adapter/api/api_error.h"

namespace metrics_adapter::api {

// What /version reports (the fields of Kubernetes' version.Info that a C++ build can know).
struct VersionInfo {
  std::string git_version;  // "v0.1.0"
  std::string platform;     // "<os>/<arch>" in Go's names, e.g. "linux/amd64", "linux/arm64"
  std::string compiler;     // "gcc 12.2.0", "clang 14.0.6"
};

// The VersionInfo of this binary: `version` ("0.1.0") and the platform and compiler it was
// built for and with.
VersionInfo buildVersionInfo(const std::string& version);

// The /version JSON document.
Json versionDocument(const VersionInfo& info);

}  // namespace metrics_adapter::api
