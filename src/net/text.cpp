#include "metrics_adapter/net/text.h"

#include "metrics_adapter/text/utf8.h"

namespace metrics_adapter::net {
std::string sanitizeLine(std::string_view text, std::size_t max_bytes) {
  std::string out;
  bool cut = false;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t length = text::utf8SequenceLength(text, i);
    std::string_view piece;
    bool control = false;
    if (length == 0) {
      piece = "?";
      length = 1;
    } else if (c < 0x20 || c == 0x7F) {
      piece = " ";
      control = true;
    } else {
      piece = text.substr(i, length);
    }
    i += length;
    if (control && (out.empty() || out.back() == ' ')) continue;
    if (out.size() + piece.size() > max_bytes) {
      cut = true;
      break;
    }
    out += piece;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (cut) out += "...";
  return out;
}

}  // namespace metrics_adapter::net
