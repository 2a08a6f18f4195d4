#include "audit/event.h"

#include <array>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "metrics_adapter/server/status.h"
#include "metrics_adapter/text/utf8.h"

namespace metrics_adapter::audit {
namespace {

using server::appendJsonQuoted;

void appendMember(std::string& out, std::string_view name, std::string_view value) {
  out += ",\"";
  out += name;
  out += "\":";
  appendJsonQuoted(out, value);
}

void appendOptionalMember(std::string& out, std::string_view name, std::string_view value) {
  if (!value.empty()) appendMember(out, name, value);
}

void appendStringArray(std::string& out, std::span<const std::string> values) {
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    appendJsonQuoted(out, values[i]);
  }
  out += ']';
}

// `"key":"string"` from a parsed Status body, when it holds a string there.
void appendStatusField(std::string& out, const nlohmann::json& status, const char* key) {
  if (!status.is_object()) return;
  const auto it = status.find(key);
  if (it != status.end() && it->is_string()) {
    appendOptionalMember(out, key, it->get_ref<const std::string&>());
  }
}

void appendResponseStatus(std::string& out, const Event& event) {
  out += R"(,"responseStatus":{"metadata":{})";
  if (!event.failed_authentication.empty()) {
    appendMember(out, "message", event.failed_authentication);
  } else if (event.code >= 300 && !event.body.empty()) {
    const nlohmann::json status = nlohmann::json::parse(event.body, nullptr, false);
    appendStatusField(out, status, "status");
    appendStatusField(out, status, "message");
    appendStatusField(out, status, "reason");
  }
  out += ",\"code\":";
  out += std::to_string(event.code);
  out += '}';
}

void appendResponseObject(std::string& out, const Event& event) {
  const std::string_view body = event.body;
  if (body.find_first_of("\r\n") == std::string_view::npos && nlohmann::json::accept(body)) {
    out += ",\"responseObject\":";
    out += body;  // valid compact JSON: written as it came, without a parse
    return;
  }
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_discarded()) return;
  out += ",\"responseObject\":";
  out += parsed.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Go's %q for the legacy format: quotes, backslash escapes, \xNN for bytes it cannot show.
void appendGoQuoted(std::string& out, std::string_view text) {
  const bool utf8 = text::isValidUtf8(text);
  out += '"';
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    if (byte < 0x20 || byte == 0x7f || (byte >= 0x80 && !utf8)) {
      std::array<char, 5> hex{};
      std::snprintf(hex.data(), hex.size(), "\\x%02x", byte);
      out += hex.data();
    } else {
      out += c;
    }
  }
  out += '"';
}

// Go's time.RFC3339Nano: the fraction without trailing zeros.
std::string nanoTime(std::chrono::system_clock::time_point time) {
  std::string text = microTime(time);  // ...05.123400Z
  text.pop_back();
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text + "Z";
}

}  // namespace

RequestAttributes attributesOf(const server::Exchange& exchange, const ParsedRequest& request) {
  RequestAttributes attributes;
  attributes.user = exchange.notes->user;
  attributes.groups = &exchange.notes->groups;
  if (request.info == nullptr) {
    attributes.verb = request.verb;
    attributes.path = request.path;
    return attributes;
  }
  const server::RequestInfo& info = *request.info;
  attributes.verb = info.verb;
  attributes.resource_request = info.resource_request;
  attributes.api_group = info.api_group;
  attributes.namespace_name = info.namespace_name;
  attributes.resource = info.resource;
  attributes.subresource = info.subresource;
  attributes.name = info.name;
  attributes.path = info.path;
  return attributes;
}

Event makeEvent(const server::Exchange& exchange, const ParsedRequest& request, Level level,
                Stage stage, std::chrono::system_clock::time_point now,
                const RequestOrigin& origin) {
  const server::ResponseNotes& notes = *exchange.notes;
  Event event;
  event.level = level;
  event.stage = stage;
  event.audit_id = origin.audit_id;
  event.request_uri = exchange.target;
  event.verb = request.info != nullptr ? request.info->verb : request.verb;
  event.user = notes.user;
  event.uid = notes.uid;
  event.groups = notes.groups;
  if (!notes.extra.empty()) event.extra = &notes.extra;
  event.source_ips = origin.source_ips;
  event.user_agent = exchange.user_agent;
  if (request.info != nullptr && request.info->resource_request) {
    const server::RequestInfo& info = *request.info;
    event.has_object_ref = true;
    event.resource = info.resource;
    event.namespace_name = info.namespace_name;
    event.name = info.name;
    event.api_group = info.api_group;
    event.api_version = info.api_version;
    event.subresource = info.subresource;
  }
  event.received = now - exchange.latency;
  event.decision = notes.decision;
  event.decision_reason = notes.decision_reason;
  event.failed_authentication = notes.failed_authentication;
  if (stage == Stage::kRequestReceived) {
    event.stage_time = event.received;
    return event;
  }
  event.stage_time = now;
  event.code = exchange.code;
  event.response_object = level == Level::kRequestResponse && event.has_object_ref;
  if (exchange.code >= 300 || event.response_object) event.body = exchange.response_body;
  return event;
}

