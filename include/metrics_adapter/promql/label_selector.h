#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::promql {

enum class SelectorOperator {
  kEquals,        // k=v
  kDoubleEquals,  // k==v
  kNotEquals,     // k!=v
  kIn,            // k in (a,b)
  kNotIn,         // k notin (a,b)
  kExists,        // k
  kDoesNotExist,  // !k
  kGreaterThan,   // k>5
  kLessThan,      // k<5
};

struct Requirement {
  std::string key;
  SelectorOperator op = SelectorOperator::kEquals;
  std::vector<std::string> values;  // sorted, de-duplicated (as Kubernetes does)
};

// A parsed Kubernetes label selector. Requirements are sorted by key (stable for equal keys).
struct LabelSelector {
  std::vector<Requirement> requirements;
  bool empty() const { return requirements.empty(); }
};

// Raised for a selector that Kubernetes would reject; what() is the user-facing reason.
class SelectorError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Parses the full grammar of k8s.io/apimachinery labels.Parse, including its key/value
// validation (qualified names, 63-character values). Empty text = empty selector.
LabelSelector parseLabelSelector(std::string_view text);

// The canonical string form (labels.Selector.String()).
std::string toString(const LabelSelector& selector);

// True when `labels` satisfies every requirement (Kubernetes semantics: != and notin match
// an absent key).
bool matches(const LabelSelector& selector, const std::map<std::string, std::string>& labels);

// metav1.LabelSelector JSON ({"matchLabels":{...},"matchExpressions":[...]}) as echoed back in
// MetricValue.selector; `!=` becomes NotIn with one value. Empty selector -> null.
nlohmann::json toLabelSelectorJson(const LabelSelector& selector);

}  // namespace metrics_adapter::promql
