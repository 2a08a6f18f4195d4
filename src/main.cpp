#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "app/check_config.h"
#include "app/doctor.h"
#include "app/dry_run.h"
#include "app/explain.h"
#include "app/forecast_command.h"
#include "app/process_tuning.h"
#include "metrics_adapter/app/adapter.h"
#include "metrics_adapter/app/flags.h"
#include "metrics_adapter/logging/logging.h"

namespace {

// For the commands that run once and report on stdout: library warnings go to stderr, so stdout
// is only the report.
void logWarningsToStderr() {
  spdlog::set_default_logger(spdlog::stderr_color_mt("metrics-adapter"));
  spdlog::set_level(spdlog::level::warn);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace metrics_adapter::app;
  std::vector<std::string> args(argv + 1, argv + argc);
  // Installed as kubectl-metrics_adapter, the binary is a kubectl plugin: `kubectl
  // metrics-adapter doctor ...` runs it with the words after the plugin's name, and it must never
  // start a server from a person's shell.
  const std::string_view program(argv[0]);
  const bool as_plugin = program.substr(program.rfind('/') + 1) == "kubectl-metrics_adapter";
  if (as_plugin && (args.empty() || args[0] != "doctor")) {
    std::cerr << "usage: kubectl metrics-adapter doctor hpa NAME -n NS [--prometheus-url URL] "
                 "(kubectl metrics-adapter doctor --help for more)\n";
    return 2;
  }
  // Subcommands run once and print to stdout; anything else starts the server.
  if (!args.empty() && args[0] == "doctor") {
    logWarningsToStderr();
    return runDoctor(std::span<const std::string>(args.begin() + 1, args.end()), std::cout,
                     std::cerr);
  }
  if (!args.empty() && (args[0] == "explain" || args[0] == "check-config")) {
    logWarningsToStderr();
    std::span<const std::string> rest(args.begin() + 1, args.end());
    return args[0] == "explain" ? runExplain(rest, std::cout, std::cerr)
                                : runCheckConfig(rest, std::cout, std::cerr);
  }
  if (!args.empty() && args[0] == "forecast") {
    logWarningsToStderr();
    return runForecastCommand(std::span<const std::string>(args.begin() + 1, args.end()), std::cout,
                              std::cerr);
  }
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
  if (options.dry_run) {
    logWarningsToStderr();
    return runDryRun(options, std::cout, std::cerr);
  }
  try {
    metrics_adapter::logging::configureLogging(options.log);  // opens --log_file / --log_dir
  } catch (const std::invalid_argument& e) {
    std::cerr << "metrics-adapter: " << e.what() << "\n";
    return 1;
  }
  tuneProcessForServing();
  return runAdapter(options);
}
