#ifndef SPDLOG_ACTIVE_LEVEL
#define SPDLOG_ACTIVE_LEVEL SPDLOG_LEVEL_TRACE
#endif

#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "metrics_adapter/logging/logging.h"

namespace metrics_adapter::logging {
namespace {

namespace fs = std::filesystem;

std::string readLogFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool logContains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Every test configures logging into a fresh directory and captures "stderr" in a string.
class LogDestinationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::path(::testing::TempDir()) / "log_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    options_.flush_frequency = std::chrono::milliseconds(0);
  }

  void TearDown() override {
    LogOverrides quiet;
    quiet.stderr_sink = std::make_shared<spdlog::sinks::null_sink_mt>();
    LogOptions defaults;
    defaults.flush_frequency = std::chrono::milliseconds(0);
    configureLogging(defaults, quiet);  // closes the files before they are removed
    fs::remove_all(dir_);
  }

  void configure() {
    stderr_text_.str("");
    overrides_.stderr_sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stderr_text_);
    configureLogging(options_, overrides_);
  }

  static void flushLogs() {
    spdlog::apply_all([](const std::shared_ptr<spdlog::logger>& logger) { logger->flush(); });
  }

  // Logs one message of each severity, "<level>-line", through the default logger.
  static void logEachSeverity() {
    auto logger = spdlog::default_logger();
    SPDLOG_LOGGER_TRACE(logger, "trace-line");
    SPDLOG_LOGGER_DEBUG(logger, "debug-line");
    SPDLOG_LOGGER_INFO(logger, "info-line");
    SPDLOG_LOGGER_WARN(logger, "warning-line");
    SPDLOG_LOGGER_ERROR(logger, "error-line");
    flushLogs();
  }

  fs::path dir_;
  LogOptions options_;
  LogOverrides overrides_;
  std::ostringstream stderr_text_;
};

// Logs "traced" and returns the line it was logged from.
int logFromKnownLine() {
  SPDLOG_LOGGER_INFO(spdlog::default_logger(), "traced");
  return __LINE__ - 1;
}

TEST_F(LogDestinationsTest, VmoduleLetsDebugThroughForMatchingFilesOnly) {
  options_.vmodule = {{"log_destinations_test", 6}};
  configure();
  auto logger = spdlog::default_logger();
  EXPECT_EQ(logger->level(), spdlog::level::debug);
  EXPECT_FALSE(spdlog::get("access")->should_log(spdlog::level::debug));  // --v only
  SPDLOG_LOGGER_DEBUG(logger, "debug from this file");
  SPDLOG_LOGGER_TRACE(logger, "trace from this file");
  logger->log(spdlog::source_loc{"/src/server/connection.cpp", 12, "f"}, spdlog::level::debug,
              "debug from connection");
  logger->log(spdlog::source_loc{"/src/server/connection.cpp", 13, "f"}, spdlog::level::info,
              "info from connection");
  logger->debug("debug from nowhere");
  std::string out = stderr_text_.str();
  EXPECT_TRUE(logContains(out, "debug from this file")) << out;
  EXPECT_FALSE(logContains(out, "trace from this file")) << out;
  EXPECT_FALSE(logContains(out, "debug from connection")) << out;
  EXPECT_TRUE(logContains(out, "info from connection")) << out;
  EXPECT_FALSE(logContains(out, "debug from nowhere")) << out;

  options_.vmodule = {{"server/connection", 8}};
  configure();
  logger = spdlog::default_logger();
  EXPECT_EQ(logger->level(), spdlog::level::trace);
  SPDLOG_LOGGER_DEBUG(logger, "debug from this file");
  logger->log(spdlog::source_loc{"/src/server/connection.cpp", 12, "f"}, spdlog::level::trace,
              "trace from connection");
  out = stderr_text_.str();
  EXPECT_FALSE(logContains(out, "debug from this file")) << out;
  EXPECT_TRUE(logContains(out, "trace from connection")) << out;
}

TEST_F(LogDestinationsTest, SetLogVerbosityChangesLevelsAndKeepsVmodule) {
  options_.vmodule = {{"connection", 6}};
  options_.skip_headers = true;
  configure();
  setLogVerbosity(8);
  auto logger = spdlog::default_logger();
  EXPECT_TRUE(spdlog::get("access")->should_log(spdlog::level::trace));
  SPDLOG_LOGGER_TRACE(logger, "trace at 8");
  logger->log(spdlog::source_loc{"/src/server/connection.cpp", 12, "f"}, spdlog::level::trace,
              "connection trace at 8");
  setLogVerbosity(0);
  EXPECT_FALSE(spdlog::get("access")->should_log(spdlog::level::debug));
  SPDLOG_LOGGER_DEBUG(logger, "debug at 0");
  logger->log(spdlog::source_loc{"/src/server/connection.cpp", 12, "f"}, spdlog::level::debug,
              "connection debug at 0");
  EXPECT_EQ(stderr_text_.str(), "trace at 8\nconnection trace at 8\nconnection debug at 0\n");

  options_.vmodule.clear();
  configure();
  setLogVerbosity(6);
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::debug);
  EXPECT_TRUE(spdlog::get("access")->should_log(spdlog::level::debug));
}

