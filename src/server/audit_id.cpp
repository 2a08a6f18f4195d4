#include "metrics_adapter/server/audit_id.h"

#include <cstdint>
#include <random>

#include "metrics_adapter/text/ascii.h"

namespace metrics_adapter::server {

AuditId newAuditId() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  const std::uint64_t high = (random() & ~std::uint64_t{0xF000}) | 0x4000;  // version 4
  const std::uint64_t low =
      (random() & ~(std::uint64_t{0xC} << 60)) | (std::uint64_t{0x8} << 60);  // variant 10
  // 8-4-4-4-12 hex digits: high's 16, then low's 16 (no snprintf: one per request).
  static constexpr char kHex[] = "0123456789abcdef";
  AuditId text;
  text.fill('-');
  std::size_t at = 0;
  for (int nibble = 0; nibble < 32; ++nibble) {
    if (at == 8 || at == 13 || at == 18 || at == 23) ++at;
    const std::uint64_t word = nibble < 16 ? high : low;
    text[at++] = kHex[(word >> (60 - 4 * (nibble % 16))) & 0xF];
  }
  return text;
}

std::string_view requestedAuditId(std::string_view header) { return text::trimAsciiSpace(header); }

}  // namespace metrics_adapter::server
