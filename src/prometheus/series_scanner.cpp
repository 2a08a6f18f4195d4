#include "prometheus/series_scanner.h"

#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "metrics_adapter/text/utf8.h"
#include "prometheus/response_parsing.h"

namespace metrics_adapter::prometheus {
namespace {

constexpr std::size_t kMaxLabelsPerSeries = 10000;
// A series answer nests three levels, but unknown members are skipped whatever their depth;
// this only bounds the stack of frames.
constexpr std::size_t kMaxDepth = std::size_t{1} << 20;
constexpr std::size_t kMaxWarningsKept = 20;
constexpr std::size_t kMaxKeptTextBytes = 4096;

// A frame is a Role, plus kObjectBit for objects.
enum Role : std::uint8_t { kTop, kData, kSeries, kWarnings, kSkipped };
constexpr std::uint8_t kObjectBit = 0x80;

enum EscapeState : std::uint8_t {
  kNoEscape,
  kEscapeStart,         // after '\'
  kEscapeHex,           // in the four digits of \uXXXX
  kEscapeLowBackslash,  // after a high surrogate: '\' of the low one is due
  kEscapeLowU,          // then 'u'
  kEscapeLowHex,        // then its four digits
};

enum NumberState : std::uint8_t {
  kMinus,      // '-'
  kZero,       // a leading 0
  kInteger,    // 1-9 then digits
  kDot,        // '.' with no digit after it yet
  kFraction,   // digits after '.'
  kE,          // 'e' or 'E'
  kESign,      // the exponent's sign
  kExponent,   // exponent digits
  kNumberEnd,  // the byte read is not part of the number, which is complete
  kNumberBad,  // the number is malformed
};

enum CharClass : std::uint8_t { kCharZero, kCharDigit, kCharDot, kCharE, kCharSign, kCharOther };

// JSON's number grammar: the state after a byte of each class, by state.
constexpr std::uint8_t kNumberNext[kNumberEnd][kCharOther + 1] = {
    /* kMinus */ {kZero, kInteger, kNumberBad, kNumberBad, kNumberBad, kNumberBad},
    /* kZero */ {kNumberEnd, kNumberEnd, kDot, kE, kNumberEnd, kNumberEnd},
    /* kInteger */ {kInteger, kInteger, kDot, kE, kNumberEnd, kNumberEnd},
    /* kDot */ {kFraction, kFraction, kNumberBad, kNumberBad, kNumberBad, kNumberBad},
    /* kFraction */ {kFraction, kFraction, kNumberEnd, kE, kNumberEnd, kNumberEnd},
    /* kE */ {kExponent, kExponent, kNumberBad, kNumberBad, kESign, kNumberBad},
    /* kESign */ {kExponent, kExponent, kNumberBad, kNumberBad, kNumberBad, kNumberBad},
    /* kExponent */ {kExponent, kExponent, kNumberEnd, kNumberEnd, kNumberEnd, kNumberEnd},
};

CharClass charClass(char c) {
  if (c == '0') return kCharZero;
  if (c >= '1' && c <= '9') return kCharDigit;
  if (c == '.') return kCharDot;
  if (c == 'e' || c == 'E') return kCharE;
  if (c == '+' || c == '-') return kCharSign;
  return kCharOther;
}

constexpr std::string_view kUnexpected = "unexpected Prometheus series answer: ";

// Bytes that end a plain run inside a string: '"', '\', control characters and non-ASCII.
constexpr bool isSpecial(unsigned char c) { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80; }

// The first special byte in [p, end), or end: sixteen bytes at a time with SSE2 (every x86-64
// has it; a signed byte below 0x20 is a control character or, negative, non-ASCII), else eight
// at a time in a 64-bit word. In each word test a flag can be wrong only in a byte above a byte
// rightly flagged, so the lowest flag is exact.
const char* findSpecial(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  while (end - p >= 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i special =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                     _mm_cmplt_epi8(x, space));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
    if (mask != 0) return p + std::countr_zero(mask);
    p += 16;
  }
#endif
  if constexpr (std::endian::native == std::endian::little) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
    while (end - p >= 8) {
      std::uint64_t x;
      std::memcpy(&x, p, sizeof x);
      const std::uint64_t quote = x ^ (kOnes * '"');
      const std::uint64_t backslash = x ^ (kOnes * '\\');
      const std::uint64_t flags = (((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash) |
                                   ((x - kOnes * 0x20) & ~x) | x) &
                                  kHighs;
      if (flags != 0) return p + (std::countr_zero(flags) >> 3);
      p += 8;
    }
  }
  while (p < end && !isSpecial(static_cast<unsigned char>(*p))) ++p;
  return p;
}

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

std::string describe(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte > 0x20 && byte < 0x7f) return std::string("'") + c + "'";
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string("byte 0x") + kHex[byte >> 4] + kHex[byte & 0xf];
}

}  // namespace

