#include "promql/template_format.h"

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "promql/go_strings.h"
#include "promql/template_ast.h"

namespace metrics_adapter::promql::tmpl {
namespace {

constexpr char kLowerHex[] = "0123456789abcdefx";
constexpr char kUpperHex[] = "0123456789ABCDEFX";

bool tooLarge(std::int64_t x) { return x > 1'000'000 || x < -1'000'000; }

struct Flags {
  bool plus = false;
  bool minus = false;
  bool sharp = false;
  bool space = false;
  bool zero = false;
  bool sharp_v = false;  // %#v
  bool plus_v = false;   // %+v
  bool wid_present = false;
  bool prec_present = false;
  int wid = 0;
  int prec = 0;
};

// The state of one Sprint/Sprintf call, mirroring Go's fmt.pp and fmt.fmt.
class Printer {
 public:
  std::string buf;

  void doPrint(std::span<const Value> args, bool line) {
    bool prev_string = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const bool is_string = args[i].kind() == Value::Kind::kString;
      if (i > 0 && (line || (!is_string && !prev_string))) buf += ' ';
      printArg(args[i], 'v');
      prev_string = is_string;
    }
    if (line) buf += '\n';
  }

  void doPrintf(std::string_view format, std::span<const Value> args);

  void printArg(const Value& value, char32_t verb) {
    switch (value.kind()) {
      case Value::Kind::kNoValue:
        if (verb == 'T' || verb == 'v') {
          pad("<nil>");
        } else {
          badVerb(verb, value);
        }
        break;
      case Value::Kind::kData:
        throw ExecError("can't print the template data itself; use one of its fields");
      default:
        if (verb == 'T') {
          fmtS(typeName(value));
        } else if (verb == 'p') {
          badVerb(verb, value);
        } else if (value.kind() == Value::Kind::kString) {
          fmtString(value.str(), verb);
        } else if (value.kind() == Value::Kind::kInt) {
          fmtInt(value.integer(), verb);
        } else if (value.kind() == Value::Kind::kBool) {
          fmtBool(value.boolean(), verb);
        } else if (value.kind() == Value::Kind::kList) {
          printList(value.list(), verb);
        } else {
          printMap(value.map(), verb);
        }
    }
    if (buf.size() > kMaxOutputBytes) {
      throw ExecError("result longer than " + std::to_string(kMaxOutputBytes) + " bytes");
    }
  }

 private:
  void writePadding(int n) {
    if (n <= 0) return;
    buf.append(static_cast<std::size_t>(n), f_.zero ? '0' : ' ');
  }

  void pad(std::string_view text) {
    if (!f_.wid_present || f_.wid == 0) {
      buf += text;
      return;
    }
    const int width = f_.wid - static_cast<int>(go::runeCount(text));
    if (!f_.minus) {
      writePadding(width);
      buf += text;
    } else {
      buf += text;
      writePadding(width);
    }
  }

  std::string_view truncate(std::string_view text) const {
    if (!f_.prec_present) return text;
    int n = f_.prec;
    char32_t r = 0;
    for (std::size_t i = 0; i < text.size(); i += go::decodeRune(text, i, &r)) {
      if (--n < 0) return text.substr(0, i);
    }
    return text;
  }

  void fmtS(std::string_view text) { pad(truncate(text)); }

  void fmtQ(std::string_view text) {
    text = truncate(text);
    if (f_.sharp && go::canBackquote(text)) {
      // Appended rather than `"`" + std::string(text)`, which trips GCC 12's -Wrestrict at -O3.
      std::string quoted(1, '`');
      quoted.append(text);
      quoted += '`';
      pad(quoted);
    } else {
      pad(go::quote(text, {.quote = '"', .ascii_only = f_.plus}));
    }
  }

  void fmtSx(std::string_view text, const char* digits) {
    int length = static_cast<int>(text.size());
    if (f_.prec_present && f_.prec < length) length = f_.prec;
    int width = 2 * length;
    if (width > 0) {
      if (f_.space) {
        if (f_.sharp) width *= 2;
        width += length - 1;
      } else if (f_.sharp) {
        width += 2;
      }
    } else {
      if (f_.wid_present) writePadding(f_.wid);
      return;
    }
    if (f_.wid_present && f_.wid > width && !f_.minus) writePadding(f_.wid - width);
    if (f_.sharp) {
      buf += '0';
      buf += digits[16];
    }
    for (int i = 0; i < length; ++i) {
      if (f_.space && i > 0) {
        buf += ' ';
        if (f_.sharp) {
          buf += '0';
          buf += digits[16];
        }
      }
      const auto c = static_cast<unsigned char>(text[static_cast<std::size_t>(i)]);
      buf += digits[c >> 4];
      buf += digits[c & 0xF];
    }
    if (f_.wid_present && f_.wid > width && f_.minus) writePadding(f_.wid - width);
  }

