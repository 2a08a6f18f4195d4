#include "logging/log_vmodule.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace metrics_adapter::logging {
namespace {

// One character of a [class] at `pos` (escaped or not), advancing `pos`; false when malformed.
bool readVmoduleClassChar(std::string_view pattern, std::size_t& pos, char& out) {
  if (pos >= pattern.size() || pattern[pos] == '-' || pattern[pos] == ']') return false;
  if (pattern[pos] == '\\') {
    ++pos;
    if (pos >= pattern.size()) return false;
  }
  out = pattern[pos++];
  return true;
}

// The pattern element (not '*') at the start of `pattern` against `c`: its length in the
// pattern, or 0 when it is malformed; `matched` says whether `c` matched it.
std::size_t matchVmoduleElement(std::string_view pattern, char c, bool& matched) {
  switch (pattern[0]) {
    case '?':
      matched = c != '/';
      return 1;
    case '\\':
      if (pattern.size() < 2) return 0;
      matched = c == pattern[1];
      return 2;
    case '[': {
      std::size_t pos = 1;
      bool negated = false;
      if (pos < pattern.size() && pattern[pos] == '^') {
        negated = true;
        ++pos;
      }
      bool in_class = false;
      for (int ranges = 0;; ++ranges) {
        if (pos < pattern.size() && pattern[pos] == ']' && ranges > 0) {
          ++pos;
          break;
        }
        char low = 0;
        if (!readVmoduleClassChar(pattern, pos, low)) return 0;
        char high = low;
        if (pos < pattern.size() && pattern[pos] == '-') {
          ++pos;
          if (!readVmoduleClassChar(pattern, pos, high)) return 0;
        }
        if (low <= c && c <= high) in_class = true;
      }
      matched = in_class != negated;
      return pos;
    }
    default:
      matched = c == pattern[0];
      return 1;
  }
}

std::string_view withoutExtension(std::string_view path) {
  auto slash = path.rfind('/');
  auto dot = path.rfind('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) {
    return path;
  }
  return path.substr(0, dot);
}

// The pattern matched against the path's end: the whole path, or what follows any '/'.
bool matchesPathEnd(std::string_view pattern, std::string_view path) {
  if (logGlobMatch(pattern, path)) return true;
  for (std::size_t slash = path.find('/'); slash != std::string_view::npos;
       slash = path.find('/', slash + 1)) {
    if (logGlobMatch(pattern, path.substr(slash + 1))) return true;
  }
  return false;
}

}  // namespace

bool logGlobMatch(std::string_view pattern, std::string_view name) {
  while (!pattern.empty()) {
    if (pattern[0] == '*') {
      while (!pattern.empty() && pattern[0] == '*') pattern.remove_prefix(1);
      if (pattern.empty()) return name.find('/') == std::string_view::npos;
      for (std::size_t skip = 0; skip <= name.size(); ++skip) {
        if (logGlobMatch(pattern, name.substr(skip))) return true;
        if (skip < name.size() && name[skip] == '/') break;  // '*' stops at a separator
      }
      return false;
    }
    if (name.empty()) return false;
    bool matched = false;
    std::size_t length = matchVmoduleElement(pattern, name[0], matched);
    if (length == 0 || !matched) return false;
    pattern.remove_prefix(length);
    name.remove_prefix(1);
  }
  return name.empty();
}

bool isValidLogGlob(std::string_view pattern) {
  while (!pattern.empty()) {
    if (pattern[0] == '*') {
      pattern.remove_prefix(1);
      continue;
    }
    bool matched = false;
    std::size_t length = matchVmoduleElement(pattern, 'a', matched);
    if (length == 0) return false;
    pattern.remove_prefix(length);
  }
  return true;
}

std::vector<VmoduleRule> parseVmodule(std::string_view text) {
  std::vector<VmoduleRule> rules;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view entry = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (entry.empty()) continue;  // "a=1,,b=2" and a trailing comma, as klog allows
    auto equals = entry.find('=');
    if (equals == std::string_view::npos || equals == 0 || equals + 1 == entry.size() ||
        entry.find('=', equals + 1) != std::string_view::npos) {
      throw std::invalid_argument(
          "--vmodule: expected a comma-separated list of pattern=N, got \"" + std::string(entry) +
          "\"");
    }
    std::string_view pattern = entry.substr(0, equals);
    std::string_view number = entry.substr(equals + 1);
    if (number[0] == '+') number.remove_prefix(1);  // Go's ParseInt takes a sign
    long long verbosity = 0;
    auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), verbosity);
    if (error != std::errc() || end != number.data() + number.size() ||
        verbosity > std::numeric_limits<int>::max()) {
      throw std::invalid_argument("--vmodule: \"" + std::string(entry) +
                                  "\": the level must be a decimal integer");
    }
    if (verbosity < 0) {
      throw std::invalid_argument("--vmodule: \"" + std::string(entry) +
                                  "\": the level must not be negative");
    }
    if (!isValidLogGlob(pattern)) {
      throw std::invalid_argument("--vmodule: \"" + std::string(entry) +
                                  "\": malformed pattern (unclosed [ or trailing \\)");
    }
    if (verbosity == 0) continue;  // as klog: never above --v, so it changes nothing
    rules.push_back({std::string(pattern), static_cast<int>(verbosity)});
  }
  return rules;
}

VmoduleMatcher::VmoduleMatcher(int verbosity, std::vector<VmoduleRule> rules)
    : verbosity_(verbosity), rules_(std::move(rules)) {}

int VmoduleMatcher::verbosityFor(std::string_view source_file) const {
  std::string_view path = withoutExtension(source_file);
  auto slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  for (const auto& rule : rules_) {
    bool full = rule.pattern.find('/') != std::string::npos;
    if (full ? matchesPathEnd(rule.pattern, path) : logGlobMatch(rule.pattern, base)) {
      return std::max(verbosity_, rule.verbosity);
    }
  }
  return verbosity_;
}

int VmoduleMatcher::mostVerbose() const {
  int most = verbosity_;
  for (const auto& rule : rules_) most = std::max(most, rule.verbosity);
  return most;
}

}  // namespace metrics_adapter::logging
