#pragma once

#include <string>
#include <string_view>

namespace metrics_adapter::net {

// Standard base64 (RFC 4648, with padding), as HTTP Basic credentials and kubeconfig *-data
// fields use it.
std::string encodeBase64(std::string_view bytes);
// Throws std::invalid_argument when `text` is not base64.
std::string decodeBase64(std::string_view text);

}  // namespace metrics_adapter::net