  void fmtString(std::string_view text, char32_t verb) {
    switch (verb) {
      case 'v':
        if (f_.sharp_v) {
          fmtQ(text);
        } else {
          fmtS(text);
        }
        return;
      case 's':
        fmtS(text);
        return;
      case 'x':
        fmtSx(text, kLowerHex);
        return;
      case 'X':
        fmtSx(text, kUpperHex);
        return;
      case 'q':
        fmtQ(text);
        return;
      default:
        badVerb(verb, Value::ofString(std::string(text)));
    }
  }

  void fmtBool(bool flag, char32_t verb) {
    if (verb == 't' || verb == 'v') {
      pad(flag ? "true" : "false");
    } else {
      badVerb(verb, Value::ofBool(flag));
    }
  }

  void fmtInt(std::int64_t number, char32_t verb) {
    const auto u = static_cast<std::uint64_t>(number);
    switch (verb) {
      case 'v':
      case 'd':
        fmtInteger(u, 10, verb, kLowerHex);
        return;
      case 'b':
        fmtInteger(u, 2, verb, kLowerHex);
        return;
      case 'o':
      case 'O':
        fmtInteger(u, 8, verb, kLowerHex);
        return;
      case 'x':
        fmtInteger(u, 16, verb, kLowerHex);
        return;
      case 'X':
        fmtInteger(u, 16, verb, kUpperHex);
        return;
      case 'c': {
        std::string text;
        go::appendRune(text, u > 0x10FFFF ? go::kRuneError : static_cast<char32_t>(u));
        pad(text);
        return;
      }
      case 'q':
        pad(go::quoteRune(u > 0x10FFFF ? go::kRuneError : static_cast<char32_t>(u), f_.plus));
        return;
      case 'U':
        fmtUnicode(u);
        return;
      default:
        badVerb(verb, Value::ofInt(number));
    }
  }

  // Go's fmt.fmtInteger (signed): precision is a minimum digit count, '0' pads to the width.
  void fmtInteger(std::uint64_t u, unsigned base, char32_t verb, const char* digits) {
    const bool negative = static_cast<std::int64_t>(u) < 0;
    if (negative) u = 0 - u;
    int prec = 0;
    if (f_.prec_present) {
      prec = f_.prec;
      if (prec == 0 && u == 0) {
        const bool old_zero = f_.zero;
        f_.zero = false;
        writePadding(f_.wid);
        f_.zero = old_zero;
        return;
      }
    } else if (f_.zero && !f_.minus && f_.wid_present) {
      prec = f_.wid;
      if (negative || f_.plus || f_.space) --prec;
    }
    std::string reversed;
    do {
      reversed += digits[u % base];
      u /= base;
    } while (u > 0);
    while (static_cast<int>(reversed.size()) < prec) reversed += '0';
    if (f_.sharp) {
      if (base == 2) {
        reversed += "b0";
      } else if (base == 8) {
        if (reversed.back() != '0') reversed += '0';
      } else if (base == 16) {
        reversed += digits[16];
        reversed += '0';
      }
    }
    if (verb == 'O') reversed += "o0";
    if (negative) {
      reversed += '-';
    } else if (f_.plus) {
      reversed += '+';
    } else if (f_.space) {
      reversed += ' ';
    }
    std::reverse(reversed.begin(), reversed.end());
    const bool old_zero = f_.zero;
    f_.zero = false;
    pad(reversed);
    f_.zero = old_zero;
  }

  void fmtUnicode(std::uint64_t u) {
    int prec = 4;
    if (f_.prec_present && f_.prec > 4) prec = f_.prec;
    std::string reversed;
    const std::uint64_t original = u;
    do {
      reversed += kUpperHex[u & 0xF];
      u >>= 4;
      --prec;
    } while (u > 0);
    for (; prec > 0; --prec) reversed += '0';
    reversed += "+U";
    std::reverse(reversed.begin(), reversed.end());
    if (f_.sharp && original <= 0x10FFFF && go::isPrint(static_cast<char32_t>(original))) {
      reversed += " '";
      go::appendRune(reversed, static_cast<char32_t>(original));
      reversed += '\'';
    }
    const bool old_zero = f_.zero;
    f_.zero = false;
    pad(reversed);
    f_.zero = old_zero;
  }