std::string microTime(std::chrono::system_clock::time_point time) {
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(time.time_since_epoch()).count();
  auto seconds = static_cast<time_t>(micros / 1000000);
  long long fraction = micros % 1000000;
  if (fraction < 0) {
    fraction += 1000000;
    --seconds;
  }
  tm utc{};
  gmtime_r(&seconds, &utc);
  // Written digit by digit: two of these per event, and snprintf was the batch writer's
  // largest cost after the JSON itself.
  std::string text = "0000-00-00T00:00:00.000000Z";
  const auto put = [&text](std::size_t end, long long value, int digits) {
    for (int i = 0; i < digits; ++i, value /= 10) {
      text[end - static_cast<std::size_t>(i)] = static_cast<char>('0' + value % 10);
    }
  };
  put(3, utc.tm_year + 1900, 4);
  put(6, utc.tm_mon + 1, 2);
  put(9, utc.tm_mday, 2);
  put(12, utc.tm_hour, 2);
  put(15, utc.tm_min, 2);
  put(18, utc.tm_sec, 2);
  put(25, fraction, 6);
  return text;
}

void appendEventJson(std::string& out, const Event& event, bool with_bodies) {
  out += R"({"kind":"Event","apiVersion":"audit.k8s.io/v1")";
  appendMember(out, "level", levelName(event.level));
  appendMember(out, "auditID", event.audit_id);
  appendMember(out, "stage", stageName(event.stage));
  appendMember(out, "requestURI", event.request_uri);
  appendMember(out, "verb", event.verb);
  // authentication/v1 UserInfo omits empty fields: an unauthenticated caller is "user":{}.
  out += R"(,"user":{)";
  const std::size_t user_start = out.size();
  appendOptionalMember(out, "username", event.user);
  appendOptionalMember(out, "uid", event.uid);
  if (!event.groups.empty()) {
    out += ",\"groups\":";
    appendStringArray(out, event.groups);
  }
  if (event.extra != nullptr && !event.extra->empty()) {
    out += ",\"extra\":{";
    bool first = true;
    for (const auto& [key, values] : *event.extra) {
      if (!first) out += ',';
      first = false;
      appendJsonQuoted(out, key);
      out += ':';
      appendStringArray(out, values);
    }
    out += '}';
  }
  if (out.size() > user_start) out.erase(user_start, 1);  // the first member's leading comma
  out += '}';
  if (!event.source_ips.empty()) {
    out += ",\"sourceIPs\":";
    appendStringArray(out, event.source_ips);
  }
  appendOptionalMember(out, "userAgent", event.user_agent);
  if (event.has_object_ref) {
    out += ",\"objectRef\":{";
    const std::size_t start = out.size();
    appendOptionalMember(out, "resource", event.resource);
    appendOptionalMember(out, "namespace", event.namespace_name);
    appendOptionalMember(out, "name", event.name);
    appendOptionalMember(out, "apiGroup", event.api_group);
    appendOptionalMember(out, "apiVersion", event.api_version);
    appendOptionalMember(out, "subresource", event.subresource);
    if (out.size() > start) out.erase(start, 1);  // the first member's leading comma
    out += '}';
  }
  if (event.code != 0) appendResponseStatus(out, event);
  if (with_bodies && event.response_object && !event.truncated) appendResponseObject(out, event);
  appendMember(out, "requestReceivedTimestamp", microTime(event.received));
  appendMember(out, "stageTimestamp", microTime(event.stage_time));
  if (!event.decision.empty() || !event.decision_reason.empty() || event.truncated) {
    out += ",\"annotations\":{";
    const std::size_t start = out.size();
    if (event.truncated) appendMember(out, "audit.k8s.io/truncated", "true");
    appendOptionalMember(out, "authorization.k8s.io/decision", event.decision);
    // Upstream adds the reason with every decision, "" when the authorizer gave none; alone
    // ("internal error") when authorization failed without deciding.
    if (!event.decision.empty() || !event.decision_reason.empty()) {
      appendMember(out, "authorization.k8s.io/reason", event.decision_reason);
    }
    out.erase(start, 1);
    out += '}';
  }
  out += '}';
}

std::string legacyEventLine(const Event& event) {
  std::string groups = "<none>";
  if (!event.user.empty() && !event.groups.empty()) {
    groups.clear();
    for (std::size_t i = 0; i < event.groups.size(); ++i) {
      if (i > 0) groups += ',';
      appendGoQuoted(groups, event.groups[i]);
    }
  }
  std::string line = nanoTime(event.received) + " AUDIT:";
  const auto field = [&line](std::string_view name, std::string_view value) {
    line += ' ';
    line += name;
    line += '=';
    appendGoQuoted(line, value);
  };
  field("id", event.audit_id);
  field("stage", stageName(event.stage));
  field("ip", event.source_ips.empty() ? "<unknown>" : event.source_ips.front());
  field("method", event.verb);
  field("user", event.user.empty() ? "<none>" : event.user);
  field("groups", groups);
  field("as", "<self>");
  field("asgroups", "<lookup>");
  field("user-agent", event.user_agent);
  field("namespace", event.namespace_name.empty() ? "<none>" : event.namespace_name);
  field("uri", event.request_uri);
  line += " response=\"";
  line += event.code == 0 ? "<deferred>" : std::to_string(event.code);
  line += '"';
  return line;
}

}  // namespace metrics_adapter::audit
