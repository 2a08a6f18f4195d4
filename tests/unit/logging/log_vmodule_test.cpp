#include "logging/log_vmodule.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "logging/log_files.h"
#include "logging/log_sinks.h"

namespace metrics_adapter::logging {
namespace {

TEST(LogVmoduleParseTest, ReadsKlogSyntax) {
  struct Case {
    const char* text;
    std::vector<VmoduleRule> expected;
  };
  const Case cases[] = {
      {"", {}},
      {"connection=8,relist*=6", {{"connection", 8}, {"relist*", 6}}},
      {"a=1,,b=2,", {{"a", 1}, {"b", 2}}},  // empty entries are skipped, as klog does
      {"a=0,b=3", {{"b", 3}}},              // 0 can never raise a file above --v
      {"server/connection=+7", {{"server/connection", 7}}},
      {"[a-c]ache=2,\\*=1", {{"[a-c]ache", 2}, {"\\*", 1}}},
  };
  for (const auto& c : cases) EXPECT_EQ(parseVmodule(c.text), c.expected) << c.text;
}

TEST(LogVmoduleParseTest, BadTextNamesTheFlag) {
  for (const char* text : {"connection", "=3", "a=", "a=x", "a=-1", "a=1=2", "a=3x", "a= 3", "[a=2",
                           "[]=2", "a\\=2", "a=99999999999", "a=1,b"}) {
    try {
      parseVmodule(text);
      ADD_FAILURE() << "accepted " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--vmodule: ", 0), 0u) << e.what();
    }
  }
}

TEST(LogGlobTest, MatchesAsGoPathMatch) {
  struct Case {
    const char* pattern;
    const char* name;
    bool matches;
  };
  const Case cases[] = {
      {"connection", "connection", true},
      {"connection", "connections", false},
      {"conn*", "connection", true},
      {"*tion", "connection", true},
      {"c?nnection", "connection", true},
      {"c?nnection", "cnnection", false},
      {"*", "", true},
      {"*", "a/b", false},
      {"a?b", "a/b", false},
      {"[a-c]ache", "cache", true},
      {"[a-c]ache", "dache", false},
      {"[^a-c]ache", "cache", false},
      {"[^a-c]ache", "dache", true},
      {"\\*", "*", true},
      {"\\*", "x", false},
      {"relist*", "my_relister", false},
      {"*/discovery/*", "src/discovery/naming", true},
      {"*/discovery/*", "discovery/naming", false},
      {"[", "[", false},  // malformed: never matches
  };
  for (const auto& c : cases) {
    EXPECT_EQ(logGlobMatch(c.pattern, c.name), c.matches) << c.pattern << " " << c.name;
  }
}

TEST(LogVmoduleMatcherTest, FirstMatchingRuleAboveVerbosityWins) {
  VmoduleMatcher matcher(2, {{"connection", 8},
                             {"*/discovery/*", 7},
                             {"relist*", 6},
                             {"conn*", 1},
                             {"server/https_server", 9}});
  struct Case {
    const char* file;
    int verbosity;
  };
  const Case cases[] = {
      {"/work/main/src/server/connection.cpp", 8},
      {"/work/main/src/server/connection.h", 8},  // any extension
      {"connection.cpp", 8},                      // no directory
      {"/work/main/src/discovery/naming.cpp", 7},
      {"/work/main/src/discovery/relister.cpp", 7},  // the first match decides
      {"src/app/relister.cpp", 6},
      {"/x/connections.cpp", 2},  // conn*=1 matches but never lowers --v
      {"/x/other.cpp", 2},
      {"/work/main/src/server/https_server.cpp", 9},  // a '/' pattern matches the path's end
      {"server/https_server.cpp", 9},
      {"/work/main/src/myserver/https_server.cpp", 2},  // ... at a '/' only
      {"", 2},
  };
  for (const auto& c : cases) EXPECT_EQ(matcher.verbosityFor(c.file), c.verbosity) << c.file;
  EXPECT_EQ(matcher.mostVerbose(), 9);
  EXPECT_EQ(matcher.baseVerbosity(), 2);
}

// What klog's traceLocation.Set accepts, and ":0", the value klog prints as the default.
TEST(LogBacktraceAtTest, AcceptsWhatKlogAccepts) {
  struct Case {
    std::string text;
    std::optional<BacktraceLocation> location;
  };
  for (const Case& c : std::vector<Case>{
           {"", std::nullopt},
           {":0", std::nullopt},
           {"connection.cpp:42", BacktraceLocation{"connection.cpp", 42}},
           {"server/connection.cpp:7", BacktraceLocation{"server/connection.cpp", 7}},
           {"gopherflakes.go:234", BacktraceLocation{"gopherflakes.go", 234}},
           {"x.cpp:+7", BacktraceLocation{"x.cpp", 7}},  // Go's Atoi takes a sign
           {"x.cpp:007", BacktraceLocation{"x.cpp", 7}},
           {".:1", BacktraceLocation{".", 1}},  // a '.' is all klog asks of the file
           {"x.cpp:9223372036854775807", BacktraceLocation{"x.cpp", 9223372036854775807}},
       }) {
    EXPECT_EQ(parseBacktraceAt(c.text), c.location) << c.text;
  }
}

TEST(LogBacktraceAtTest, RefusesWhatKlogRefuses) {
  for (const char* text :
       {"connection.cpp", ":42", "connection:42", "x.cpp:0", "x.cpp:-3", "x.cpp:+0", "x.cpp:4a",
        "x.cpp:", "x.cpp: 4", "x.cpp:0x10", "x.cpp:1_0", "x.cpp:+-4", "x.cpp:+",
        "x.cpp:9223372036854775808", "a.b:c.d:4", "C:\\x.cpp:4", ":00", "x.cpp:0:"}) {
    try {
      parseBacktraceAt(text);
      ADD_FAILURE() << "accepted " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--log_backtrace_at: ", 0), 0u) << e.what();
    }
  }
}

TEST(LogFileMaxBytesTest, MegabytesSaturate) {
  EXPECT_EQ(logFileMaxBytes(0), 0u);
  EXPECT_EQ(logFileMaxBytes(1), 1048576u);
  EXPECT_EQ(logFileMaxBytes(1800), 1800u * 1048576u);
  EXPECT_EQ(logFileMaxBytes(std::numeric_limits<std::uint64_t>::max()),
            std::numeric_limits<std::uint64_t>::max());
}

}  // namespace
}  // namespace metrics_adapter::logging
