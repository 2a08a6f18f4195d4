#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "app/process_tuning.h"
#include "cli/commands.h"
#include "cli/dry_run.h"
#include "metrics_adapter/app/adapter.h"
#include "metrics_adapter/app/flags.h"
#include "metrics_adapter/logging/logging.h"

namespace {

namespace app = metrics_adapter::app;
namespace cli = metrics_adapter::cli;

// For the commands that run once and report on stdout: library warnings go to stderr, so stdout
// is only the report.
void logWarningsToStderr() {
  spdlog::set_default_logger(spdlog::stderr_color_mt("metrics-adapter"));
  spdlog::set_level(spdlog::level::warn);
}

std::string serverUsage() { return app::usage(); }

// Installed as kubectl-metrics_adapter, the binary is a kubectl plugin: `kubectl metrics-adapter
// doctor ...` runs it with the words after the plugin's name. It runs commands only, never a
// server from a person's shell; --version and --help answer as kubectl users expect.
int runPlugin(std::vector<std::string> args) {
  if (!args.empty() && (args[0] == "--version" || args[0] == "-v")) args[0] = "version";
  if (args.empty() || args[0] == "--help" || args[0] == "-h") args = {"help"};
  if (args[0] == "help" && args.size() == 1) {
    std::cout << "usage: kubectl metrics-adapter COMMAND [flags]\n\n" << cli::commandsUsage();
    return 0;
  }
  logWarningsToStderr();
  return cli::runCommand(args, serverUsage(), std::cout, std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const std::string_view program(argv[0]);
  if (program.substr(program.rfind('/') + 1) == "kubectl-metrics_adapter") {
    return runPlugin(std::move(args));
  }
  // A command runs once and prints to stdout; anything else starts the server.
  if (!args.empty() && cli::isCommandWord(args[0])) {
    logWarningsToStderr();
    return cli::runCommand(args, serverUsage(), std::cout, std::cerr);
  }
  app::AdapterOptions options;
  try {
    options = app::parseFlags(args);
  } catch (const app::FlagError& e) {
    std::cerr << "metrics-adapter: " << e.what() << "\n(run with --help for the flags)\n";
    return 1;
  }
  if (options.show_help) {
    std::cout << serverUsage() << "\n" << cli::commandsUsage();
    return 0;
  }
  if (options.show_version) {
    std::cout << "metrics-adapter " << MA_VERSION << "\n";
    return 0;
  }
  if (options.dry_run) {
    logWarningsToStderr();
    return cli::runDryRun(options, std::cout, std::cerr);
  }
  try {
    metrics_adapter::logging::configureLogging(options.log);  // opens --log_file / --log_dir
  } catch (const std::invalid_argument& e) {
    std::cerr << "metrics-adapter: " << e.what() << "\n";
    return 1;
  }
  app::tuneProcessForServing();
  return app::runAdapter(options);
}
