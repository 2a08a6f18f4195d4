#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace metrics_adapter::net {

// `text` as one printable line of at most `max_bytes` bytes (plus "..." when cut): control
// characters become one space (none at the start or after a space), invalid UTF-8 bytes become '?',
// and a multi-byte character is never split. For quoting remote answers in messages and logs.
std::string sanitizeLine(std::string_view text, std::size_t max_bytes);

}  // namespace metrics_adapter::net