TEST_F(LogDestinationsTest, WithoutVmoduleTheLevelIsVerbositysAlone) {
  options_.verbosity = 6;
  configure();
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::debug);
  EXPECT_TRUE(spdlog::get("access")->should_log(spdlog::level::debug));
  logEachSeverity();
  EXPECT_TRUE(logContains(stderr_text_.str(), "debug-line"));
  EXPECT_FALSE(logContains(stderr_text_.str(), "trace-line"));
}

TEST_F(LogDestinationsTest, FileReceivesEveryLineAfterKlogHeaders) {
  options_.logtostderr = false;
  options_.log_file = (dir_ / "adapter.log").string();
  options_.verbosity = 6;
  configure();
  logEachSeverity();
  std::string text = readLogFile(options_.log_file);
  EXPECT_EQ(text.rfind("Log file created at: ", 0), 0u) << text;
  EXPECT_TRUE(logContains(text, "\nRunning on machine: ")) << text;
  EXPECT_TRUE(logContains(text, "\nLog line format: ")) << text;
  for (const char* line : {"debug-line", "info-line", "warning-line", "error-line"}) {
    EXPECT_TRUE(logContains(text, line)) << line << " in " << text;
  }
  EXPECT_FALSE(logContains(text, "trace-line"));
  // stderr: --stderrthreshold's default, ERROR.
  EXPECT_TRUE(logContains(stderr_text_.str(), "error-line"));
  EXPECT_FALSE(logContains(stderr_text_.str(), "warning-line"));
}

TEST_F(LogDestinationsTest, SkipLogHeadersLeavesOnlyLines) {
  options_.logtostderr = false;
  options_.log_file = (dir_ / "adapter.log").string();
  options_.skip_log_headers = true;
  configure();
  logEachSeverity();
  std::string text = readLogFile(options_.log_file);
  EXPECT_FALSE(logContains(text, "Log file created at")) << text;
  EXPECT_FALSE(logContains(text, "Running on machine")) << text;
  std::istringstream lines(text);
  std::string first;
  std::getline(lines, first);
  EXPECT_TRUE(logContains(first, "info-line")) << text;
}

TEST_F(LogDestinationsTest, JsonFilesHaveNoHeadersAndOneObjectPerLine) {
  options_.logtostderr = false;
  options_.log_file = (dir_ / "adapter.json").string();
  options_.format = LogFormat::kJson;
  configure();
  logEachSeverity();
  std::istringstream lines(readLogFile(options_.log_file));
  std::vector<std::string> messages;
  for (std::string line; std::getline(lines, line);) {
    messages.push_back(nlohmann::json::parse(line)["msg"]);
  }
  EXPECT_EQ(messages, (std::vector<std::string>{"info-line", "warning-line", "error-line"}));
}

TEST_F(LogDestinationsTest, FileRotatesPastItsMaximumSize) {
  constexpr std::uint64_t kMaxBytes = 400;
  options_.logtostderr = false;
  options_.log_file = (dir_ / "adapter.log").string();
  overrides_.log_file_max_bytes = kMaxBytes;
  configure();
  for (int i = 0; i < 100; ++i) spdlog::info("message number {:03d}", i);
  flushLogs();
  const fs::path rotated[] = {dir_ / "adapter.log", dir_ / "adapter.1.log", dir_ / "adapter.5.log"};
  for (const auto& path : rotated) ASSERT_TRUE(fs::exists(path)) << path;
  EXPECT_FALSE(fs::exists(dir_ / "adapter.6.log"));  // 5 rotated files are kept
  for (const auto& path : fs::directory_iterator(dir_)) {
    std::string text = readLogFile(path.path());
    // Each file starts with the headers, which the limit does not count.
    ASSERT_EQ(text.rfind("Log file created at: ", 0), 0u) << path.path();
    auto body = text.substr(text.find("Log line format: "));
    body = body.substr(body.find('\n') + 1);
    EXPECT_LE(body.size(), kMaxBytes) << path.path();
    EXPECT_FALSE(body.empty()) << path.path();
  }
  EXPECT_TRUE(logContains(readLogFile(dir_ / "adapter.log"), "message number 099"));
  EXPECT_FALSE(logContains(readLogFile(dir_ / "adapter.log"), "message number 000"));
}

