#pragma once

#include <span>
#include <string_view>

#include "promql/template_ast.h"
#include "promql/template_value.h"

namespace metrics_adapter::promql::tmpl {

struct BuiltinInfo {
  std::string_view name;
  Builtin id;
  int min_args;
  int max_args;  // -1: no limit
};

// The Go text/template builtin called `name`, or nullptr when it is not supported here.
const BuiltinInfo* findBuiltin(std::string_view name);

const BuiltinInfo& builtinInfo(Builtin id);

// Go builtins deliberately left out (html, js, urlquery, call).
bool isUnsupportedGoBuiltin(std::string_view name);

// Calls a builtin with evaluated arguments, with Go's semantics. `and` and `or` short-circuit
// in the executor; here they see all arguments. Throws ExecError.
Value callBuiltin(Builtin id, std::span<const Value> args);

}  // namespace metrics_adapter::promql::tmpl
