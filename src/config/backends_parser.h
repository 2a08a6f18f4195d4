#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "config/yaml_reader.h"
#include "metrics_adapter/config/config.h"

namespace metrics_adapter::config {

// The `backends` mapping: name -> url, verb, headers, TLS and credential files, timeout,
// optional. Checks what needs no file system: names, URL form, verb, header names and values,
// durations, fields that go in pairs. Throws ConfigError naming backend and field.
std::vector<Backend> parseBackends(const YamlReader& reader, const YAML::Node& node,
                                   const std::string& path);

// Every `backend:` of a rule names kDefaultBackend or an entry of config.backends; else
// ConfigError naming the rule's field.
void checkBackendReferences(const AdapterConfig& config);

}  // namespace metrics_adapter::config
