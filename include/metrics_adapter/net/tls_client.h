#pragma once

#include <string>

namespace metrics_adapter::net {

// One PEM input, given as a file (read again for every new connection, so renewed files apply)
// or as the PEM text itself. The file wins when both are set.
struct PemInput {
  std::string file;
  std::string data;
  std::string name;  // how errors name the input: a flag or a configuration field

  bool empty() const { return file.empty() && data.empty(); }
};

// What a TLS client trusts and presents.
struct TlsClientSettings {
  PemInput ca;           // certificates trusted for the server, besides or instead of the roots
  PemInput client_cert;  // certificate chain presented to the server
  PemInput client_key;   // its private key
  // false: the system's roots plus `ca`. true: only `ca` when it is set (client-go's rule for
  // the Kubernetes API); the system's roots when it is not.
  bool ca_replaces_system_roots = false;
};

// Loads every configured input once so that mistakes surface at startup. Throws
// std::invalid_argument naming the input that is missing or unusable, or both client inputs when
// only one of them is set.
void validateTlsSettings(const TlsClientSettings& settings);

}  // namespace metrics_adapter::net
