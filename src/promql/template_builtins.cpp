#include "promql/template_builtins.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "promql/template_format.h"

namespace metrics_adapter::promql::tmpl {
namespace {

constexpr std::array<BuiltinInfo, 15> kBuiltins = {{
    {"and", Builtin::kAnd, 1, -1},
    {"or", Builtin::kOr, 1, -1},
    {"not", Builtin::kNot, 1, 1},
    {"len", Builtin::kLen, 1, 1},
    {"index", Builtin::kIndex, 1, -1},
    {"slice", Builtin::kSlice, 1, -1},
    {"print", Builtin::kPrint, 0, -1},
    {"printf", Builtin::kPrintf, 1, -1},
    {"println", Builtin::kPrintln, 0, -1},
    {"eq", Builtin::kEq, 2, -1},
    {"ne", Builtin::kNe, 2, 2},
    {"lt", Builtin::kLt, 2, 2},
    {"le", Builtin::kLe, 2, 2},
    {"gt", Builtin::kGt, 2, 2},
    {"ge", Builtin::kGe, 2, 2},
}};

// Go's eq: whether `a` equals any of `others`, stopping at the first match.
bool equalsAny(const Value& a, std::span<const Value> others) {
  for (const Value& b : others) {
    if (a.kind() != b.kind()) {
      if (a.kind() != Value::Kind::kNoValue && b.kind() != Value::Kind::kNoValue) {
        throw ExecError("incompatible types for comparison");
      }
      continue;
    }
    bool truth = false;
    switch (a.kind()) {
      case Value::Kind::kNoValue:
        truth = true;
        break;
      case Value::Kind::kString:
        truth = a.str() == b.str();
        break;
      case Value::Kind::kInt:
        truth = a.integer() == b.integer();
        break;
      case Value::Kind::kBool:
        truth = a.boolean() == b.boolean();
        break;
      default:
        throw ExecError("non-comparable type " + std::string(typeName(a)));
    }
    if (truth) return true;
  }
  return false;
}

bool lessThan(const Value& a, const Value& b) {
  for (const Value* v : {&a, &b}) {
    if (v->kind() != Value::Kind::kString && v->kind() != Value::Kind::kInt) {
      throw ExecError("invalid type for comparison");
    }
  }
  if (a.kind() != b.kind()) throw ExecError("incompatible types for comparison");
  return a.kind() == Value::Kind::kInt ? a.integer() < b.integer() : a.str() < b.str();
}

bool lessOrEqual(const Value& a, const Value& b) {
  if (lessThan(a, b)) return true;
  const Value others[] = {b};
  return equalsAny(a, others);
}

Value length(const Value& item) {
  switch (item.kind()) {
    case Value::Kind::kString:
      return Value::ofInt(static_cast<std::int64_t>(item.str().size()));
    case Value::Kind::kList:
      return Value::ofInt(static_cast<std::int64_t>(item.list().size()));
    case Value::Kind::kMap:
      return Value::ofInt(static_cast<std::int64_t>(item.map().size()));
    case Value::Kind::kNoValue:
      throw ExecError("len of untyped nil");
    default:
      throw ExecError("len of type " + std::string(typeName(item)));
  }
}

// Go's indexArg: an int in [0, cap].
std::size_t indexArg(const Value& index, std::size_t cap) {
  if (index.kind() == Value::Kind::kNoValue) throw ExecError("cannot index slice/array with nil");
  if (index.kind() != Value::Kind::kInt) {
    throw ExecError("cannot index slice/array with type " + std::string(typeName(index)));
  }
  const std::int64_t x = index.integer();
  if (x < 0 || static_cast<std::uint64_t>(x) > cap) {
    throw ExecError("index out of range: " + std::to_string(x));
  }
  return static_cast<std::size_t>(x);
}

Value indexItem(std::span<const Value> args) {
  Value item = args[0];
  if (item.kind() == Value::Kind::kNoValue) throw ExecError("index of untyped nil");
  for (const Value& index : args.subspan(1)) {
    switch (item.kind()) {
      case Value::Kind::kString: {
        const std::size_t x = indexArg(index, item.str().size());
        if (x == item.str().size()) throw ExecError("index out of range: " + std::to_string(x));
        item = Value::ofInt(static_cast<unsigned char>(item.str()[x]));  // a byte, as in Go
        break;
      }
      case Value::Kind::kList: {
        const std::size_t x = indexArg(index, item.list().size());
        if (x == item.list().size()) throw ExecError("index out of range: " + std::to_string(x));
        item = Value::ofString(item.list()[x]);
        break;
      }
      case Value::Kind::kMap: {
        if (index.kind() == Value::Kind::kNoValue) {
          throw ExecError("value is nil; should be of type string");
        }
        if (index.kind() != Value::Kind::kString) {
          throw ExecError("value has type " + std::string(typeName(index)) + "; should be string");
        }
        const auto found = item.map().find(index.str());
        item = Value::ofString(found == item.map().end() ? "" : found->second);
        break;
      }
      default:
        throw ExecError("can't index item of type " + std::string(typeName(item)));
    }
  }
  return item;
}

Value sliceItem(std::span<const Value> args) {
  const Value& item = args[0];
  const std::span<const Value> indexes = args.subspan(1);
  if (item.kind() == Value::Kind::kNoValue) throw ExecError("slice of untyped nil");
  if (indexes.size() > 3) {
    throw ExecError("too many slice indexes: " + std::to_string(indexes.size()));
  }
  std::size_t cap = 0;
  if (item.kind() == Value::Kind::kString) {
    if (indexes.size() == 3) throw ExecError("cannot 3-index slice a string");
    cap = item.str().size();
  } else if (item.kind() == Value::Kind::kList) {
    cap = item.list().size();
  } else {
    throw ExecError("can't slice item of type " + std::string(typeName(item)));
  }
  std::size_t idx[3] = {0, cap, cap};
  for (std::size_t i = 0; i < indexes.size(); ++i) idx[i] = indexArg(indexes[i], cap);
  if (idx[0] > idx[1]) {
    throw ExecError("invalid slice index: " + std::to_string(idx[0]) + " > " +
                    std::to_string(idx[1]));
  }
  if (indexes.size() == 3 && idx[1] > idx[2]) {
    throw ExecError("invalid slice index: " + std::to_string(idx[1]) + " > " +
                    std::to_string(idx[2]));
  }
  if (item.kind() == Value::Kind::kString) {
    return Value::ofString(item.str().substr(idx[0], idx[1] - idx[0]));
  }
  const auto& list = item.list();
  return Value::ofList(
      std::make_shared<const StringList>(list.begin() + static_cast<std::ptrdiff_t>(idx[0]),
                                         list.begin() + static_cast<std::ptrdiff_t>(idx[1])));
}

Value printfValue(std::span<const Value> args) {
  const Value& format = args[0];
  if (format.kind() == Value::Kind::kNoValue) throw ExecError("invalid value; expected string");
  if (format.kind() != Value::Kind::kString) {
    throw ExecError("wrong type for value; expected string; got " + std::string(typeName(format)));
  }
  return Value::ofString(goSprintf(format.str(), args.subspan(1)));
}

}  // namespace

const BuiltinInfo* findBuiltin(std::string_view name) {
  for (const auto& info : kBuiltins) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

const BuiltinInfo& builtinInfo(Builtin id) {
  for (const auto& info : kBuiltins) {
    if (info.id == id) return info;
  }
  return kBuiltins[0];
}

bool isUnsupportedGoBuiltin(std::string_view name) {
  return name == "html" || name == "js" || name == "urlquery" || name == "call";
}

Value callBuiltin(Builtin id, std::span<const Value> args) {
  const BuiltinInfo& info = builtinInfo(id);
  const auto count = static_cast<int>(args.size());
  if (count < info.min_args || (info.max_args >= 0 && count > info.max_args)) {
    throw ExecError("wrong number of args for " + std::string(info.name) + ": got " +
                    std::to_string(count));
  }
  switch (id) {
    case Builtin::kAnd:
      for (const Value& arg : args.first(args.size() - 1)) {
        if (!isTrue(arg)) return arg;
      }
      return args.back();
    case Builtin::kOr:
      for (const Value& arg : args.first(args.size() - 1)) {
        if (isTrue(arg)) return arg;
      }
      return args.back();
    case Builtin::kNot:
      return Value::ofBool(!isTrue(args[0]));
    case Builtin::kLen:
      return length(args[0]);
    case Builtin::kIndex:
      return indexItem(args);
    case Builtin::kSlice:
      return sliceItem(args);
    case Builtin::kPrint:
      return Value::ofString(goSprint(args));
    case Builtin::kPrintf:
      return printfValue(args);
    case Builtin::kPrintln:
      return Value::ofString(goSprintln(args));
    case Builtin::kEq:
      return Value::ofBool(equalsAny(args[0], args.subspan(1)));
    case Builtin::kNe:
      return Value::ofBool(!equalsAny(args[0], args.subspan(1)));
    case Builtin::kLt:
      return Value::ofBool(lessThan(args[0], args[1]));
    case Builtin::kLe:
      return Value::ofBool(lessOrEqual(args[0], args[1]));
    case Builtin::kGt:
      return Value::ofBool(!lessOrEqual(args[0], args[1]));
    case Builtin::kGe:
      return Value::ofBool(!lessThan(args[0], args[1]));
  }
  throw ExecError("unknown function");
}

}  // namespace metrics_adapter::promql::tmpl
