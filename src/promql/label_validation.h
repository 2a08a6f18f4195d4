#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace metrics_adapter::promql::selector {

// Why `key` is not a Kubernetes qualified name (optional DNS-1123 subdomain prefix of at most
// 253 characters and '/', then a name of at most 63 characters of [-A-Za-z0-9_.] that starts
// and ends alphanumeric), as apimachinery's IsQualifiedName words it; nullopt when valid.
std::optional<std::string> checkLabelKey(std::string_view key);

// Why `value` is not a valid label value (at most 63 characters, empty or [-A-Za-z0-9_.]
// starting and ending alphanumeric); nullopt when valid.
std::optional<std::string> checkLabelValue(std::string_view value);

// Go's strconv.ParseInt(text, 10, 64): optional sign, at least one decimal digit, nothing else,
// in int64 range. nullopt otherwise.
std::optional<std::int64_t> parseGoInt64(std::string_view text);

}  // namespace metrics_adapter::promql::selector