SeriesScanner::SeriesScanner(const SeriesVisitor& visitor, const std::function<void()>& on_token)
    : visitor_(visitor), on_token_(on_token), has_token_hook_(static_cast<bool>(on_token)) {}

void SeriesScanner::feed(std::string_view chunk) {
  const char* p = chunk.data();
  const char* const end = p + chunk.size();
  chunk_start_ = p;
  while (p < end) {
    switch (lexeme_) {
      case Lexeme::kNone:
        if (*p == '"' && expectsLabelKey()) {
          const char* const after = scanLabels(p, end);
          if (after != p) {
            p = after;
            break;
          }
        }
        p = structural(p);
        break;
      case Lexeme::kString:
        p = scanString(p, end);
        break;
      case Lexeme::kNumber:
        p = scanNumber(p, end);
        break;
      case Lexeme::kLiteral:
        p = scanLiteral(p, end);
        break;
    }
  }
  consumed_ += chunk.size();
}

const char* SeriesScanner::structural(const char* p) {
  const char c = *p;
  switch (c) {
    case ' ':
    case '\t':
    case '\n':
    case '\r':
      return p + 1;
    case '"':
      beginString(p);
      return p + 1;
    case '{':
    case '[':
      if (expect_ != Expect::kValue && expect_ != Expect::kValueOrClose) {
        syntaxError(p, "unexpected " + describe(c));
      }
      openContainer(c == '{');
      return p + 1;
    case '}':
    case ']': {
      const bool is_object = c == '}';
      const bool closes =
          expect_ == (is_object ? Expect::kKeyOrClose : Expect::kValueOrClose) ||
          (expect_ == Expect::kCommaOrClose && ((frames_.back() & kObjectBit) != 0) == is_object);
      if (!closes) syntaxError(p, "unexpected " + describe(c));
      closeContainer();
      return p + 1;
    }
    case ',':
      if (expect_ != Expect::kCommaOrClose) syntaxError(p, "unexpected ','");
      expect_ = (frames_.back() & kObjectBit) != 0 ? Expect::kKey : Expect::kValue;
      return p + 1;
    case ':':
      if (expect_ != Expect::kColon) syntaxError(p, "unexpected ':'");
      expect_ = Expect::kValue;
      return p + 1;
    default:
      break;
  }
  if (expect_ != Expect::kValue && expect_ != Expect::kValueOrClose) {
    syntaxError(p, "unexpected " + describe(c));
  }
  if (c == 't' || c == 'f' || c == 'n') {
    literal_ = c == 't' ? "true" : (c == 'f' ? "false" : "null");
    literal_matched_ = 0;
    lexeme_ = Lexeme::kLiteral;
  } else if (c == '-' || isDigit(c)) {
    number_state_ = c == '-' ? kMinus : (c == '0' ? kZero : kInteger);
    lexeme_ = Lexeme::kNumber;
    ++p;
  } else {
    syntaxError(p, "unexpected " + describe(c));
  }
  if (frames_.empty()) fail(std::string(kUnexpected) + "not a JSON object");
  return p;
}

bool SeriesScanner::expectsLabelKey() const {
  return (expect_ == Expect::kKeyOrClose || expect_ == Expect::kKey) &&
         frames_.back() == (kSeries | kObjectBit);
}

// The shortcut for what nearly every series is made of: "name":"value" pairs of plain ASCII
// (no escapes, no control characters), with no whitespace around ':' and ','. Such a pair needs
// none of the byte-by-byte state, so it is taken whole, straight from the chunk; anything else
// (and a pair cut by the end of the chunk) is left where it starts for the general path, which
// then reads it, reports its errors or keeps its state across chunks. `p` is at the '"' of a key.
const char* SeriesScanner::scanLabels(const char* p, const char* const end) {
  while (true) {
    const char* const key = p + 1;
    const char* const key_end = findSpecial(key, end);
    if (end - key_end < 3 || key_end[0] != '"' || key_end[1] != ':' || key_end[2] != '"') return p;
    const char* const value = key_end + 3;
    const char* const value_end = findSpecial(value, end);
    if (value_end == end || *value_end != '"') return p;

    const std::string_view name(key, static_cast<std::size_t>(key_end - key));
    tick();  // the key
    if (name == "__name__") {
      metric_name_.assign(value, value_end);
    } else {
      if (label_spans_.size() >= kMaxLabelsPerSeries) failTooManyLabels();
      label_spans_.emplace_back(label_text_.size(), name.size());
      label_text_.append(name);
    }
    tick();  // the value
    expect_ = Expect::kCommaOrClose;
    p = value_end + 1;
    if (end - p < 2 || p[0] != ',' || p[1] != '"') return p;
    expect_ = Expect::kKey;
    ++p;
  }
}

