#include "config/backends_parser.h"

#include <re2/re2.h>

#include <optional>
#include <set>

#include "config/value_checks.h"

namespace metrics_adapter::config {
namespace {

// Names appear in self-metric labels, logs and Status messages: keep them short and plain.
std::optional<std::string> backendNameProblem(const std::string& name) {
  static const RE2 kName("[a-zA-Z0-9]([a-zA-Z0-9_.-]{0,62})");
  if (RE2::FullMatch(name, kName)) return std::nullopt;
  return "\"" + name +
         "\" is not a backend name (letters, digits, '_', '.', '-'; at most 63; starting with a "
         "letter or digit)";
}

// An absolute http(s) URL with a host; the client checks the rest when it is built.
std::optional<std::string> urlProblem(const std::string& url) {
  static const RE2 kUrl("(?i)https?://[^/?#@\\s]+([/?#]\\S*)?");
  if (url.empty()) return "required";
  if (RE2::FullMatch(url, kUrl)) return std::nullopt;
  return "\"" + url + "\" is not an absolute http:// or https:// URL with a host";
}

// An HTTP header name is a token (RFC 9110 tchar).
bool isHeaderName(const std::string& name) {
  static const RE2 kToken("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
  return RE2::FullMatch(name, kToken);
}

bool isHeaderValue(const std::string& value) {
  return value.find_first_of("\r\n") == std::string::npos && value.find('\0') == std::string::npos;
}

class BackendParser {
 public:
  explicit BackendParser(const YamlReader& reader) : reader_(reader) {}

  Backend parse(const std::string& name, const YAML::Node& node, const std::string& path) {
    Backend backend;
    backend.name = name;
    for (const auto& [key, value] :
         reader_.mapEntries(node, path,
                            {"url", "verb", "headers", "caFile", "clientCertFile", "clientKeyFile",
                             "tokenFile", "basicAuth", "timeout", "optional"})) {
      const std::string field = childPath(path, key);
      if (key == "url") {
        backend.url = reader_.scalar(value, field);
      } else if (key == "verb") {
        backend.verb = reader_.scalar(value, field);
        if (backend.verb != "GET" && backend.verb != "POST") {
          reader_.fail(value, field, "must be GET or POST, not \"" + backend.verb + "\"");
        }
      } else if (key == "headers") {
        backend.headers = headers(value, field);
      } else if (key == "caFile") {
        backend.ca_file = pathValue(value, field);
      } else if (key == "clientCertFile") {
        backend.client_cert_file = pathValue(value, field);
      } else if (key == "clientKeyFile") {
        backend.client_key_file = pathValue(value, field);
      } else if (key == "tokenFile") {
        backend.token_file = pathValue(value, field);
      } else if (key == "basicAuth") {
        basicAuth(value, field, backend);
      } else if (key == "timeout") {
        std::string problem;
        backend.timeout = parseDuration(reader_.scalar(value, field), &problem);
        if (!backend.timeout) reader_.fail(value, field, problem);
        if (backend.timeout->count() <= 0) reader_.fail(value, field, "must be longer than 0s");
      } else {
        backend.optional = reader_.boolean(value, field);
      }
    }
    if (auto problem = urlProblem(backend.url)) {
      reader_.fail(node, childPath(path, "url"), *problem);
    }
    if (backend.client_cert_file.empty() != backend.client_key_file.empty()) {
      reader_.fail(
          node,
          childPath(path, backend.client_cert_file.empty() ? "clientCertFile" : "clientKeyFile"),
          "required with " +
              std::string(backend.client_cert_file.empty() ? "clientKeyFile" : "clientCertFile"));
    }
    if (!backend.token_file.empty() && !backend.basic_auth_username.empty()) {
      reader_.fail(node, childPath(path, "basicAuth"),
                   "cannot be used with tokenFile: a request carries one Authorization header");
    }
    return backend;
  }

 private:
  std::string pathValue(const YAML::Node& node, const std::string& path) {
    std::string value = reader_.scalar(node, path);
    if (value.empty()) reader_.fail(node, path, "must name a file");
    return value;
  }

  // name: value, or name: [value, value] for a name sent on several lines.
  std::vector<std::pair<std::string, std::string>> headers(const YAML::Node& node,
                                                           const std::string& path) {
    std::vector<std::pair<std::string, std::string>> result;
    for (const auto& [name, value] : reader_.mapEntries(node, path, {})) {
      const std::string field = childPath(path, name);
      if (!isHeaderName(name)) {
        reader_.fail(value, field, "\"" + name + "\" is not an HTTP header name");
      }
      std::vector<std::pair<std::string, YAML::Node>> items;
      if (value.IsSequence()) {
        const std::vector<YAML::Node> list = reader_.listItems(value, field);
        for (std::size_t i = 0; i < list.size(); ++i)
          items.emplace_back(indexPath(field, i), list[i]);
      } else {
        items.emplace_back(field, value);
      }
      for (const auto& [item_path, item] : items) {
        std::string text = reader_.scalar(item, item_path);
        if (!isHeaderValue(text)) {
          reader_.fail(item, item_path, "a header value cannot hold a line break or NUL");
        }
        result.emplace_back(name, std::move(text));
      }
    }
    return result;
  }

  void basicAuth(const YAML::Node& node, const std::string& path, Backend& backend) {
    for (const auto& [key, value] : reader_.mapEntries(node, path, {"username", "passwordFile"})) {
      const std::string field = childPath(path, key);
      if (key == "username") {
        backend.basic_auth_username = reader_.scalar(value, field);
      } else {
        backend.basic_auth_password_file = pathValue(value, field);
      }
    }
    if (backend.basic_auth_username.empty()) {
      reader_.fail(node, childPath(path, "username"), "required");
    }
    if (backend.basic_auth_username.find(':') != std::string::npos) {
      reader_.fail(node, childPath(path, "username"),
                   "cannot contain ':' (it separates user and password in basic auth)");
    }
    if (backend.basic_auth_password_file.empty()) {
      reader_.fail(node, childPath(path, "passwordFile"), "required");
    }
  }

  const YamlReader& reader_;
};

}  // namespace

std::vector<Backend> parseBackends(const YamlReader& reader, const YAML::Node& node,
                                   const std::string& path) {
  std::vector<Backend> backends;
  BackendParser parser(reader);
  for (const auto& [name, value] : reader.mapEntries(node, path, {})) {
    const std::string field = childPath(path, name);
    if (auto problem = backendNameProblem(name)) reader.fail(value, field, *problem);
    backends.push_back(parser.parse(name, value, field));
  }
  return backends;
}

void checkBackendReferences(const AdapterConfig& config) {
  std::set<std::string, std::less<>> known{std::string(kDefaultBackend)};
  for (const Backend& backend : config.backends) known.insert(backend.name);
  auto check = [&](const std::string& backend, const std::string& rule_path) {
    if (known.count(backend)) return;
    std::string names;
    for (const std::string& name : known) names += (names.empty() ? "" : ", ") + name;
    throw ConfigError(
        formatConfigError(config, rule_path + ".backend",
                          "unknown backend \"" + backend + "\" (backends: " + names + ")"));
  };
  for (std::size_t i = 0; i < config.rules.size(); ++i) {
    check(config.rules[i].backend, indexPath("rules", i));
  }
  for (std::size_t i = 0; i < config.external_rules.size(); ++i) {
    check(config.external_rules[i].backend, indexPath("externalRules", i));
  }
  if (config.resource_rules) check(config.resource_rules->backend, "resourceRules");
  for (std::size_t i = 0; i < config.forecast_rules.size(); ++i) {
    check(config.forecast_rules[i].backend, indexPath("forecastRules", i));
  }
}

}  // namespace metrics_adapter::config
