#include "promql/template_exec.h"

#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "promql/template_builtins.h"
#include "promql/template_format.h"
#include "promql/template_value.h"

namespace metrics_adapter::promql::tmpl {
namespace {

class Executor {
 public:
  Executor(std::string_view source, const TemplateData& data)
      : src_(source), root_(Value::ofData(&data)) {
    vars_.emplace_back("$", root_);
  }

  std::string run(const NodeList& body) {
    walkList(body, root_);
    return std::move(out_);
  }

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  [[noreturn]] void fail(std::size_t pos, const std::string& message) const {
    throwAt(src_, pos, message);
  }

  void step(std::size_t pos) {
    if (++steps_ > kMaxSteps) {
      fail(pos, "execution stopped after " + std::to_string(kMaxSteps) + " steps");
    }
  }

  void checkOutput(std::size_t pos) const {
    if (out_.size() > kMaxOutputBytes) {
      fail(pos, "output longer than " + std::to_string(kMaxOutputBytes) + " bytes");
    }
  }

  Flow walkList(const NodeList& list, const Value& dot) {
    for (const Node& node : list) {
      const Flow flow = walk(node, dot);
      if (flow != Flow::kNormal) return flow;
    }
    return Flow::kNormal;
  }

  Flow walk(const Node& node, const Value& dot) {
    step(node.pos);
    switch (node.kind) {
      case Node::Kind::kText:
        out_ += node.text;
        checkOutput(node.pos);
        return Flow::kNormal;
      case Node::Kind::kAction: {
        const Value value = evalPipeline(node.pipeline, dot);
        if (node.pipeline.decl.empty()) {
          try {
            appendActionValue(out_, value);
          } catch (const ExecError& e) {
            fail(node.pos, e.what());
          }
          checkOutput(node.pos);
        }
        return Flow::kNormal;
      }
      case Node::Kind::kIf:
      case Node::Kind::kWith:
        return walkIfOrWith(node, dot);
      case Node::Kind::kRange:
        return walkRange(node, dot);
      case Node::Kind::kBreak:
        return Flow::kBreak;
      case Node::Kind::kContinue:
        return Flow::kContinue;
    }
    return Flow::kNormal;
  }

  Flow walkIfOrWith(const Node& node, const Value& dot) {
    const std::size_t mark = vars_.size();
    const Value value = evalPipeline(node.pipeline, dot);
    Flow flow = Flow::kNormal;
    if (isTrue(value)) {
      flow = walkList(node.body, node.kind == Node::Kind::kWith ? value : dot);
    } else {
      flow = walkList(node.else_body, dot);
    }
    vars_.resize(mark);
    return flow;
  }

  Flow walkRange(const Node& node, const Value& dot) {
    const std::size_t mark = vars_.size();
    const Pipeline& pipe = node.pipeline;
    const Value collection = evalPipeline(pipe, dot);  // declared variables start as this
    const std::size_t body_mark = vars_.size();

    // Returns false when the body executed {{break}}.
    const auto iterate = [&](Value index, const Value& element) {
      step(node.pos);
      if (pipe.is_assign) {
        if (pipe.decl.size() == 2) {
          setVariable(pipe.decl[0], index, pipe.pos);
          setVariable(pipe.decl[1], element, pipe.pos);
        } else if (pipe.decl.size() == 1) {
          setVariable(pipe.decl[0], element, pipe.pos);
        }
      } else if (!pipe.decl.empty()) {
        vars_[body_mark - 1].second = element;  // the last declared variable
        if (pipe.decl.size() == 2) vars_[body_mark - 2].second = std::move(index);
      }
      const Flow flow = walkList(node.body, element);
      vars_.resize(body_mark);
      return flow != Flow::kBreak;
    };

    bool empty = true;
    switch (collection.kind()) {
      case Value::Kind::kList: {
        const StringList& list = collection.list();
        empty = list.empty();
        for (std::size_t i = 0; i < list.size(); ++i) {
          if (!iterate(Value::ofInt(static_cast<std::int64_t>(i)), Value::ofString(list[i]))) {
            break;
          }
        }
        break;
      }
      case Value::Kind::kMap: {
        const StringMap& map = collection.map();
        empty = map.empty();
        for (const auto& [key, value] : map) {
          if (!iterate(Value::ofString(key), Value::ofString(value))) break;
        }
        break;
      }
      case Value::Kind::kNoValue:
        break;
      default:
        fail(pipe.pos,
             "range can't iterate over a value of type " + std::string(typeName(collection)));
    }
    Flow flow = Flow::kNormal;
    if (empty) flow = walkList(node.else_body, dot);
    vars_.resize(mark);
    return flow;
  }