void SeriesScanner::beginString(const char* p) {
  sink_ = nullptr;
  if (expect_ == Expect::kKeyOrClose || expect_ == Expect::kKey) {
    const auto role = frames_.back() & ~kObjectBit;
    if (role == kTop) {
      string_role_ = StringRole::kTopKey;
      top_key_.clear();
      sink_ = &top_key_;
    } else if (role == kSeries) {
      string_role_ = StringRole::kLabelKey;
      key_start_ = label_text_.size();
      sink_ = &label_text_;
    } else {
      string_role_ = StringRole::kSkippedKey;
    }
  } else if (expect_ == Expect::kValue || expect_ == Expect::kValueOrClose) {
    if (frames_.empty()) fail(std::string(kUnexpected) + "not a JSON object");
    switch (frames_.back() & ~kObjectBit) {
      case kTop:
        if (top_key_ == "data") fail(std::string(kUnexpected) + "data is not a list");
        string_role_ = StringRole::kSkippedValue;
        if (top_key_ == "status" || top_key_ == "errorType" || top_key_ == "error") {
          string_role_ = StringRole::kTopValue;
          top_text_.clear();
          sink_ = &top_text_;
        }
        break;
      case kData:
        fail(std::string(kUnexpected) + "a series is not an object");
      case kSeries:
        if (std::string_view(label_text_).substr(key_start_) == "__name__") {
          label_text_.resize(key_start_);
          string_role_ = StringRole::kMetricName;
          metric_name_.clear();
          sink_ = &metric_name_;
        } else {
          string_role_ = StringRole::kLabelValue;
        }
        break;
      case kWarnings:
        string_role_ = StringRole::kWarning;
        if (answer_.warnings.size() < kMaxWarningsKept) {
          top_text_.clear();
          sink_ = &top_text_;
        }
        break;
      default:
        string_role_ = StringRole::kSkippedValue;
        break;
    }
  } else {
    syntaxError(p, "unexpected '\"'");
  }
  lexeme_ = Lexeme::kString;
  escape_ = kNoEscape;
  utf8_needed_ = 0;
}

const char* SeriesScanner::scanString(const char* p, const char* end) {
  while (p < end) {
    if (escape_ != kNoEscape || utf8_needed_ != 0) {
      p = stringSlowByte(p);
      continue;
    }
    const char* special = findSpecial(p, end);
    if (sink_ != nullptr && special != p) sink_->append(p, special);
    if (special == end) return end;
    const auto c = static_cast<unsigned char>(*special);
    if (c == '"') {
      lexeme_ = Lexeme::kNone;
      endString();
      return special + 1;
    }
    if (c == '\\') {
      escape_ = kEscapeStart;
    } else if (c < 0x20) {
      syntaxError(special, "control character " + describe(*special) + " in a string");
    } else {
      utf8Lead(special);
    }
    p = special + 1;
  }
  return p;
}

const char* SeriesScanner::stringSlowByte(const char* p) {
  if (escape_ != kNoEscape) {
    escapeByte(p);
    return p + 1;
  }
  const auto c = static_cast<unsigned char>(*p);
  if (c < utf8_low_ || c > utf8_high_) syntaxError(p, "invalid UTF-8 in a string");
  if (sink_ != nullptr) sink_->push_back(*p);
  utf8_low_ = 0x80;
  utf8_high_ = 0xBF;
  --utf8_needed_;
  return p + 1;
}

void SeriesScanner::utf8Lead(const char* p) {
  // The bounds come from the one UTF-8 table (text::utf8Lead); the scanner only keeps them as
  // state, because a sequence may continue in the next chunk.
  const text::Utf8Lead lead = text::utf8Lead(static_cast<unsigned char>(*p));
  if (lead.length < 2) syntaxError(p, "invalid UTF-8 in a string");
  utf8_needed_ = static_cast<std::uint8_t>(lead.length - 1);
  utf8_low_ = lead.second_min;
  utf8_high_ = lead.second_max;
  if (sink_ != nullptr) sink_->push_back(*p);
}

