#include "audit/source_ips.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "metrics_adapter/text/ascii.h"

namespace metrics_adapter::audit {
namespace {

using Address = std::array<std::uint8_t, 16>;  // IPv4 as ::ffff:a.b.c.d, as Go keeps it

// Go 1.16's parseIPv4, which ParseIPSloppy keeps: four decimal octets, any leading zeros.
std::optional<Address> parseIpv4(std::string_view text) {
  Address address{};
  address[10] = 0xff;
  address[11] = 0xff;
  for (std::size_t octet = 0; octet < 4; ++octet) {
    if (octet > 0) {
      if (text.empty() || text.front() != '.') return std::nullopt;
      text.remove_prefix(1);
    }
    std::size_t digits = 0;
    unsigned value = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
      value = value * 10 + static_cast<unsigned>(text[digits] - '0');
      if (value > 0xff) return std::nullopt;
      ++digits;
    }
    if (digits == 0) return std::nullopt;
    address[12 + octet] = static_cast<std::uint8_t>(value);
    text.remove_prefix(digits);
  }
  if (!text.empty()) return std::nullopt;
  return address;
}

std::optional<Address> parseIpv6(std::string_view text) {
  std::array<char, INET6_ADDRSTRLEN + 1> terminated{};  // inet_pton wants a C string
  if (text.size() >= terminated.size()) return std::nullopt;
  std::copy(text.begin(), text.end(), terminated.begin());
  Address address{};
  if (inet_pton(AF_INET6, terminated.data(), address.data()) != 1) return std::nullopt;
  return address;
}

// Go's ParseIP: the first '.' or ':' decides which form is read.
std::optional<Address> parseIp(std::string_view text) {
  const auto separator = text.find_first_of(".:");
  if (separator == std::string_view::npos) return std::nullopt;
  return text[separator] == '.' ? parseIpv4(text) : parseIpv6(text);
}

void appendDecimal(std::string& out, unsigned value) {
  if (value >= 100) out += static_cast<char>('0' + value / 100);
  if (value >= 10) out += static_cast<char>('0' + value / 10 % 10);
  out += static_cast<char>('0' + value % 10);
}

void appendHex(std::string& out, unsigned value) {
  static constexpr char kHex[] = "0123456789abcdef";
  bool started = false;
  for (int shift = 12; shift >= 0; shift -= 4) {
    const unsigned digit = (value >> shift) & 0xF;
    if (digit != 0 || started || shift == 0) {
      out += kHex[digit];
      started = true;
    }
  }
}

// Go's IP.String(): IPv4 (and IPv4-mapped IPv6) dotted; IPv6 with the first longest run of
// two or more zero groups written "::" (RFC 5952).
void appendAddress(const Address& address, std::string& out) {
  const bool mapped = std::all_of(address.begin(), address.begin() + 10,
                                  [](std::uint8_t byte) { return byte == 0; }) &&
                      address[10] == 0xff && address[11] == 0xff;
  if (mapped) {
    for (std::size_t i = 12; i < 16; ++i) {
      if (i > 12) out += '.';
      appendDecimal(out, address[i]);
    }
    return;
  }
  std::array<unsigned, 8> groups{};
  for (std::size_t i = 0; i < 8; ++i)
    groups[i] = (static_cast<unsigned>(address[2 * i]) << 8U) | address[2 * i + 1];
  std::size_t run_start = 8;
  std::size_t run_length = 0;
  for (std::size_t i = 0; i < 8;) {
    std::size_t end = i;
    while (end < 8 && groups[end] == 0) ++end;
    if (end - i > run_length) {
      run_start = i;
      run_length = end - i;
    }
    i = end == i ? i + 1 : end;
  }
  if (run_length < 2) run_start = 8;
  for (std::size_t i = 0; i < 8; ++i) {
    if (i == run_start) {
      out += "::";
      i += run_length - 1;
      continue;
    }
    if (i > 0 && i != run_start + run_length) out += ':';
    appendHex(out, groups[i]);
  }
}

// Appends `text` as a new entry of `out` when it is an address.
bool appendEntry(std::string_view text, std::vector<std::string>& out) {
  std::string entry;
  if (!appendCanonicalIp(text, entry)) return false;
  out.push_back(std::move(entry));
  return true;
}

}  // namespace

bool appendCanonicalIp(std::string_view text, std::string& out) {
  const std::optional<Address> address = parseIp(text);
  if (!address) return false;
  appendAddress(*address, out);
  return true;
}

std::string_view sourceIp(std::string_view remote) {
  if (remote.empty() || remote == "unknown") return "";
  if (remote.front() == '[') {
    const auto close = remote.find(']');
    return remote.substr(1, close == std::string_view::npos ? close : close - 1);
  }
  const auto colon = remote.find(':');
  if (colon != std::string_view::npos && remote.find(':', colon + 1) == std::string_view::npos) {
    return remote.substr(0, colon);
  }
  return remote;
}

void sourceIps(std::string_view forwarded_for, std::string_view real_ip, std::string_view remote,
               std::vector<std::string>& out) {
  out.clear();
  while (!forwarded_for.empty()) {
    const auto comma = forwarded_for.find(',');
    appendEntry(text::trimAsciiSpace(forwarded_for.substr(0, comma)), out);
    if (comma == std::string_view::npos) break;
    forwarded_for.remove_prefix(comma + 1);
  }
  const std::size_t chain = out.size();
  if (appendEntry(real_ip, out) &&
      std::find(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(chain), out.back()) !=
          out.begin() + static_cast<std::ptrdiff_t>(chain)) {
    out.pop_back();
  }
  if (appendEntry(sourceIp(remote), out) && out.size() >= 2 && out.back() == out[out.size() - 2]) {
    out.pop_back();
  }
}

}  // namespace metrics_adapter::audit
