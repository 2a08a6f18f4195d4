#include "promql/template_value.h"

namespace metrics_adapter::promql::tmpl {

Value Value::borrow(const TemplateValue& value) {
  if (const auto* text = std::get_if<std::string>(&value)) return ofString(*text);
  if (const auto* list = std::get_if<StringList>(&value)) {
    // Aliasing constructor with an empty owner: a non-owning pointer to data that outlives us.
    return ofList(std::shared_ptr<const StringList>(std::shared_ptr<const StringList>(), list));
  }
  const auto& map = std::get<StringMap>(value);
  return ofMap(std::shared_ptr<const StringMap>(std::shared_ptr<const StringMap>(), &map));
}

std::string_view typeName(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kNoValue:
      return "<nil>";
    case Value::Kind::kString:
      return "string";
    case Value::Kind::kInt:
      return "int";
    case Value::Kind::kBool:
      return "bool";
    case Value::Kind::kList:
      return "[]string";
    case Value::Kind::kMap:
      return "map[string]string";
    case Value::Kind::kData:
      return "template data";
  }
  return "?";
}

bool isTrue(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kNoValue:
      return false;
    case Value::Kind::kString:
      return !value.str().empty();
    case Value::Kind::kInt:
      return value.integer() != 0;
    case Value::Kind::kBool:
      return value.boolean();
    case Value::Kind::kList:
      return !value.list().empty();
    case Value::Kind::kMap:
      return !value.map().empty();
    case Value::Kind::kData:
      return true;  // a struct is always true in Go
  }
  return false;
}

}  // namespace metrics_adapter::promql::tmpl
