#pragma once

#include <cstddef>
#include <string>
#include <string_view>

// The parts of Go's unicode/utf8, unicode and strconv packages that the label matchers and the
// template engine need, so that both spell strings the way Go (and thus Prometheus) does.
namespace metrics_adapter::promql::go {

inline constexpr char32_t kRuneError = 0xFFFD;

// Decodes the rune at `text[i]` (i < size) like Go's utf8.DecodeRuneInString: overlong forms,
// surrogates, values above U+10FFFF and truncated sequences are invalid and yield kRuneError
// with width 1. Returns the width in bytes.
std::size_t decodeRune(std::string_view text, std::size_t i, char32_t* rune);

// Number of runes in `text`, counting each invalid byte as one.
std::size_t runeCount(std::string_view text);

// Appends the UTF-8 form of `rune`; invalid runes (surrogates, > U+10FFFF) become U+FFFD.
void appendRune(std::string& out, char32_t rune);

// Approximates Go's unicode.IsPrint (letters, marks, numbers, punctuation, symbols, ASCII
// space). Scattered unassigned code points inside assigned blocks count as printable.
bool isPrint(char32_t rune);

struct QuoteStyle {
  char quote = '"';
  bool ascii_only = false;  // QuoteToASCII: every non-ASCII rune escaped
  // Escape U+FFFD although Go keeps it: Prometheus's lexer reads a literal U+FFFD in a query
  // as invalid UTF-8, so a PromQL string literal must spell it \ufffd.
  bool escape_rune_error = false;
};

// Appends `rune` (a valid rune) as it stands inside a Go literal quoted with `style`: the
// quote and backslash escaped, \a \b \f \n \r \t \v, other controls as \xNN, non-printable
// runes as \uNNNN or \UNNNNNNNN, everything else verbatim.
void appendEscapedRune(std::string& out, char32_t rune, const QuoteStyle& style);

// Go's strconv.Quote (QuoteToASCII with `ascii_only`), with `style.quote` around the text;
// invalid UTF-8 bytes become \xNN.
std::string quote(std::string_view text, const QuoteStyle& style);

// Go's strconv.QuoteRune (QuoteRuneToASCII with `ascii_only`); invalid runes become U+FFFD.
std::string quoteRune(char32_t rune, bool ascii_only);

// Go's strconv.CanBackquote: no control characters other than tab, no backquote, valid UTF-8,
// no byte order mark.
bool canBackquote(std::string_view text);

}  // namespace metrics_adapter::promql::go
