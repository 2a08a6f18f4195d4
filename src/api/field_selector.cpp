#include "metrics_adapter/api/field_selector.h"

#include <algorithm>

namespace metrics_adapter::api {
namespace {

// Splits `text` at the unescaped `separator`s, keeping escapes in the parts.
std::vector<std::string_view> splitUnescaped(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;  // the escaped character is never a separator
    } else if (text[i] == separator) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(text.substr(start));
  return parts;
}

// The value with its escapes removed; only `\\`, `\,` and `\=` are escapes.
std::string unescapeValue(std::string_view value, std::string_view term) {
  std::string out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '\\') {
      out += value[i];
      continue;
    }
    if (i + 1 == value.size() ||
        (value[i + 1] != '\\' && value[i + 1] != ',' && value[i + 1] != '=')) {
      throw FieldSelectorError("invalid field selector: invalid escape sequence in \"" +
                               std::string(term) + "\"");
    }
    out += value[++i];
  }
  return out;
}

// The first unescaped '=' or "!=" of `term`: its position and length, or npos.
std::pair<std::size_t, std::size_t> findOperator(std::string_view term) {
  for (std::size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '\\') {
      ++i;
    } else if (term[i] == '!' && i + 1 < term.size() && term[i + 1] == '=') {
      return {i, 2};
    } else if (term[i] == '=') {
      return {i, i + 1 < term.size() && term[i + 1] == '=' ? 2 : 1};
    }
  }
  return {std::string_view::npos, 0};
}

}  // namespace

FieldSelector parseFieldSelector(std::string_view text, const std::set<std::string>& supported) {
  FieldSelector selector;
  if (text.empty()) return selector;
  for (std::string_view term : splitUnescaped(text, ',')) {
    const auto [position, length] = findOperator(term);
    if (position == std::string_view::npos) {
      throw FieldSelectorError("invalid field selector: \"" + std::string(term) +
                               "\": needs an operator (=, == or !=)");
    }
    FieldRequirement requirement;
    requirement.field = std::string(term.substr(0, position));
    requirement.equals = term[position] != '!';
    requirement.value = unescapeValue(term.substr(position + length), term);
    if (requirement.field.empty()) {
      throw FieldSelectorError("invalid field selector: \"" + std::string(term) +
                               "\": no field name");
    }
    if (!supported.contains(requirement.field)) {
      throw FieldSelectorError("field label not supported: " + requirement.field);
    }
    selector.requirements.push_back(std::move(requirement));
  }
  return selector;
}

bool matches(const FieldSelector& selector,
             const std::function<std::string(const std::string& field)>& field_value) {
  return std::all_of(selector.requirements.begin(), selector.requirements.end(),
                     [&](const FieldRequirement& requirement) {
                       return (field_value(requirement.field) == requirement.value) ==
                              requirement.equals;
                     });
}

}  // namespace metrics_adapter::api
