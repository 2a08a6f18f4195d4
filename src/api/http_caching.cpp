#include "api/http_caching.h"

#include <openssl/evp.h>

#include <array>
#include <chrono>
#include <ctime>
#include <stdexcept>

namespace metrics_adapter::api {

std::string contentHash(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &size, EVP_sha512(), nullptr) != 1) {
    throw std::runtime_error("SHA-512 failed");
  }
  constexpr std::string_view kHex = "0123456789ABCDEF";
  std::string hex;
  hex.reserve(std::size_t{2} * size);
  for (unsigned int i = 0; i < size; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

std::string quotedEtag(std::string_view hash) {
  std::string quoted;
  quoted.reserve(hash.size() + 2);
  quoted += '"';
  quoted += hash;
  quoted += '"';
  return quoted;
}

bool ifNoneMatch(std::string_view header, std::string_view etag) {
  auto trim = [](std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
  };
  std::size_t begin = 0;
  while (begin <= header.size()) {
    std::size_t end = header.find(',', begin);
    if (end == std::string_view::npos) end = header.size();
    std::string_view tag = trim(header.substr(begin, end - begin));
    if (tag == "*") return true;
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (!tag.empty() && tag == etag) return true;
    begin = end + 1;
  }
  return false;
}

std::string httpDateInDays(int days) {
  const auto when = std::chrono::system_clock::now() + std::chrono::hours(24) * days;
  const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  std::array<char, 40> text{};
  const std::size_t size =
      std::strftime(text.data(), text.size(), "%a, %d %b %Y %H:%M:%S GMT", &utc);
  return {text.data(), size};
}

}  // namespace metrics_adapter::api
