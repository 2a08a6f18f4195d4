#include "kube/watch_stream.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace metrics_adapter::kube {
namespace {

// The types of the events `chunks` hold, fed one chunk at a time.
std::vector<std::string> typesOf(const std::vector<std::string>& chunks,
                                 std::size_t max_line_bytes = 1024) {
  std::vector<std::string> types;
  WatchStream stream(max_line_bytes, "GET /api/v1/pods");
  const WatchHandler collect = [&](WatchEvent&& event) {
    types.push_back(event.type + (event.object.is_null() ? "" : ":" + event.object.dump()));
    return true;
  };
  for (const auto& chunk : chunks) stream.feed(chunk, collect);
  stream.finish(collect);
  return types;
}

TEST(WatchStreamTest, CutsLinesWhereverTheChunksEnd) {
  const struct {
    const char* name;
    std::vector<std::string> chunks;
    std::vector<std::string> types;
  } cases[] = {
      {"one per chunk",
       {"{\"type\":\"ADDED\",\"object\":1}\n", "{\"type\":\"DELETED\",\"object\":2}\n"},
       {"ADDED:1", "DELETED:2"}},
      {"two in one chunk",
       {"{\"type\":\"ADDED\",\"object\":1}\n{\"type\":\"BOOKMARK\",\"object\":2}\n"},
       {"ADDED:1", "BOOKMARK:2"}},
      {"split mid-line", {"{\"type\":\"MOD", "IFIED\",\"obj", "ect\":3}\n"}, {"MODIFIED:3"}},
      {"split at the newline", {"{\"type\":\"ADDED\",\"object\":1}", "\n"}, {"ADDED:1"}},
      {"last line without newline", {"{\"type\":\"ADDED\",\"object\":1}"}, {"ADDED:1"}},
      {"CRLF and blank keep-alive lines", {"\n\r\n{\"type\":\"ADDED\"}\r\n", "  \n"}, {"ADDED"}},
      {"nothing", {}, {}},
  };
  for (const auto& c : cases) EXPECT_EQ(typesOf(c.chunks), c.types) << c.name;
}

TEST(WatchStreamTest, MalformedLinesAreErrors) {
  const struct {
    const char* name;
    std::string line;
    std::string message_part;
  } cases[] = {
      {"not JSON", "{\"type\":", "a line that is not JSON"},
      {"not an object", "[1,2]", "a line that is not JSON"},
      {"no type", "{\"object\":{}}", "an event without a type"},
      {"type not a string", "{\"type\":7}", "an event without a type"},
      {"too deep", std::string(100, '[') + std::string(100, ']'), "nested too deeply"},
  };
  for (const auto& c : cases) {
    try {
      typesOf({c.line + "\n"});
      ADD_FAILURE() << c.name << ": no error";
    } catch (const KubeError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message_part), std::string::npos)
          << c.name << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("GET /api/v1/pods"), std::string::npos) << e.what();
    }
  }
}

TEST(WatchStreamTest, ALineLongerThanTheBoundFailsBeforeItIsHeld) {
  EXPECT_THROW(typesOf({std::string(600, ' '), std::string(600, ' ')}, 1000), KubeError);
  EXPECT_EQ(typesOf({"{\"type\":\"A\"}\n", "{\"type\":\"B\"}\n"}, 13),
            (std::vector<std::string>{"A", "B"}));
}

TEST(WatchStreamTest, AHandlerReturningFalseStopsTheStream) {
  WatchStream stream(1024, "GET /api/v1/pods");
  int calls = 0;
  EXPECT_FALSE(stream.feed("{\"type\":\"A\"}\n{\"type\":\"B\"}\n", [&](WatchEvent&&) {
    ++calls;
    return false;
  }));
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace metrics_adapter::kube
