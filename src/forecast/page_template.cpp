#include "forecast/page_template.h"

#include <stdexcept>

namespace metrics_adapter::forecast {
namespace {

const std::string& valueOf(const std::map<std::string_view, std::string>& values,
                           std::string_view name) {
  static const std::string kEmpty;
  auto found = values.find(name);
  return found == values.end() ? kEmpty : found->second;
}

}  // namespace

std::string fillPageTemplate(std::string_view page,
                             const std::map<std::string_view, std::string>& values) {
  std::string out;
  out.reserve(page.size() + valueOf(values, "series").size());
  std::size_t at = 0;
  while (at < page.size()) {
    const std::size_t open = page.find("{{", at);
    if (open == std::string_view::npos) {
      out.append(page.substr(at));
      break;
    }
    out.append(page.substr(at, open - at));
    const std::size_t close = page.find("}}", open);
    if (close == std::string_view::npos) throw std::logic_error("page template: unclosed {{");
    const std::string_view tag = page.substr(open + 2, close - open - 2);
    at = close + 2;
    if (tag.starts_with('?')) {
      const std::string_view name = tag.substr(1);
      const std::string end = "{{/" + std::string(name) + "}}";
      const std::size_t block_end = page.find(end, at);
      if (block_end == std::string_view::npos) {
        throw std::logic_error("page template: {{?" + std::string(name) + "}} is not closed");
      }
      if (!valueOf(values, name).empty()) {
        out += fillPageTemplate(page.substr(at, block_end - at), values);
      }
      at = block_end + end.size();
    } else if (tag.starts_with('/')) {
      throw std::logic_error("page template: {{" + std::string(tag) + "}} closes nothing");
    } else {
      out += valueOf(values, tag);
    }
  }
  return out;
}

}  // namespace metrics_adapter::forecast
