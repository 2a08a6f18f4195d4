#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace metrics_adapter::server {

// Go's url.PathUnescape, or url.QueryUnescape with `plus_is_space` ('+' becomes ' '): every
// %XX becomes the byte XX (docs/api-contract.md "URL decoding"). nullopt when a '%' is not followed
// by two hex digits. The result may hold any byte, including NUL and invalid UTF-8.
std::optional<std::string> percentDecode(std::string_view text, bool plus_is_space);
// The same into `decoded` (replacing what it held, keeping its capacity); false for a bad '%'.
bool percentDecodeInto(std::string_view text, bool plus_is_space, std::string& decoded);

}  // namespace metrics_adapter::server
