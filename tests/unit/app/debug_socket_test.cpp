#include "app/debug_socket.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "unit/api/empty_router.h"

namespace metrics_adapter::app {
namespace {

server::HttpRequest request(const std::string& method, const std::string& target,
                            const std::string& body = "") {
  server::HttpRequest result;
  result.method = method;
  result.target = target;
  result.body = body;
  return result;
}

AdapterOptions givenFlags() {
  return parseFlags(std::vector<std::string>{"--config=/etc/adapter/config.yaml",
                                             "--prometheus-header=Authorization=Bearer s3cret",
                                             "--v=4", "--debug-socket-path=/tmp/a.sock"});
}

TEST(DebugSocketRoutesTest, FlagsAreListedAsGivenWithHeaderValuesRedacted) {
  const std::string text = renderGivenFlags(givenFlags());
  EXPECT_EQ(text,
            "--config=/etc/adapter/config.yaml\n"
            "--prometheus-header=Authorization=REDACTED\n"
            "--v=4\n"
            "--debug-socket-path=/tmp/a.sock\n");
  EXPECT_EQ(text.find("s3cret"), std::string::npos);
}

TEST(DebugSocketRoutesTest, ServesFlagsHealthAndMetricsAndNothingElse) {
  const server::RequestHandler handler =
      debugSocketHandler(givenFlags(), metrics_adapter::testing::emptyRouter());
  const auto flags = handler(request("GET", "/debug/flags"));
  EXPECT_EQ(flags.status, 200);
  EXPECT_NE(flags.body.find("--v=4\n"), std::string::npos);
  EXPECT_EQ(handler(request("GET", "/healthz")).status, 200);
  const auto unknown = handler(request("GET", "/healthzz"));  // not a health path
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(nlohmann::json::parse(unknown.body)["reason"], "NotFound");
  EXPECT_EQ(handler(request("GET", "/apis/custom.metrics.k8s.io/v1beta1")).status, 404);
  EXPECT_EQ(handler(request("POST", "/debug/flags")).status, 405);
  const auto bad = handler(request("PUT", "/debug/flags/v", "loud"));
  EXPECT_EQ(bad.status, 400);
  const auto status = nlohmann::json::parse(bad.body);
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_EQ(status["code"], 400);
  EXPECT_NE(status["message"].get<std::string>().find("\"loud\""), std::string::npos);
}

}  // namespace
}  // namespace metrics_adapter::app
