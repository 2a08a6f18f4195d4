#include <string>

#include "metrics_adapter/promql/template.h"
#include "promql/template_ast.h"

namespace metrics_adapter::promql::tmpl {

void throwAt(std::string_view source, std::size_t offset, const std::string& message) {
  if (offset > source.size()) offset = source.size();
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (source[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  throw TemplateError("template: " + std::to_string(line) + ":" +
                      std::to_string(offset - line_start + 1) + ": " + message);
}

}  // namespace metrics_adapter::promql::tmpl
