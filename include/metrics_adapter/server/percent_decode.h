#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace metrics_adapter::server {

// Go's url.PathUnescape, or url.QueryUnescape with `plus_is_space` ('+' becomes ' '): every
// %XX becomes the byte XX (docs/api-contract.md "URL decoding"). nullopt when a '%' is not followed
// by two hex digits. The result may hold any byte, including NUL and invalid UTF-8.
std::optional<std::string> percentDecode(std::string_view text, bool plus_is_space);

// The inverse for building targets (tools that send what an HPA would): every byte outside
// RFC 3986's unreserved set (A-Z a-z 0-9 - . _ ~) becomes %XX.
std::string percentEncode(std::string_view text);

}  // namespace metrics_adapter::server
