#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "auth/x509_verifier.h"
#include "metrics_adapter/auth/authenticator.h"

namespace metrics_adapter::auth {
namespace {

using Json = nlohmann::json;

std::invalid_argument badKey(const std::string& key, const std::string& why) {
  return std::invalid_argument("extension-apiserver-authentication data." + key + ": " + why);
}

// The string value of data[key], or nullptr when the key is absent.
const std::string* stringValue(const Json& data, const std::string& key) {
  const auto found = data.find(key);
  if (found == data.end() || found->is_null()) return nullptr;
  if (!found->is_string()) throw badKey(key, "not a string");
  return found->get_ptr<const std::string*>();
}

void readBundle(const Json& data, const std::string& key, std::string& into) {
  const std::string* value = stringValue(data, key);
  if (value == nullptr) return;
  try {
    parseCertificateBundle(*value);
  } catch (const std::exception& e) {
    throw badKey(key, e.what());
  }
  into = *value;
}

// A JSON array of strings written inside a string, as kube-apiserver stores the lists.
void readList(const Json& data, const std::string& key, std::vector<std::string>& into) {
  const std::string* value = stringValue(data, key);
  if (value == nullptr) return;
  if (value->empty()) {
    into.clear();
    return;
  }
  const Json list = Json::parse(*value, nullptr, /*allow_exceptions=*/false);
  if (list.is_discarded()) throw badKey(key, "not a JSON array of strings");
  if (list.is_null()) {  // Go unmarshals "null" into an empty list
    into.clear();
    return;
  }
  if (!list.is_array()) throw badKey(key, "not a JSON array of strings");
  std::vector<std::string> items;
  for (const Json& item : list) {
    if (!item.is_string()) throw badKey(key, "not a JSON array of strings");
    items.push_back(item.get<std::string>());
  }
  into = std::move(items);
}

}  // namespace

AuthenticationConfig parseAuthenticationConfigMap(const Json& configmap) {
  if (!configmap.is_object()) {
    throw std::invalid_argument("extension-apiserver-authentication: not a JSON object");
  }
  AuthenticationConfig config;
  const auto data = configmap.find("data");
  if (data == configmap.end() || data->is_null()) return config;
  if (!data->is_object()) {
    throw std::invalid_argument("extension-apiserver-authentication data: not an object");
  }
  readBundle(*data, "client-ca-file", config.client_ca_pem);
  readBundle(*data, "requestheader-client-ca-file", config.requestheader_ca_pem);
  readList(*data, "requestheader-allowed-names", config.allowed_names);
  readList(*data, "requestheader-username-headers", config.username_headers);
  readList(*data, "requestheader-uid-headers", config.uid_headers);
  readList(*data, "requestheader-group-headers", config.group_headers);
  readList(*data, "requestheader-extra-headers-prefix", config.extra_header_prefixes);
  return config;
}

}  // namespace metrics_adapter::auth
