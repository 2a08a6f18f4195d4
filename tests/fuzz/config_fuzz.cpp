// The rules file: operators edit it by hand and ConfigMap reloads apply it live, so any text
// must end in a config or in one ConfigError naming the file, never in a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "metrics_adapter/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace config = metrics_adapter::config;
  using metrics_adapter::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const config::AdapterConfig parsed = config::parseConfig(text, "fuzz.yaml");
    check(parsed.source == "fuzz.yaml", "the config remembers its source");
    for (const auto& [path, line] : parsed.lines) {
      check(line >= 1, "YAML lines are 1-based", path);
    }
  } catch (const config::ConfigError& error) {
    const std::string_view message = error.what();
    check(message.substr(0, 11) == "fuzz.yaml: ", "config errors name the file", message);
  }
  return 0;
}
