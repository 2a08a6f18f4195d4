#include "metrics_adapter/promql/template.h"

#include <utility>

#include "promql/template_ast.h"
#include "promql/template_exec.h"
#include "promql/template_lexer.h"
#include "promql/template_parser.h"

namespace metrics_adapter::promql {

struct Template::Node {
  tmpl::NodeList body;
};

Template Template::parse(std::string_view text, const std::set<std::string>& allowed_fields) {
  if (text.size() > tmpl::kMaxTemplateBytes) {
    throw TemplateError("template: " + std::to_string(text.size()) +
                        " bytes is longer than the limit of " +
                        std::to_string(tmpl::kMaxTemplateBytes));
  }
  const std::vector<tmpl::Token> tokens = tmpl::lexTemplate(text);
  auto root = std::make_shared<Node>();
  root->body = tmpl::parseTokens(text, tokens, allowed_fields);
  Template parsed;
  parsed.source_ = std::string(text);
  parsed.root_ = std::move(root);
  return parsed;
}

std::string Template::render(const TemplateData& data) const {
  if (!root_) throw TemplateError("template: not parsed (moved from)");
  return tmpl::executeTemplate(source_, root_->body, data);
}

Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;
Template::Template(const Template&) = default;
Template& Template::operator=(const Template&) = default;
Template::~Template() = default;

}  // namespace metrics_adapter::promql
