#pragma once

#include <span>
#include <string>
#include <string_view>

#include "promql/template_value.h"

namespace metrics_adapter::promql::tmpl {

// Go's fmt.Sprint: each operand as %v, a space between operands when neither is a string.
// These functions throw ExecError for the template data itself and for results longer than
// kMaxOutputBytes.
std::string goSprint(std::span<const Value> args);

// Go's fmt.Sprintln: operands as %v separated by spaces, then a newline.
std::string goSprintln(std::span<const Value> args);

// Go's fmt.Sprintf for the verbs that make sense for template values (v s q d t x X b o O c U
// T and %%), with flags, width, precision, `*` and `[n]`; mismatches print Go's diagnostics
// (%!d(string=x), %!s(MISSING), %!(EXTRA int=1), ...).
std::string goSprintf(std::string_view format, std::span<const Value> args);

// Appends what an action prints for `value`: Sprint of it, "<no value>" for no value.
void appendActionValue(std::string& out, const Value& value);

}  // namespace metrics_adapter::promql::tmpl
