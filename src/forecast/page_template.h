#pragma once

#include <map>
#include <string>
#include <string_view>

namespace metrics_adapter::forecast {

// Fills a page template kept beside the code (src/forecast/observer_page.html, embedded at build
// time): "{{name}}" is replaced by values[name], already escaped for HTML by the caller;
// "{{?name}}...{{/name}}" keeps what it encloses only when values[name] is not empty (no nesting
// of the same name). A name without a value is empty. Throws std::logic_error for a "{{" that
// opens no such tag or a block that is not closed: a broken template, found by the tests.
std::string fillPageTemplate(std::string_view page,
                             const std::map<std::string_view, std::string>& values);

}  // namespace metrics_adapter::forecast