  void printList(const StringList& list, char32_t verb) {
    buf += f_.sharp_v ? "[]string{" : "[";
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (i > 0) buf += f_.sharp_v ? ", " : " ";
      fmtString(list[i], verb);
    }
    buf += f_.sharp_v ? '}' : ']';
  }

  void printMap(const StringMap& map, char32_t verb) {
    buf += f_.sharp_v ? "map[string]string{" : "map[";
    bool first = true;
    for (const auto& [key, value] : map) {
      if (!first) buf += f_.sharp_v ? ", " : " ";
      first = false;
      fmtString(key, verb);
      buf += ':';
      fmtString(value, verb);
    }
    buf += f_.sharp_v ? '}' : ']';
  }

  void badVerb(char32_t verb, const Value& value) {
    buf += "%!";
    go::appendRune(buf, verb);
    buf += '(';
    if (value.kind() == Value::Kind::kNoValue) {
      buf += "<nil>";
    } else {
      buf += typeName(value);
      buf += '=';
      printArg(value, 'v');
    }
    buf += ')';
  }

  // parsenum: a decimal number at format[start, end); {value, found, position after it}.
  static std::tuple<int, bool, std::size_t> parseNum(std::string_view format, std::size_t start,
                                                     std::size_t end) {
    if (start >= end) return {0, false, end};
    int num = 0;
    bool found = false;
    std::size_t i = start;
    for (; i < end && format[i] >= '0' && format[i] <= '9'; ++i) {
      if (tooLarge(num)) return {0, false, end};  // crazy long number
      num = num * 10 + (format[i] - '0');
      found = true;
    }
    return {num, found, i};
  }

  // An explicit argument index "[n]" at format[i]: {argument, position after it, found}.
  std::tuple<std::size_t, std::size_t, bool> argNumber(std::size_t arg_num, std::string_view format,
                                                       std::size_t i, std::size_t num_args) {
    if (i >= format.size() || format[i] != '[') return {arg_num, i, false};
    reordered_ = true;
    const std::string_view rest = format.substr(i);
    if (rest.size() >= 3) {
      for (std::size_t k = 1; k < rest.size(); ++k) {
        if (rest[k] != ']') continue;
        const auto [width, ok, next] = parseNum(rest, 1, k);
        if (ok && next == k && width >= 1 && static_cast<std::size_t>(width) <= num_args) {
          return {static_cast<std::size_t>(width - 1), i + k + 1, true};
        }
        good_arg_num_ = false;
        return {arg_num, i + k + 1, ok && next == k};
      }
    }
    good_arg_num_ = false;
    return {arg_num, i + 1, false};
  }

  // A `*` width or precision: {value, ok, next argument}.
  static std::tuple<int, bool, std::size_t> intFromArg(std::span<const Value> args,
                                                       std::size_t arg_num) {
    if (arg_num >= args.size()) return {0, false, arg_num};
    const Value& arg = args[arg_num];
    if (arg.kind() != Value::Kind::kInt || tooLarge(arg.integer())) return {0, false, arg_num + 1};
    return {static_cast<int>(arg.integer()), true, arg_num + 1};
  }

  Flags f_;
  bool reordered_ = false;
  bool good_arg_num_ = true;
};

