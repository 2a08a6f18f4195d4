#pragma once

#include <string_view>
#include <vector>

#include "metrics_adapter/promql/label_selector.h"

namespace metrics_adapter::promql::selector {

// The requirements of `text` in the order written, each validated as labels.NewRequirement
// does (values sorted and de-duplicated). Throws SelectorError naming the problem and its
// 1-based column. No length limit: the caller bounds the input.
std::vector<Requirement> parseRequirements(std::string_view text);

}  // namespace metrics_adapter::promql::selector
