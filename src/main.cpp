#include <iostream>
#include <string>
#include <vector>

#include "metrics_adapter/app/adapter.h"
#include "metrics_adapter/app/flags.h"

int main(int argc, char** argv) {
  using namespace metrics_adapter::app;
  std::vector<std::string> args(argv + 1, argv + argc);
  AdapterOptions options;
  try {
    options = parseFlags(args);
  } catch (const FlagError& e) {
    std::cerr << "metrics-adapter: " << e.what() << "\n(run with --help for the flags)\n";
    return 1;
  }
  if (options.show_help) {
    std::cout << usage();
    return 0;
  }
  if (options.show_version) {
    std::cout << "metrics-adapter " << MA_VERSION << "\n";
    return 0;
  }
  configureLogging(options.verbosity);
  return runAdapter(options);
}
