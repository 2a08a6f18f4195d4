#include "cli/commands.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "cli/check_config/check_config.h"
#include "cli/doctor/doctor.h"
#include "cli/explain/explain.h"
#include "cli/forecast_command.h"

namespace metrics_adapter::cli {
namespace {

std::string versionText() { return std::string("metrics-adapter ") + MA_VERSION + "\n"; }

int runVersion(std::span<const std::string> /*args*/, std::ostream& out, std::ostream& /*err*/) {
  out << versionText();
  return 0;
}

std::string versionUsage() { return "usage: metrics-adapter version\n"; }

std::string helpUsage() {
  return "usage: metrics-adapter help [COMMAND]\n"
         "       metrics-adapter COMMAND --help\n";
}

int runHelp(std::span<const std::string> args, std::ostream& out, std::ostream& err);

constexpr std::array kCommands{
    Command{"doctor",
            "follow an HPA's metrics from the request it sends to the replicas it gets, and name "
            "what is wrong",
            runDoctor, doctorUsage},
    Command{"explain",
            "show how one request is answered: the rule, the PromQL, the series and the values",
            runExplain, explainUsage},
    Command{"check-config",
            "check a config file (rules, templates, forecastRules) without starting the server",
            runCheckConfig, checkConfigUsage},
    Command{"forecast",
            "replay a forecastRule on its history: backtest figures or the observer page",
            runForecastCommand, forecastUsage},
    Command{"help", "list the commands, or show one's usage", runHelp, helpUsage},
    Command{"version", "print the version", runVersion, versionUsage},
};

const Command* findCommand(std::string_view name) {
  auto found = std::find_if(kCommands.begin(), kCommands.end(),
                            [name](const Command& command) { return command.name == name; });
  return found == kCommands.end() ? nullptr : &*found;
}

int runHelp(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  if (args.empty()) {
    out << commandsUsage();
    return 0;
  }
  const Command* command = findCommand(args[0]);
  if (command == nullptr) {
    err << "help: unknown command \"" << args[0] << "\"\n" << commandsUsage();
    return 2;
  }
  out << command->usage();
  return 0;
}

}  // namespace

std::span<const Command> commands() { return kCommands; }

std::string commandsUsage() {
  std::size_t width = 0;
  for (const Command& command : kCommands) width = std::max(width, command.name.size());
  std::string text = "Commands (metrics-adapter COMMAND --help for each):\n";
  for (const Command& command : kCommands) {
    text += "  ";
    text += command.name;
    text.append(width + 2 - command.name.size(), ' ');
    text += command.summary;
    text += '\n';
  }
  return text;
}

bool isCommandWord(std::string_view word) {
  if (word.empty() || std::isalpha(static_cast<unsigned char>(word[0])) == 0) return false;
  return std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-';
  });
}

int runCommand(std::span<const std::string> args, const std::string& server_usage,
               std::ostream& out, std::ostream& err) {
  const Command* command = args.empty() ? nullptr : findCommand(args[0]);
  if (command == nullptr) {
    err << "metrics-adapter: unknown command \"" << (args.empty() ? "" : args[0]) << "\"\n"
        << commandsUsage();
    return 2;
  }
  const std::span<const std::string> rest = args.subspan(1);
  if (command->name == "help" && rest.empty()) {
    out << server_usage << "\n";
  } else if (!rest.empty() && (rest[0] == "--help" || rest[0] == "-h")) {
    out << command->usage();
    return 0;
  }
  return command->run(rest, out, err);
}

}  // namespace metrics_adapter::cli
