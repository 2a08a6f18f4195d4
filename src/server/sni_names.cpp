#include "server/sni_names.h"

#include <arpa/inet.h>
#include <openssl/asn1.h>
#include <openssl/crypto.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <memory>

#include "metrics_adapter/text/ascii.h"

namespace metrics_adapter::server {
namespace {

constexpr std::size_t kMaxDnsSubdomainLength = 253;

bool isDnsLabelCharacter(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// Kubernetes' IsDNS1123Subdomain: dot-separated labels of a-z, 0-9 and inner '-'.
bool isDnsSubdomain(std::string_view name) {
  if (name.empty() || name.size() > kMaxDnsSubdomainLength) return false;
  std::size_t label_start = 0;
  for (std::size_t i = 0; i <= name.size(); ++i) {
    if (i < name.size() && name[i] != '.') {
      if (!isDnsLabelCharacter(name[i]) && name[i] != '-') return false;
      continue;
    }
    if (i == label_start) return false;  // empty label
    if (!isDnsLabelCharacter(name[label_start]) || !isDnsLabelCharacter(name[i - 1])) return false;
    label_start = i + 1;
  }
  return true;
}

std::string asn1Text(const ASN1_STRING* value) {
  unsigned char* utf8 = nullptr;
  const int length = ASN1_STRING_to_UTF8(&utf8, value);
  if (length < 0) return {};
  std::string text(reinterpret_cast<const char*>(utf8), static_cast<std::size_t>(length));
  OPENSSL_free(utf8);
  return text;
}

// The last CN of the subject, as Go's x509 reads Subject.CommonName.
std::string commonName(X509* certificate) {
  const X509_NAME* subject = X509_get_subject_name(certificate);
  int last = -1;
  for (int i = -1; (i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) >= 0;) last = i;
  if (last < 0) return {};
  return asn1Text(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, last)));
}

struct GeneralNamesDeleter {
  void operator()(GENERAL_NAMES* names) const { GENERAL_NAMES_free(names); }
};

}  // namespace

std::vector<std::string> certificateNames(X509* certificate) {
  std::vector<std::string> names;
  const std::string cn = text::lowerAscii(commonName(certificate));
  const std::string_view cn_domain =
      std::string_view(cn).starts_with("*.") ? std::string_view(cn).substr(2) : cn;
  if (!canonicalIpAddress(cn) && (cn == "*" || isDnsSubdomain(cn_domain))) names.push_back(cn);
  std::unique_ptr<GENERAL_NAMES, GeneralNamesDeleter> sans(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr)));
  const int count = sans ? sk_GENERAL_NAME_num(sans.get()) : 0;
  for (int i = 0; i < count; ++i) {
    const GENERAL_NAME* san = sk_GENERAL_NAME_value(sans.get(), i);
    if (san->type == GEN_DNS) names.push_back(text::lowerAscii(asn1Text(san->d.dNSName)));
  }
  return names;
}

std::optional<std::string> canonicalIpAddress(std::string_view text) {
  const std::string input(text);
  unsigned char bytes[16];
  char buffer[INET6_ADDRSTRLEN];
  if (inet_pton(AF_INET, input.c_str(), bytes) == 1) {
    return std::string(inet_ntop(AF_INET, bytes, buffer, sizeof buffer));
  }
  if (inet_pton(AF_INET6, input.c_str(), bytes) != 1) return std::nullopt;
  constexpr unsigned char kV4MappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::equal(kV4MappedPrefix, kV4MappedPrefix + 12, bytes)) {
    return std::string(inet_ntop(AF_INET, bytes + 12, buffer, sizeof buffer));
  }
  return std::string(inet_ntop(AF_INET6, bytes, buffer, sizeof buffer));
}

SniNameTable::SniNameTable(const std::vector<SniNames>& certificates) {
  const auto key = [](const std::string& name) {
    return canonicalIpAddress(name).value_or(text::lowerAscii(name));
  };
  // Patterns first, so that a pattern beats any extracted name; try_emplace keeps the first
  // certificate that claims a name.
  for (std::size_t i = 0; i < certificates.size(); ++i) {
    for (const std::string& pattern : certificates[i].patterns)
      by_name_.try_emplace(key(pattern), i);
  }
  for (std::size_t i = 0; i < certificates.size(); ++i) {
    if (!certificates[i].patterns.empty()) continue;
    for (const std::string& name : certificates[i].extracted) by_name_.try_emplace(key(name), i);
  }
}

std::optional<std::size_t> SniNameTable::find(const std::string& key) const {
  const auto found = by_name_.find(key);
  if (found == by_name_.end()) return std::nullopt;
  return found->second;
}

std::optional<std::size_t> SniNameTable::forServerName(std::string_view server_name) const {
  if (server_name.empty()) return std::nullopt;
  const std::string name = text::lowerAscii(server_name);
  if (auto exact = find(name)) return exact;
  const std::size_t dot = name.find('.');
  return find("*" + (dot == std::string::npos ? std::string() : name.substr(dot)));
}

std::optional<std::size_t> SniNameTable::forLocalAddress(std::string_view address) const {
  const std::optional<std::string> ip = canonicalIpAddress(address);
  return ip ? find(*ip) : std::nullopt;
}

}  // namespace metrics_adapter::server