  Value evalPipeline(const Pipeline& pipe, const Value& dot) {
    Value value;
    for (std::size_t i = 0; i < pipe.commands.size(); ++i) {
      if (i == 0) {
        value = evalCommand(pipe.commands[i], dot, nullptr);
      } else {
        const Value previous = std::move(value);
        value = evalCommand(pipe.commands[i], dot, &previous);
      }
    }
    for (const auto& name : pipe.decl) {
      if (pipe.is_assign) {
        setVariable(name, value, pipe.pos);
      } else {
        vars_.emplace_back(name, value);
      }
    }
    return value;
  }

  Value evalCommand(const Command& cmd, const Value& dot, const Value* final) {
    step(cmd.pos);
    const Operand& first = cmd.args[0];
    if (first.kind == Operand::Kind::kFunction) {
      return callFunction(first, std::span<const Operand>(cmd.args).subspan(1), dot, final);
    }
    return evalOperand(first, dot);  // the parser rejected arguments to non-functions
  }

  Value evalOperand(const Operand& op, const Value& dot) {
    switch (op.kind) {
      case Operand::Kind::kDot:
        return dot;
      case Operand::Kind::kField:
        return evalChain(dot, op.fields, op.pos);
      case Operand::Kind::kVariable:
        return evalChain(variable(op.text, op.pos), op.fields, op.pos);
      case Operand::Kind::kPipeline:
        return evalChain(evalPipeline(*op.pipeline, dot), op.fields, op.pos);
      case Operand::Kind::kFunction:
        return callFunction(op, {}, dot, nullptr);
      case Operand::Kind::kString:
        return Value::ofString(op.text);
      case Operand::Kind::kInt:
        return Value::ofInt(op.number);
      case Operand::Kind::kBool:
        return Value::ofBool(op.number != 0);
    }
    return Value();
  }

  Value evalChain(Value receiver, const std::vector<std::string>& fields, std::size_t pos) {
    for (const auto& name : fields) receiver = evalField(receiver, name, pos);
    return receiver;
  }

  Value evalField(const Value& receiver, const std::string& name, std::size_t pos) const {
    switch (receiver.kind()) {
      case Value::Kind::kData: {
        const auto found = receiver.data().find(name);
        if (found == receiver.data().end()) fail(pos, "field ." + name + " has no value");
        return Value::borrow(found->second);
      }
      case Value::Kind::kMap: {
        // As in Go, a field of a map is the entry with that key; a missing key is no value.
        const auto found = receiver.map().find(name);
        return found == receiver.map().end() ? Value() : Value::ofString(found->second);
      }
      case Value::Kind::kNoValue:
        return Value();
      default:
        fail(pos, "can't evaluate field " + name + " in type " + std::string(typeName(receiver)));
    }
  }

  Value callFunction(const Operand& fn, std::span<const Operand> args, const Value& dot,
                     const Value* final) {
    const BuiltinInfo& info = builtinInfo(fn.function);
    if (fn.function == Builtin::kAnd || fn.function == Builtin::kOr) {
      // Go evaluates and/or lazily: the first falsy (and) or truthy (or) argument, else the last.
      const bool want = fn.function == Builtin::kOr;
      Value value;
      for (const Operand& arg : args) {
        value = evalOperand(arg, dot);
        if (isTrue(value) == want) return value;
      }
      if (final != nullptr) value = *final;
      return value;
    }
    std::vector<Value> argv;
    argv.reserve(args.size() + 1);
    for (const Operand& arg : args) argv.push_back(evalOperand(arg, dot));
    if (final != nullptr) argv.push_back(*final);
    try {
      return callBuiltin(fn.function, argv);
    } catch (const ExecError& e) {
      fail(fn.pos, "error calling " + std::string(info.name) + ": " + e.what());
    }
  }

  // The innermost definition of `name` (inner scopes shadow outer ones), or vars_.rend().
  template <typename Self>
  static auto findVariable(Self& self, const std::string& name) {
    return std::find_if(self.vars_.rbegin(), self.vars_.rend(),
                        [&](const auto& var) { return var.first == name; });
  }

  const Value& variable(const std::string& name, std::size_t pos) const {
    const auto found = findVariable(*this, name);
    if (found == vars_.rend()) fail(pos, "undefined variable: " + name);
    return found->second;
  }

  void setVariable(const std::string& name, Value value, std::size_t pos) {
    const auto found = findVariable(*this, name);
    if (found == vars_.rend()) fail(pos, "undefined variable: " + name);
    found->second = std::move(value);
  }

  std::string_view src_;
  Value root_;
  std::vector<std::pair<std::string, Value>> vars_;
  std::string out_;
  std::size_t steps_ = 0;
};

}  // namespace

std::string executeTemplate(std::string_view source, const NodeList& body,
                            const TemplateData& data) {
  return Executor(source, data).run(body);
}

}  // namespace metrics_adapter::promql::tmpl
