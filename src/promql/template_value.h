#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "metrics_adapter/promql/template.h"

namespace metrics_adapter::promql::tmpl {

// An execution error without a position; the executor adds "LINE:COL: error calling f:".
class ExecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using StringList = std::vector<std::string>;
using StringMap = std::map<std::string, std::string>;

// A value during execution, with Go's dynamic types: string, int, bool, []string,
// map[string]string, the template data itself (a struct in Go) or no value (Go's invalid
// reflect.Value, e.g. a missing map key reached through a field chain).
class Value {
 public:
  enum class Kind { kNoValue, kString, kInt, kBool, kList, kMap, kData };

  Value() = default;
  static Value ofString(std::string text) { return make<std::string>(std::move(text)); }
  static Value ofInt(std::int64_t number) { return make<std::int64_t>(number); }
  static Value ofBool(bool flag) { return make<bool>(flag); }
  static Value ofList(std::shared_ptr<const StringList> list) {
    return make<std::shared_ptr<const StringList>>(std::move(list));
  }
  static Value ofMap(std::shared_ptr<const StringMap> map) {
    return make<std::shared_ptr<const StringMap>>(std::move(map));
  }
  static Value ofData(const TemplateData* data) { return make<const TemplateData*>(data); }
  // Refers to the list or map inside `value` without copying it: `value` must outlive the
  // result (it does: the data outlives a render).
  static Value borrow(const TemplateValue& value);

  Kind kind() const { return static_cast<Kind>(value_.index()); }
  const std::string& str() const { return std::get<std::string>(value_); }
  std::int64_t integer() const { return std::get<std::int64_t>(value_); }
  bool boolean() const { return std::get<bool>(value_); }
  const StringList& list() const { return *std::get<std::shared_ptr<const StringList>>(value_); }
  const StringMap& map() const { return *std::get<std::shared_ptr<const StringMap>>(value_); }
  const TemplateData& data() const { return *std::get<const TemplateData*>(value_); }

 private:
  using Storage = std::variant<std::monostate, std::string, std::int64_t, bool,
                               std::shared_ptr<const StringList>, std::shared_ptr<const StringMap>,
                               const TemplateData*>;
  template <typename T, typename Arg>
  static Value make(Arg&& arg) {
    Value value;
    value.value_.emplace<T>(std::forward<Arg>(arg));
    return value;
  }

  Storage value_;
};

// Go's type name for error messages and %T ("string", "int", "[]string", ...).
std::string_view typeName(const Value& value);

// Go's truth: false, 0, "" and empty lists and maps are false, as is no value.
bool isTrue(const Value& value);

}  // namespace metrics_adapter::promql::tmpl
