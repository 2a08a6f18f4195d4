#pragma once

#include <ostream>
#include <span>
#include <string>
#include <string_view>

// The commands a person runs: `metrics-adapter <command> [flags]` (or, installed as
// kubectl-metrics_adapter, `kubectl metrics-adapter <command>`). Without a command the binary is
// the server.
namespace metrics_adapter::cli {

struct Command {
  std::string_view name;
  std::string_view summary;  // one line for the list
  int (*run)(std::span<const std::string> args, std::ostream& out, std::ostream& err);
  std::string (*usage)();
};

// Every command, in the order the list shows them.
std::span<const Command> commands();

// The list for --help and `help`: "Commands:" and a line per command, aligned.
std::string commandsUsage();

// Whether the first argument names a command to run rather than being a flag, or a word the
// server ignores as upstream's command line does (the prometheus-community chart's leading
// "/adapter"): letters, digits and '-' only, starting with a letter.
bool isCommandWord(std::string_view word);

// Runs the command args[0] with the words after it: `<command> --help` (or -h) prints its usage
// and returns 0; an unknown command is an error naming the commands, exit 2. `server_usage` is
// what `help` prints before the list (the server's flags).
int runCommand(std::span<const std::string> args, const std::string& server_usage,
               std::ostream& out, std::ostream& err);

}  // namespace metrics_adapter::cli
