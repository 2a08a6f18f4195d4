#pragma once

#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace metrics_adapter::promql {

// A value a template can see: a string, a list of strings or a string map (sorted keys).
using TemplateValue =
    std::variant<std::string, std::vector<std::string>, std::map<std::string, std::string>>;

// The dot of a template: named fields (".Series", ".GroupBy", ...).
using TemplateData = std::map<std::string, TemplateValue, std::less<>>;

// Raised by Template::parse (syntax, unknown field, unknown function) and Template::render
// (execution errors, e.g. `index` on a non-map). `what()` is a one-line, user-facing message
// that includes the 1-based column where the problem is.
class TemplateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A Go text/template subset with `<<` `>>` delimiters, as prometheus-adapter uses for
// metricsQuery and resources.template. Immutable after parse; render() is thread-safe.
class Template {
 public:
  // Parses `text`. Every field reference (`.Name`) must be in `allowed_fields`, every function
  // must be a supported builtin; otherwise TemplateError (load time, not request time).
  static Template parse(std::string_view text, const std::set<std::string>& allowed_fields);

  // Executes against `data`. Throws TemplateError on execution errors.
  std::string render(const TemplateData& data) const;

  const std::string& source() const { return source_; }

  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;
  Template(const Template&);
  Template& operator=(const Template&);
  ~Template();

  struct Node;  // parse tree, private to the implementation

 private:
  Template() = default;
  std::string source_;
  std::shared_ptr<const Node> root_;
};

}  // namespace metrics_adapter::promql
