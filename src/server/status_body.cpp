#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "metrics_adapter/server/status.h"

namespace metrics_adapter::server {
namespace {

// Appends "key":value to a JSON object being written; `out` ends with its '{' or a member.
void appendMember(std::string& out, std::string_view key, std::string_view value) {
  if (out.back() != '{') out += ',';
  appendJsonQuoted(out, key);
  out += ':';
  appendJsonQuoted(out, value);
}

}  // namespace

std::string statusJson(int code, std::string_view reason, std::string_view message,
                       const std::optional<StatusDetails>& details) {
  std::string out =
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)";
  appendJsonQuoted(out, message);
  out += R"(,"reason":)";
  appendJsonQuoted(out, reason);
  if (details) {
    out += R"(,"details":{)";
    if (details->name) appendMember(out, "name", *details->name);
    if (details->group) appendMember(out, "group", *details->group);
    if (details->kind) appendMember(out, "kind", *details->kind);
    if (!details->causes.empty()) {
      if (out.back() != '{') out += ',';
      out += R"("causes":[)";
      for (std::size_t i = 0; i < details->causes.size(); ++i) {
        if (i > 0) out += ',';
        out += '{';
        appendMember(out, "message", details->causes[i].message);
        out += '}';
      }
      out += ']';
    }
    out += '}';
  }
  out += R"(,"code":)";
  out += std::to_string(code);
  out += '}';
  return out;
}

}  // namespace metrics_adapter::server
