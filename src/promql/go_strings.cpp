#include "promql/go_strings.h"

#include <array>
#include <cstdint>

#include "metrics_adapter/text/utf8.h"

namespace metrics_adapter::promql::go {
namespace {

constexpr char kLowerHex[] = "0123456789abcdef";
constexpr char32_t kMaxRune = 0x10FFFF;

struct CodePointRange {
  char32_t first;
  char32_t last;
};

// Code points >= U+00A0 that Go's unicode.IsPrint rejects: spaces other than U+0020, format
// characters (bidi controls, zero-width characters, BOM, tags), surrogates, private use,
// noncharacters and the large unassigned tail of the code space. Scattered unassigned code
// points inside assigned blocks are kept verbatim, which Go would escape; that only changes
// the spelling of a quoted string, never its meaning or the validity of the PromQL.
constexpr std::array<CodePointRange, 25> kNotPrintable = {{
    {0x00A0, 0x00A0},    {0x00AD, 0x00AD},   {0x0600, 0x0605},   {0x061C, 0x061C},
    {0x06DD, 0x06DD},    {0x070F, 0x070F},   {0x0890, 0x0891},   {0x08E2, 0x08E2},
    {0x1680, 0x1680},    {0x180E, 0x180E},   {0x2000, 0x200F},   {0x2028, 0x202F},
    {0x205F, 0x206F},    {0x3000, 0x3000},   {0xD800, 0xF8FF},   {0xFDD0, 0xFDEF},
    {0xFEFF, 0xFEFF},    {0xFFF0, 0xFFFB},   {0x110BD, 0x110BD}, {0x110CD, 0x110CD},
    {0x13430, 0x1343F},  {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0x323B0, 0xE00FF},
    {0xE01F0, 0x10FFFF},
}};

bool isValidRune(char32_t rune) { return rune <= kMaxRune && (rune < 0xD800 || rune > 0xDFFF); }

void appendHexEscape(std::string& out, char kind, std::uint32_t value, int digits) {
  out += '\\';
  out += kind;
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4)
    out += kLowerHex[(value >> shift) & 0xF];
}

}  // namespace

std::size_t decodeRune(std::string_view text, std::size_t i, char32_t* rune) {
  // Which sequences are well formed is text::utf8SequenceLength's to say; this only adds the
  // value bits.
  const std::size_t width = text::utf8SequenceLength(text, i);
  if (width == 0) {
    *rune = kRuneError;
    return 1;
  }
  static constexpr unsigned char kLeadBits[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  char32_t value = static_cast<unsigned char>(text[i]) & kLeadBits[width];
  for (std::size_t k = 1; k < width; ++k) {
    value = (value << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  }
  *rune = value;
  return width;
}

std::size_t runeCount(std::string_view text) {
  std::size_t count = 0;
  char32_t rune = 0;
  for (std::size_t i = 0; i < text.size(); i += decodeRune(text, i, &rune)) ++count;
  return count;
}

void appendRune(std::string& out, char32_t rune) {
  if (!isValidRune(rune)) rune = kRuneError;
  if (rune < 0x80) {
    out += static_cast<char>(rune);
  } else if (rune < 0x800) {
    out += static_cast<char>(0xC0 | (rune >> 6));
    out += static_cast<char>(0x80 | (rune & 0x3F));
  } else if (rune < 0x10000) {
    out += static_cast<char>(0xE0 | (rune >> 12));
    out += static_cast<char>(0x80 | ((rune >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (rune & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (rune >> 18));
    out += static_cast<char>(0x80 | ((rune >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((rune >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (rune & 0x3F));
  }
}

bool isPrint(char32_t rune) {
  if (rune < 0x80) return rune >= 0x20 && rune < 0x7F;
  if (rune < 0xA0) return false;                // C1 controls
  if ((rune & 0xFFFE) == 0xFFFE) return false;  // U+xxFFFE and U+xxFFFF are noncharacters
  for (const CodePointRange& range : kNotPrintable) {
    if (rune >= range.first && rune <= range.last) return false;
  }
  return true;
}

void appendEscapedRune(std::string& out, char32_t rune, const QuoteStyle& style) {
  if (rune == static_cast<char32_t>(style.quote) || rune == '\\') {
    out += '\\';
    out += static_cast<char>(rune);
    return;
  }
  const bool verbatim = isPrint(rune) && !(style.ascii_only && rune >= 0x80) &&
                        !(style.escape_rune_error && rune == kRuneError);
  if (verbatim) {
    appendRune(out, rune);
    return;
  }
  switch (rune) {
    case '\a':
      out += "\\a";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\f':
      out += "\\f";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\v':
      out += "\\v";
      return;
    default:
      break;
  }
  if (rune < 0x20 || rune == 0x7F) {
    appendHexEscape(out, 'x', rune, 2);
  } else if (rune < 0x10000) {
    appendHexEscape(out, 'u', rune, 4);
  } else {
    appendHexEscape(out, 'U', rune, 8);
  }
}

std::string quote(std::string_view text, const QuoteStyle& style) {
  std::string out;
  out.reserve(text.size() + 2);
  out += style.quote;
  for (std::size_t i = 0; i < text.size();) {
    char32_t rune = 0;
    const std::size_t width = decodeRune(text, i, &rune);
    if (width == 1 && rune == kRuneError) {
      appendHexEscape(out, 'x', static_cast<unsigned char>(text[i]), 2);
    } else {
      appendEscapedRune(out, rune, style);
    }
    i += width;
  }
  out += style.quote;
  return out;
}

std::string quoteRune(char32_t rune, bool ascii_only) {
  if (!isValidRune(rune)) rune = kRuneError;
  const QuoteStyle style{.quote = '\'', .ascii_only = ascii_only};
  std::string out(1, style.quote);
  appendEscapedRune(out, rune, style);
  out += style.quote;
  return out;
}

bool canBackquote(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    char32_t rune = 0;
    const std::size_t width = decodeRune(text, i, &rune);
    i += width;
    if (width > 1) {
      if (rune == 0xFEFF) return false;
      continue;
    }
    if (rune == kRuneError) return false;
    if ((rune < ' ' && rune != '\t') || rune == '`' || rune == 0x7F) return false;
  }
  return true;
}

}  // namespace metrics_adapter::promql::go
