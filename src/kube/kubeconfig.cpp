#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "metrics_adapter/kube/kube_client.h"
#include "metrics_adapter/net/base64.h"

namespace metrics_adapter::kube {
namespace {

namespace fs = std::filesystem;

constexpr std::uintmax_t kMaxKubeconfigBytes = 16u << 20;
constexpr const char* kUseSupportedAuth = "; use a token or client certificate";

// Reads one kubeconfig the way client-go does for the fields the adapter supports; every error
// names the file, and the cluster, context or user it concerns.
class KubeconfigReader {
 public:
  explicit KubeconfigReader(std::string path)
      : path_(std::move(path)), dir_(fs::path(path_).parent_path()) {}

  KubeClientOptions read() const {
    const YAML::Node root = load();
    if (!root.IsMap()) fail("not a kubeconfig (expected a mapping at the top)");
    const std::string context_name = text(root, "current-context", "");
    if (context_name.empty()) fail("current-context is not set");
    const YAML::Node context = entry(root, "context", context_name, "the current-context");

    const std::string context_where = "context \"" + context_name + "\": ";
    const std::string cluster_name = text(context, "cluster", context_where);
    if (cluster_name.empty()) fail(context_where + "cluster is not set");
    KubeClientOptions options;
    readCluster(entry(root, "cluster", cluster_name, "context \"" + context_name + "\""),
                "cluster \"" + cluster_name + "\": ", options);
    const std::string user_name = text(context, "user", context_where);
    if (!user_name.empty()) {
      readUser(entry(root, "user", user_name, "context \"" + context_name + "\""),
               "user \"" + user_name + "\": ", options);
    }
    options.source = path_;
    return options;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("kubeconfig " + path_ + ": " + what);
  }

  YAML::Node load() const {
    std::error_code error;
    const std::uintmax_t size = fs::file_size(path_, error);
    if (error) fail("cannot read it: " + error.message());
    if (size > kMaxKubeconfigBytes)
      fail("larger than " + std::to_string(kMaxKubeconfigBytes) + " bytes");
    std::ifstream in(path_, std::ios::binary);
    const std::string content((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    if (!in && !in.eof()) fail("cannot read it");
    try {
      return YAML::Load(content);
    } catch (const YAML::Exception& e) {
      fail(std::string("invalid YAML: ") + e.what());
    }
  }

  // The body (`kind` field) of the entry called `name` in the list `kind`s (clusters, ...).
  YAML::Node entry(const YAML::Node& root, const std::string& kind, const std::string& name,
                   const std::string& referrer) const {
    const YAML::Node list = root[kind + "s"];
    if (list && !list.IsNull() && !list.IsSequence()) fail(kind + "s must be a list");
    for (const YAML::Node& item : list) {
      if (!item.IsMap() || text(item, "name", kind + "s: ") != name) continue;
      const YAML::Node body = item[kind];
      // NOLINTNEXTLINE(performance-inefficient-string-concatenation): once, on an error path
      if (!body.IsMap()) fail(kind + " \"" + name + "\": no " + kind + " mapping");
      return body;
    }
    fail(kind + " \"" + name + "\" (named by " + referrer + ") is not defined under " + kind + "s");
  }

  void readCluster(const YAML::Node& cluster, const std::string& where,
                   KubeClientOptions& options) const {
    options.server = text(cluster, "server", where);
    if (options.server.empty()) fail(where + "server is not set");
    options.ca_file = file(cluster, "certificate-authority", where);
    options.ca_data = data(cluster, "certificate-authority-data", where);
    exclusive(options.ca_file, options.ca_data, "certificate-authority", where);
    options.insecure_skip_tls_verify = flag(cluster, "insecure-skip-tls-verify", where);
  }

  void readUser(const YAML::Node& user, const std::string& where,
                KubeClientOptions& options) const {
    const struct {
      const char* key;
      const char* what;
    } unsupported[] = {
        {"exec", "exec credential plugins are"}, {"auth-provider", "auth-provider plugins are"},
        {"as", "impersonation (as) is"},         {"as-groups", "impersonation (as-groups) is"},
        {"as-uid", "impersonation (as-uid) is"},
    };
    for (const auto& [key, what] : unsupported) {
      const YAML::Node node = user[key];
      if (node && !node.IsNull()) fail(where + what + " not supported" + kUseSupportedAuth);
    }
    options.client_cert_file = file(user, "client-certificate", where);
    options.client_cert_data = data(user, "client-certificate-data", where);
    exclusive(options.client_cert_file, options.client_cert_data, "client-certificate", where);
    options.client_key_file = file(user, "client-key", where);
    options.client_key_data = data(user, "client-key-data", where);
    exclusive(options.client_key_file, options.client_key_data, "client-key", where);
    options.token = text(user, "token", where);
    options.username = text(user, "username", where);
    options.password = text(user, "password", where);
    options.token_file = file(user, "tokenFile", where);
  }

  std::string text(const YAML::Node& map, const std::string& key, const std::string& where) const {
    const YAML::Node node = map[key];
    if (!node || node.IsNull()) return "";
    if (!node.IsScalar()) fail(where + key + " must be a string");
    return node.Scalar();
  }

  // A file field: relative paths are relative to the kubeconfig's directory.
  std::string file(const YAML::Node& map, const std::string& key, const std::string& where) const {
    std::string value = text(map, key, where);
    if (value.empty() || fs::path(value).is_absolute()) return value;
    return (dir_ / value).string();
  }

  // A *-data field: base64 of the PEM text.
  std::string data(const YAML::Node& map, const std::string& key, const std::string& where) const {
    std::string encoded = text(map, key, where);
    encoded.erase(std::remove_if(encoded.begin(), encoded.end(),
                                 [](unsigned char c) { return std::isspace(c) != 0; }),
                  encoded.end());
    if (encoded.empty()) return "";
    try {
      return net::decodeBase64(encoded);
    } catch (const std::invalid_argument&) {
      fail(where + key + " is not valid base64");
    }
  }

  bool flag(const YAML::Node& map, const std::string& key, const std::string& where) const {
    const YAML::Node node = map[key];
    if (!node || node.IsNull()) return false;
    try {
      return node.as<bool>();
    } catch (const YAML::Exception&) {
      fail(where + key + " must be true or false");
    }
  }

  void exclusive(const std::string& file, const std::string& data, const std::string& key,
                 const std::string& where) const {
    if (!file.empty() && !data.empty()) {
      fail(where + key + " and " + key + "-data are both set; use one");
    }
  }

  std::string path_;
  fs::path dir_;
};

}  // namespace

KubeClientOptions loadKubeconfig(const std::string& path) { return KubeconfigReader(path).read(); }

}  // namespace metrics_adapter::kube