void SeriesScanner::escapeByte(const char* p) {
  const char c = *p;
  switch (escape_) {
    case kEscapeStart: {
      char decoded = 0;
      switch (c) {
        case '"':
        case '\\':
        case '/':
          decoded = c;
          break;
        case 'b':
          decoded = '\b';
          break;
        case 'f':
          decoded = '\f';
          break;
        case 'n':
          decoded = '\n';
          break;
        case 'r':
          decoded = '\r';
          break;
        case 't':
          decoded = '\t';
          break;
        case 'u':
          escape_ = kEscapeHex;
          hex_digits_ = 0;
          code_unit_ = 0;
          return;
        default:
          syntaxError(p, "invalid escape \\" + describe(c));
      }
      if (sink_ != nullptr) sink_->push_back(decoded);
      escape_ = kNoEscape;
      return;
    }
    case kEscapeHex:
    case kEscapeLowHex: {
      const int value = hexValue(c);
      if (value < 0) syntaxError(p, "invalid \\u escape");
      code_unit_ = code_unit_ * 16 + static_cast<std::uint32_t>(value);
      if (++hex_digits_ < 4) return;
      const bool is_low = code_unit_ >= 0xDC00 && code_unit_ <= 0xDFFF;
      if (escape_ == kEscapeLowHex) {
        if (!is_low) syntaxError(p, "a high surrogate must be followed by a low surrogate");
        appendCodePoint(0x10000 + ((high_surrogate_ - 0xD800) << 10) + (code_unit_ - 0xDC00));
      } else if (code_unit_ >= 0xD800 && code_unit_ <= 0xDBFF) {
        high_surrogate_ = code_unit_;
        escape_ = kEscapeLowBackslash;
        return;
      } else if (is_low) {
        syntaxError(p, "a low surrogate must follow a high surrogate");
      } else {
        appendCodePoint(code_unit_);
      }
      escape_ = kNoEscape;
      return;
    }
    case kEscapeLowBackslash:
    case kEscapeLowU:
      if (c != (escape_ == kEscapeLowBackslash ? '\\' : 'u')) {
        syntaxError(p, "a high surrogate must be followed by a low surrogate");
      }
      if (escape_ == kEscapeLowU) {
        hex_digits_ = 0;
        code_unit_ = 0;
      }
      escape_ = escape_ == kEscapeLowBackslash ? kEscapeLowU : kEscapeLowHex;
      return;
    default:
      return;
  }
}

