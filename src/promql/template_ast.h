#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::promql::tmpl {

// Bounds that keep hostile templates and data from exhausting stack, memory or time.
inline constexpr std::size_t kMaxTemplateBytes = std::size_t{64} * 1024;
inline constexpr int kMaxNestingDepth = 100;  // control structures plus parentheses
inline constexpr std::size_t kMaxOutputBytes =
    std::size_t{16} * 1024 * 1024;                   // also any computed string
inline constexpr std::size_t kMaxSteps = 1'000'000;  // nodes and commands executed per render

enum class Builtin {
  kAnd,
  kOr,
  kNot,
  kLen,
  kIndex,
  kSlice,
  kPrint,
  kPrintf,
  kPrintln,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
};

struct Pipeline;

// One word of a command: a literal, `.`, `.Field.Chain`, `$var.Chain`, a builtin function or a
// parenthesised pipeline, the last three possibly followed by a field chain.
struct Operand {
  enum class Kind { kDot, kField, kVariable, kFunction, kString, kInt, kBool, kPipeline };
  Kind kind = Kind::kDot;
  std::size_t pos = 0;
  std::string text;                          // variable name ("$x") or string literal value
  std::int64_t number = 0;                   // kInt value; kBool as 0 or 1
  Builtin function = Builtin::kAnd;          // kFunction
  std::shared_ptr<const Pipeline> pipeline;  // kPipeline
  std::vector<std::string> fields;           // kField: the whole chain; others: the trailing chain
};

// A function call or a single operand; later commands of a pipeline get the previous result
// as their last argument.
struct Command {
  std::size_t pos = 0;
  std::vector<Operand> args;
};

struct Pipeline {
  std::size_t pos = 0;
  std::vector<std::string> decl;  // variables declared (`:=`) or assigned (`=`), in order
  bool is_assign = false;
  std::vector<Command> commands;
};

struct Node;
using NodeList = std::vector<Node>;

struct Node {
  enum class Kind { kText, kAction, kIf, kRange, kWith, kBreak, kContinue };
  Kind kind = Kind::kText;
  std::size_t pos = 0;
  std::string text;   // kText
  Pipeline pipeline;  // kAction, kIf, kRange, kWith
  NodeList body;
  NodeList else_body;
};

// Throws TemplateError "template: LINE:COL: message" for the byte `offset` of `source`.
[[noreturn]] void throwAt(std::string_view source, std::size_t offset, const std::string& message);

}  // namespace metrics_adapter::promql::tmpl
