#pragma once

#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::api {

// One term of a field selector: `field=value`, `field==value` or `field!=value`.
struct FieldRequirement {
  std::string field;
  bool equals = true;  // false: !=
  std::string value;
};

// A Kubernetes field selector (k8s.io/apimachinery fields.ParseSelector): terms joined by ','
// (all must hold); `\` escapes `\`, `,` and `=` in values. Empty = everything.
struct FieldSelector {
  std::vector<FieldRequirement> requirements;
  bool empty() const { return requirements.empty(); }
};

// Raised for a selector Kubernetes would reject; what() is the user-facing reason.
class FieldSelectorError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Parses `text`; every field must be in `supported` (the API server's own answer for others:
// `field label not supported: <field>`). Throws FieldSelectorError.
FieldSelector parseFieldSelector(std::string_view text, const std::set<std::string>& supported);

// True when every requirement holds for the object whose field values `field_value` gives.
bool matches(const FieldSelector& selector,
             const std::function<std::string(const std::string& field)>& field_value);

}  // namespace metrics_adapter::api
