#pragma once

#include <cstddef>
#include <string_view>

// The one UTF-8 validator: every module that checks, sanitises, escapes or decodes UTF-8 asks
// these functions which byte sequences are well formed. Header-only and constexpr, so that the
// byte loops that call them (JSON escaping, rune decoding) stay as fast as a local copy.
namespace metrics_adapter::text {

// What a lead byte allows (the Unicode standard's table of well-formed UTF-8 byte sequences):
// `length` bytes in all (1 for ASCII, 0 when the byte cannot start a sequence), the second byte
// in [second_min, second_max] and any further bytes in [0x80, 0xBF]. The second-byte bounds are
// what exclude overlong forms, surrogates and code points above U+10FFFF.
struct Utf8Lead {
  std::size_t length = 0;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
};

constexpr Utf8Lead utf8Lead(unsigned char lead) {
  if (lead < 0x80) return {1, 0x80, 0xBF};
  if (lead >= 0xC2 && lead <= 0xDF) return {2, 0x80, 0xBF};
  if (lead == 0xE0) return {3, 0xA0, 0xBF};  // no overlong forms
  if (lead == 0xED) return {3, 0x80, 0x9F};  // no surrogates
  if (lead >= 0xE1 && lead <= 0xEF) return {3, 0x80, 0xBF};
  if (lead == 0xF0) return {4, 0x90, 0xBF};  // no overlong forms
  if (lead == 0xF4) return {4, 0x80, 0x8F};  // nothing past U+10FFFF
  if (lead >= 0xF1 && lead <= 0xF3) return {4, 0x80, 0xBF};
  return {0, 0x80, 0xBF};
}

constexpr bool isUtf8Continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// Length in bytes of the well-formed UTF-8 sequence that starts at text[i], or 0 when the bytes
// there are not valid UTF-8 (a stray continuation byte, an overlong form, a surrogate, a code
// point above U+10FFFF, or a sequence cut short by the end of `text`). 0 also when i is past
// the end.
constexpr std::size_t utf8SequenceLength(std::string_view text, std::size_t i) {
  if (i >= text.size()) return 0;
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const Utf8Lead lead = utf8Lead(byte(0));
  if (lead.length <= 1) return lead.length;
  if (text.size() - i < lead.length) return 0;
  if (byte(1) < lead.second_min || byte(1) > lead.second_max) return 0;
  for (std::size_t k = 2; k < lead.length; ++k) {
    if (!isUtf8Continuation(byte(k))) return 0;
  }
  return lead.length;
}

// Whether all of `text` is well-formed UTF-8.
constexpr bool isValidUtf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8SequenceLength(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

}  // namespace metrics_adapter::text
