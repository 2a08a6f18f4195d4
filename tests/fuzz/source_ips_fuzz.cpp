// The audit log's sourceIPs from X-Forwarded-For, X-Real-Ip and the connection (any client can
// send the headers): every address listed is written canonically (reading it again gives the
// same text, and inet_pton reads it), and no more are listed than the headers can hold.
#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "audit/source_ips.h"
#include "fuzz_check.h"

namespace {

// The part of `text` before the first NUL byte, and what follows it.
std::string_view takePart(std::string_view& text) {
  const auto nul = text.find('\0');
  const std::string_view part = text.substr(0, nul);
  text = nul == std::string_view::npos ? std::string_view() : text.substr(nul + 1);
  return part;
}

bool readsAsAddress(const std::string& text) {
  std::array<unsigned char, 16> bytes{};
  return inet_pton(AF_INET, text.c_str(), bytes.data()) == 1 ||
         inet_pton(AF_INET6, text.c_str(), bytes.data()) == 1;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using metrics_adapter::fuzz::check;
  namespace audit = metrics_adapter::audit;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string_view forwarded_for = takePart(input);
  const std::string_view real_ip = takePart(input);
  const std::string_view remote = takePart(input);
  std::vector<std::string> ips;
  audit::sourceIps(forwarded_for, real_ip, remote, ips);
  const auto entries =
      static_cast<std::size_t>(std::count(forwarded_for.begin(), forwarded_for.end(), ',') + 1);
  check(ips.size() <= entries + 2, "at most the chain, the real IP and the connection");
  for (const std::string& ip : ips) {
    std::string again;
    check(audit::appendCanonicalIp(ip, again) && again == ip, "listed addresses are canonical", ip);
    check(readsAsAddress(ip), "inet_pton reads every listed address", ip);
  }
  std::string canonical;
  if (audit::appendCanonicalIp(real_ip, canonical)) {
    check(std::find(ips.begin(), ips.end(), canonical) != ips.end(), "a valid X-Real-Ip is listed",
          real_ip);
  }
  return 0;
}
