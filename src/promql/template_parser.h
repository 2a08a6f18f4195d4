#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "promql/template_ast.h"
#include "promql/template_lexer.h"

namespace metrics_adapter::promql::tmpl {

// Builds the tree of a lexed template, checking what Go checks at parse time and more: every
// first field of a chain on the dot or on `$` must be in `allowed_fields`, every function must
// be a supported builtin called with an acceptable number of arguments, variables must be in
// scope, and control structures plus parentheses may nest at most kMaxNestingDepth deep.
// Throws TemplateError with the line and column of the offending token.
NodeList parseTokens(std::string_view source, const std::vector<Token>& tokens,
                     const std::set<std::string>& allowed_fields);

}  // namespace metrics_adapter::promql::tmpl