void SeriesScanner::appendCodePoint(std::uint32_t code_point) {
  if (sink_ == nullptr) return;
  if (code_point < 0x80) {
    sink_->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    sink_->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    sink_->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    sink_->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    sink_->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    sink_->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    sink_->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    sink_->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    sink_->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    sink_->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

void SeriesScanner::endString() {
  tick();
  switch (string_role_) {
    case StringRole::kTopKey:
    case StringRole::kLabelKey:
    case StringRole::kSkippedKey:
      expect_ = Expect::kColon;
      return;
    case StringRole::kTopValue:
      if (top_key_ == "status") {
        status_ = sanitizeLine(top_text_, kMaxKeptTextBytes);
      } else if (top_key_ == "errorType") {
        error_type_ = top_text_.substr(0, kMaxKeptTextBytes);
      } else {
        error_ = top_text_.substr(0, kMaxKeptTextBytes);
      }
      break;
    case StringRole::kLabelValue:
      if (label_spans_.size() >= kMaxLabelsPerSeries) failTooManyLabels();
      label_spans_.emplace_back(key_start_, label_text_.size() - key_start_);
      break;
    case StringRole::kWarning:
      if (sink_ != nullptr) answer_.warnings.push_back(sanitizeLine(top_text_, kMaxKeptTextBytes));
      break;
    case StringRole::kMetricName:
    case StringRole::kSkippedValue:
      break;
  }
  valueDone();
}

const char* SeriesScanner::scanNumber(const char* p, const char* end) {
  for (; p < end; ++p) {
    const std::uint8_t next = kNumberNext[number_state_][charClass(*p)];
    if (next == kNumberBad) syntaxError(p, "invalid number");
    if (next == kNumberEnd) {
      lexeme_ = Lexeme::kNone;
      endScalar(false);
      return p;  // the byte after the number is read as structure
    }
    number_state_ = next;
  }
  return p;
}

const char* SeriesScanner::scanLiteral(const char* p, const char* end) {
  for (; p < end; ++p) {
    if (*p != literal_[literal_matched_]) syntaxError(p, "invalid literal");
    if (++literal_matched_ == literal_.size()) {
      lexeme_ = Lexeme::kNone;
      endScalar(literal_ == "null");
      return p + 1;
    }
  }
  return p;
}

void SeriesScanner::openContainer(bool is_object) {
  tick();
  if (frames_.size() >= kMaxDepth) {
    fail("cannot decode Prometheus series answer: JSON nested deeper than " +
         std::to_string(kMaxDepth) + " levels");
  }
  const std::uint8_t object_bit = is_object ? kObjectBit : 0;
  if (frames_.empty()) {
    if (!is_object) fail(std::string(kUnexpected) + "not a JSON object");
    frames_.push_back(kTop | kObjectBit);
  } else {
    switch (frames_.back() & ~kObjectBit) {
      case kTop:
        if (top_key_ == "data") {
          if (is_object) fail(std::string(kUnexpected) + "data is not a list");
          frames_.push_back(kData);
        } else if (top_key_ == "warnings" && !is_object) {
          frames_.push_back(kWarnings);
        } else {
          frames_.push_back(kSkipped | object_bit);
        }
        break;
      case kData:
        if (!is_object) fail(std::string(kUnexpected) + "a series is not an object");
        frames_.push_back(kSeries | kObjectBit);
        metric_name_.clear();
        label_text_.clear();
        label_spans_.clear();
        break;
      case kSeries:
        fail(std::string(kUnexpected) + "a label value is not a string");
      default:
        frames_.push_back(kSkipped | object_bit);
        break;
    }
  }
  expect_ = is_object ? Expect::kKeyOrClose : Expect::kValueOrClose;
}

void SeriesScanner::closeContainer() {
  tick();
  const std::uint8_t closed = frames_.back();
  frames_.pop_back();
  if ((closed & ~kObjectBit) == kSeries) {
    label_views_.clear();
    for (const auto& [start, size] : label_spans_) {
      label_views_.emplace_back(label_text_.data() + start, size);
    }
    visitor_(metric_name_, label_views_);
    ++answer_.series;
  }
  valueDone();
}

void SeriesScanner::endScalar(bool is_null) {
  tick();
  switch (frames_.back() & ~kObjectBit) {
    case kTop:
      // data: null is what Prometheus sends when nothing matched.
      if (top_key_ == "data" && !is_null) fail(std::string(kUnexpected) + "data is not a list");
      break;
    case kData:
      fail(std::string(kUnexpected) + "a series is not an object");
    case kSeries:
      fail(std::string(kUnexpected) + "a label value is not a string");
    default:
      break;
  }
  valueDone();
}

void SeriesScanner::valueDone() {
  expect_ = frames_.empty() ? Expect::kEnd : Expect::kCommaOrClose;
}

SeriesAnswer SeriesScanner::finish() {
  if (lexeme_ != Lexeme::kNone || expect_ != Expect::kEnd) {
    fail(consumed_ == 0
             ? "cannot decode Prometheus series answer: empty input"
             : "cannot decode Prometheus series answer: unexpected end of input at byte " +
                   std::to_string(consumed_));
  }
  if (!status_) fail(std::string(kUnexpected) + "no status");
  if (*status_ == "error") {
    nlohmann::json error_document = nlohmann::json::object();
    if (error_type_) error_document["errorType"] = *error_type_;
    if (error_) error_document["error"] = *error_;
    throw PrometheusError(PrometheusError::Kind::kApiError, 0, apiErrorText(error_document));
  }
  if (*status_ != "success") {
    fail(std::string(kUnexpected) + "status \"" + sanitizeLine(*status_, 64) + "\"");
  }
  return std::move(answer_);
}

void SeriesScanner::syntaxError(const char* p, std::string_view what) const {
  fail("cannot decode Prometheus series answer: " + std::string(what) + " at byte " +
       std::to_string(consumed_ + static_cast<std::size_t>(p - chunk_start_)));
}

void SeriesScanner::failTooManyLabels() {
  fail(std::string(kUnexpected) + "a series has more than " + std::to_string(kMaxLabelsPerSeries) +
       " labels");
}

void SeriesScanner::fail(const std::string& message) {
  throw PrometheusError(PrometheusError::Kind::kBadResponse, 0, message);
}

}  // namespace metrics_adapter::prometheus
