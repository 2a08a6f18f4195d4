#include "promql/label_validation.h"

#include <limits>
#include <vector>

namespace metrics_adapter::promql::selector {
namespace {

constexpr std::size_t kMaxNameLength = 63;
constexpr std::size_t kMaxPrefixLength = 253;

constexpr std::string_view kNameCharsetMessage =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";

bool isAlphanumeric(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

bool isLowerAlphanumeric(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'); }

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], i.e. non-empty.
bool isQualifiedNamePart(std::string_view text) {
  if (text.empty() || !isAlphanumeric(text.front()) || !isAlphanumeric(text.back())) {
    return false;
  }
  for (const char ch : text) {
    if (!isAlphanumeric(ch) && ch != '-' && ch != '_' && ch != '.') return false;
  }
  return true;
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*
bool isDns1123Subdomain(std::string_view text) {
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = text.find('.', start);
    const std::string_view label =
        text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || !isLowerAlphanumeric(label.front()) ||
        !isLowerAlphanumeric(label.back())) {
      return false;
    }
    for (const char ch : label) {
      if (!isLowerAlphanumeric(ch) && ch != '-') return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string joinMessages(const std::vector<std::string>& messages) {
  std::string out;
  for (const std::string& message : messages) {
    if (!out.empty()) out += "; ";
    out += message;
  }
  return out;
}

}  // namespace

std::optional<std::string> checkLabelKey(std::string_view key) {
  std::vector<std::string> problems;
  std::string_view name = key;
  const std::size_t slash = key.find('/');
  if (slash != std::string_view::npos) {
    if (key.find('/', slash + 1) != std::string_view::npos) {
      return "a qualified name " + std::string(kNameCharsetMessage) +
             " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
    }
    const std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (prefix.empty()) {
      problems.emplace_back("prefix part must be non-empty");
    } else if (prefix.size() > kMaxPrefixLength) {
      problems.push_back("prefix part must be no more than " + std::to_string(kMaxPrefixLength) +
                         " characters");
    } else if (!isDns1123Subdomain(prefix)) {
      problems.emplace_back(
          "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
          "characters, '-' or '.', and must start and end with an alphanumeric character");
    }
  }
  if (name.empty()) {
    problems.emplace_back("name part must be non-empty");
  } else if (name.size() > kMaxNameLength) {
    problems.push_back("name part must be no more than " + std::to_string(kMaxNameLength) +
                       " characters");
  }
  if (!isQualifiedNamePart(name))
    problems.push_back("name part " + std::string(kNameCharsetMessage));
  if (problems.empty()) return std::nullopt;
  return joinMessages(problems);
}

std::optional<std::string> checkLabelValue(std::string_view value) {
  std::vector<std::string> problems;
  if (value.size() > kMaxNameLength) {
    problems.push_back("must be no more than " + std::to_string(kMaxNameLength) + " characters");
  }
  if (!value.empty() && !isQualifiedNamePart(value)) {
    problems.push_back("a valid label must be an empty string or " +
                       std::string(kNameCharsetMessage));
  }
  if (problems.empty()) return std::nullopt;
  return joinMessages(problems);
}

std::optional<std::int64_t> parseGoInt64(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return std::nullopt;
  // Accumulate as a negative number so that INT64_MIN is representable.
  std::int64_t accumulated = 0;
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  for (const char ch : text) {
    if (ch < '0' || ch > '9') return std::nullopt;
    const int digit = ch - '0';
    if (accumulated < (kMin + digit) / 10) return std::nullopt;
    accumulated = accumulated * 10 - digit;
  }
  if (negative) return accumulated;
  if (accumulated == kMin) return std::nullopt;
  return -accumulated;
}

}  // namespace metrics_adapter::promql::selector