TEST_F(LogDestinationsTest, FileMaxSizeZeroNeverRotates) {
  options_.logtostderr = false;
  options_.log_file = (dir_ / "adapter.log").string();
  options_.log_file_max_size_mb = 0;
  configure();
  for (int i = 0; i < 100; ++i) spdlog::info("message number {:03d}", i);
  flushLogs();
  EXPECT_FALSE(fs::exists(dir_ / "adapter.1.log"));
  EXPECT_TRUE(logContains(readLogFile(dir_ / "adapter.log"), "message number 000"));
}

TEST_F(LogDestinationsTest, DirSeverityFilesHoldTheirSeverityAndWorse) {
  options_.logtostderr = false;
  options_.log_dir = dir_.string();
  options_.skip_log_headers = true;
  configure();
  logEachSeverity();
  std::string info = readLogFile(dir_ / "metrics-adapter.INFO");
  std::string warning = readLogFile(dir_ / "metrics-adapter.WARNING");
  std::string error = readLogFile(dir_ / "metrics-adapter.ERROR");
  EXPECT_TRUE(logContains(info, "info-line") && logContains(info, "warning-line") &&
              logContains(info, "error-line"))
      << info;
  EXPECT_TRUE(!logContains(warning, "info-line") && logContains(warning, "warning-line") &&
              logContains(warning, "error-line"))
      << warning;
  EXPECT_TRUE(!logContains(error, "info-line") && !logContains(error, "warning-line") &&
              logContains(error, "error-line"))
      << error;
}

TEST_F(LogDestinationsTest, DirOneOutputKeepsEachSeverityInItsOwnFile) {
  options_.logtostderr = false;
  options_.log_dir = dir_.string();
  options_.one_output = true;
  options_.skip_log_headers = true;
  options_.verbosity = 6;
  configure();
  logEachSeverity();
  spdlog::critical("critical-line");
  flushLogs();
  std::string info = readLogFile(dir_ / "metrics-adapter.INFO");
  std::string warning = readLogFile(dir_ / "metrics-adapter.WARNING");
  std::string error = readLogFile(dir_ / "metrics-adapter.ERROR");
  EXPECT_TRUE(logContains(info, "debug-line") && logContains(info, "info-line") &&
              !logContains(info, "warning-line") && !logContains(info, "error-line"))
      << info;
  EXPECT_TRUE(logContains(warning, "warning-line") && !logContains(warning, "info-line") &&
              !logContains(warning, "error-line"))
      << warning;
  EXPECT_TRUE(logContains(error, "error-line") && logContains(error, "critical-line") &&
              !logContains(error, "warning-line"))
      << error;
}

TEST_F(LogDestinationsTest, StderrThresholdRoutesThatSeverityAndWorse) {
  struct Case {
    LogSeverity threshold;
    bool also;
    std::vector<std::string> on_stderr;
  };
  const Case cases[] = {
      {LogSeverity::kInfo, false, {"debug-line", "info-line", "warning-line", "error-line"}},
      {LogSeverity::kWarning, false, {"warning-line", "error-line"}},
      {LogSeverity::kError, false, {"error-line"}},
      {LogSeverity::kFatal, false, {}},
      {LogSeverity::kFatal, true, {"debug-line", "info-line", "warning-line", "error-line"}},
  };
  options_.logtostderr = false;
  options_.log_file = (dir_ / "adapter.log").string();
  options_.skip_headers = true;
  options_.verbosity = 6;
  for (const auto& c : cases) {
    options_.stderrthreshold = c.threshold;
    options_.alsologtostderr = c.also;
    configure();
    logEachSeverity();
    std::string expected;
    for (const auto& line : c.on_stderr) expected += line + "\n";
    EXPECT_EQ(stderr_text_.str(), expected) << static_cast<int>(c.threshold) << " " << c.also;
  }
}

TEST_F(LogDestinationsTest, ToStderrIgnoresFileFlagsWithOneWarning) {
  options_.log_file = (dir_ / "adapter.log").string();
  options_.one_output = true;
  configure();
  logEachSeverity();
  EXPECT_FALSE(fs::exists(options_.log_file));
  std::string out = stderr_text_.str();
  EXPECT_TRUE(logContains(out, "--log_file, --one_output ignored: --logtostderr is true")) << out;
  EXPECT_TRUE(logContains(out, "info-line")) << out;

  options_ = LogOptions{};
  configure();
  EXPECT_FALSE(logContains(stderr_text_.str(), "ignored"));
}

