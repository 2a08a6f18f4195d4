#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "metrics_adapter/server/status.h"
#include "metrics_adapter/text/utf8.h"

namespace metrics_adapter::server {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

void appendUnicodeEscape(std::string& out, std::uint32_t code_point) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) {
    out += kHexDigits[(code_point >> shift) & 0xF];
  }
}

// Appends "key":value to a JSON object being written; `out` ends with its '{' or a member.
void appendMember(std::string& out, std::string_view key, std::string_view value) {
  if (out.back() != '{') out += ',';
  out += jsonQuote(key);
  out += ':';
  out += jsonQuote(value);
}

}  // namespace

std::string jsonQuote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x80) {
      const std::size_t length = text::utf8SequenceLength(text, i);
      if (length == 0) {
        out += "\\ufffd";
        ++i;
        continue;
      }
      const std::string_view sequence = text.substr(i, length);
      if (sequence == "\xE2\x80\xA8" || sequence == "\xE2\x80\xA9") {
        appendUnicodeEscape(out, sequence.back() == '\xA8' ? 0x2028 : 0x2029);
      } else {
        out += sequence;
      }
      i += length;
      continue;
    }
    switch (byte) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '<':
      case '>':
      case '&':
        appendUnicodeEscape(out, byte);
        break;
      default:
        if (byte < 0x20) {
          appendUnicodeEscape(out, byte);
        } else {
          out += static_cast<char>(byte);
        }
    }
    ++i;
  }
  out += '"';
  return out;
}

std::string statusJson(int code, std::string_view reason, std::string_view message,
                       const std::optional<StatusDetails>& details) {
  std::string out =
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)";
  out += jsonQuote(message);
  out += R"(,"reason":)";
  out += jsonQuote(reason);
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
