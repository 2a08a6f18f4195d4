#pragma once

#include <string>
#include <string_view>

#include "metrics_adapter/promql/template.h"
#include "promql/template_ast.h"

namespace metrics_adapter::promql::tmpl {

// Runs a parsed template against `data` with Go's text/template semantics. Uses only local
// state, so concurrent calls on the same tree are safe. Throws TemplateError with the position
// (in `source`) of the failing action, also when the output, a computed string or the number of
// execution steps exceeds its bound.
std::string executeTemplate(std::string_view source, const NodeList& body,
                            const TemplateData& data);

}  // namespace metrics_adapter::promql::tmpl