void Printer::doPrintf(std::string_view format, std::span<const Value> args) {
  const std::size_t end = format.size();
  std::size_t arg_num = 0;
  bool after_index = false;
  std::size_t i = 0;
  while (i < end) {
    good_arg_num_ = true;
    const std::size_t last = i;
    while (i < end && format[i] != '%') ++i;
    if (i > last) buf += format.substr(last, i - last);
    if (i >= end) break;
    ++i;
    f_ = Flags{};

    bool done = false;
    for (; i < end; ++i) {
      const char c = format[i];
      if (c == '#') {
        f_.sharp = true;
      } else if (c == '0') {
        f_.zero = !f_.minus;  // only pad with zeros on the left
      } else if (c == '+') {
        f_.plus = true;
      } else if (c == '-') {
        f_.minus = true;
        f_.zero = false;
      } else if (c == ' ') {
        f_.space = true;
      } else {
        if (c >= 'a' && c <= 'z' && arg_num < args.size()) {
          if (c == 'v') {
            f_.sharp_v = f_.sharp;
            f_.sharp = false;
            f_.plus_v = f_.plus;
            f_.plus = false;
          }
          printArg(args[arg_num++], static_cast<char32_t>(c));
          ++i;
          done = true;
        }
        break;
      }
    }
    if (done) continue;

    std::tie(arg_num, i, after_index) = argNumber(arg_num, format, i, args.size());
    if (i < end && format[i] == '*') {
      ++i;
      std::tie(f_.wid, f_.wid_present, arg_num) = intFromArg(args, arg_num);
      if (!f_.wid_present) buf += "%!(BADWIDTH)";
      if (f_.wid < 0) {
        f_.wid = -f_.wid;
        f_.minus = true;
        f_.zero = false;
      }
      after_index = false;
    } else {
      std::tie(f_.wid, f_.wid_present, i) = parseNum(format, i, end);
      if (after_index && f_.wid_present) good_arg_num_ = false;
    }

    if (i + 1 < end && format[i] == '.') {
      ++i;
      if (after_index) good_arg_num_ = false;
      std::tie(arg_num, i, after_index) = argNumber(arg_num, format, i, args.size());
      if (i < end && format[i] == '*') {
        ++i;
        std::tie(f_.prec, f_.prec_present, arg_num) = intFromArg(args, arg_num);
        if (f_.prec < 0) {
          f_.prec = 0;
          f_.prec_present = false;
        }
        if (!f_.prec_present) buf += "%!(BADPREC)";
        after_index = false;
      } else {
        std::tie(f_.prec, f_.prec_present, i) = parseNum(format, i, end);
        if (!f_.prec_present) {
          f_.prec = 0;
          f_.prec_present = true;
        }
      }
    }

    if (!after_index)
      std::tie(arg_num, i, after_index) = argNumber(arg_num, format, i, args.size());
    if (i >= end) {
      buf += "%!(NOVERB)";
      break;
    }
    char32_t verb = 0;
    i += go::decodeRune(format, i, &verb);
    if (verb == '%') {
      buf += '%';  // absorbs no operand, ignores width and precision
    } else if (!good_arg_num_) {
      buf += "%!";
      go::appendRune(buf, verb);
      buf += "(BADINDEX)";
    } else if (arg_num >= args.size()) {
      buf += "%!";
      go::appendRune(buf, verb);
      buf += "(MISSING)";
    } else {
      if (verb == 'v') {
        f_.sharp_v = f_.sharp;
        f_.sharp = false;
        f_.plus_v = f_.plus;
        f_.plus = false;
      }
      printArg(args[arg_num++], verb);
    }
  }

  if (!reordered_ && arg_num < args.size()) {
    f_ = Flags{};
    buf += "%!(EXTRA ";
    for (std::size_t k = arg_num; k < args.size(); ++k) {
      if (k > arg_num) buf += ", ";
      if (args[k].kind() == Value::Kind::kNoValue) {
        buf += "<nil>";
      } else {
        buf += typeName(args[k]);
        buf += '=';
        printArg(args[k], 'v');
      }
    }
    buf += ')';
  }
  if (buf.size() > kMaxOutputBytes) {
    throw ExecError("result longer than " + std::to_string(kMaxOutputBytes) + " bytes");
  }
}

}  // namespace

std::string goSprint(std::span<const Value> args) {
  Printer printer;
  printer.doPrint(args, false);
  return std::move(printer.buf);
}

std::string goSprintln(std::span<const Value> args) {
  Printer printer;
  printer.doPrint(args, true);
  return std::move(printer.buf);
}

std::string goSprintf(std::string_view format, std::span<const Value> args) {
  Printer printer;
  printer.doPrintf(format, args);
  return std::move(printer.buf);
}

void appendActionValue(std::string& out, const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kNoValue:
      out += "<no value>";
      return;
    case Value::Kind::kString:
      out += value.str();  // %v of a string without flags is the string itself
      return;
    default: {
      Printer printer;
      printer.printArg(value, 'v');
      out += printer.buf;
    }
  }
}

}  // namespace metrics_adapter::promql::tmpl