TEST_F(LogDestinationsTest, SkipHeadersAndAddDirHeaderShapeTextLines) {
  options_.skip_headers = true;
  configure();
  SPDLOG_LOGGER_INFO(spdlog::default_logger(), "hello");
  EXPECT_EQ(stderr_text_.str(), "hello\n");

  options_.skip_headers = false;
  configure();
  SPDLOG_LOGGER_WARN(spdlog::default_logger(), "hello");
  spdlog::info("no location");
  const std::regex with_base(
      R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d W log_destinations_test\.cpp:\d+\] hello)"
      "\n"
      R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d I no location)"
      "\n");
  EXPECT_TRUE(std::regex_match(stderr_text_.str(), with_base)) << stderr_text_.str();

  options_.add_dir_header = true;
  configure();
  SPDLOG_LOGGER_INFO(spdlog::default_logger(), "hello");
  EXPECT_TRUE(logContains(stderr_text_.str(), " I logging/log_destinations_test.cpp:"))
      << stderr_text_.str();
}

TEST_F(LogDestinationsTest, BacktraceAtAppendsAStackTraceToThatLineOnly) {
  options_.skip_headers = true;
  configure();
  const int line = logFromKnownLine();
  options_.log_backtrace_at = "log_destinations_test.cpp:" + std::to_string(line);
  configure();
  spdlog::info("untraced");
  logFromKnownLine();
  std::string out = stderr_text_.str();
  ASSERT_EQ(out.rfind("untraced\ntraced\nstack trace (--log_backtrace_at):\n#0 ", 0), 0u) << out;
  EXPECT_GE(std::count(out.begin(), out.end(), '#'), 3) << out;

  options_.log_backtrace_at = "log_destinations_test.cpp:" + std::to_string(line + 1);
  configure();
  logFromKnownLine();
  EXPECT_EQ(stderr_text_.str(), "traced\n");
}

TEST_F(LogDestinationsTest, UnwritablePathsAreRefusedNamingFlagAndPath) {
  options_.logtostderr = false;
  std::ofstream(dir_ / "plain-file") << "x";
  struct Case {
    std::string log_file;
    std::string log_dir;
    const char* flag;
  };
  const Case cases[] = {
      {(dir_ / "missing" / "adapter.log").string(), "", "--log_file"},
      {dir_.string(), "", "--log_file"},  // a directory
      {(dir_ / "plain-file" / "adapter.log").string(), "", "--log_file"},
      {"", (dir_ / "missing").string(), "--log_dir"},
      {"", (dir_ / "plain-file").string(), "--log_dir"},
  };
  configure();
  for (const auto& c : cases) {
    options_.log_file = c.log_file;
    options_.log_dir = c.log_dir;
    const std::string path = c.log_file.empty() ? c.log_dir : c.log_file;
    for (bool check_only : {true, false}) {
      try {
        if (check_only) {
          checkLogOptions(options_);
        } else {
          configureLogging(options_, overrides_);
        }
        ADD_FAILURE() << "accepted " << path;
      } catch (const std::invalid_argument& e) {
        EXPECT_TRUE(logContains(e.what(), c.flag) && logContains(e.what(), path)) << e.what();
      }
    }
  }
  EXPECT_FALSE(fs::exists(dir_ / "missing"));  // nothing was created on the way
  // A refused configuration leaves the previous one in place.
  spdlog::error("still here");
  EXPECT_TRUE(logContains(stderr_text_.str(), "still here"));
}

TEST_F(LogDestinationsTest, CheckOptionsOpensNothing) {
  options_.logtostderr = false;
  options_.log_file = (dir_ / "adapter.log").string();
  EXPECT_NO_THROW(checkLogOptions(options_));
  options_.log_file.clear();
  options_.log_dir = dir_.string();
  EXPECT_NO_THROW(checkLogOptions(options_));
  EXPECT_TRUE(fs::is_empty(dir_));
  options_.log_backtrace_at = "nowhere";
  EXPECT_THROW(checkLogOptions(options_), std::invalid_argument);
  // With --logtostderr the file flags are not used, so not checked either.
  options_ = LogOptions{};
  options_.log_dir = (dir_ / "missing").string();
  EXPECT_NO_THROW(checkLogOptions(options_));
}

TEST_F(LogDestinationsTest, SecondCallReplacesTheDestinations) {
  options_.logtostderr = false;
  options_.skip_log_headers = true;
  options_.log_file = (dir_ / "first.log").string();
  configure();
  spdlog::info("to the first");
  options_.log_file = (dir_ / "second.log").string();
  configure();
  spdlog::info("to the second");
  flushLogs();
  std::string first = readLogFile(dir_ / "first.log");
  std::string second = readLogFile(dir_ / "second.log");
  EXPECT_TRUE(logContains(first, "to the first") && !logContains(first, "to the second")) << first;
  EXPECT_TRUE(logContains(second, "to the second") && !logContains(second, "to the first"))
      << second;
  options_.verbosity = 6;
  configure();
  ASSERT_NE(spdlog::get("access"), nullptr);
  spdlog::get("access")->debug("new access logger");
  flushLogs();
  second = readLogFile(dir_ / "second.log");
  EXPECT_TRUE(logContains(second, "new access logger")) << second;
}

}  // namespace
}  // namespace metrics_adapter::logging
