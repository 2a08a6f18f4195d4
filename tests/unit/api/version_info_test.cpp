#include "metrics_adapter/api/version_info.h"

#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "metrics_adapter/api/router.h"
#include "unit/api/route_request.h"

namespace metrics_adapter::api {
namespace {

// Go's GOARCH for what the running kernel reports (uname -m).
std::string goArch() {
  utsname name{};
  EXPECT_EQ(uname(&name), 0);
  const std::map<std::string, std::string> arches = {
      {"x86_64", "amd64"},    {"aarch64", "arm64"}, {"i686", "386"},       {"armv7l", "arm"},
      {"ppc64le", "ppc64le"}, {"s390x", "s390x"},   {"riscv64", "riscv64"}};
  const auto it = arches.find(name.machine);
  return it == arches.end() ? name.machine : it->second;
}

TEST(VersionInfoTest, ReportsThePlatformAndCompilerOfTheBuild) {
  const VersionInfo info = buildVersionInfo("1.2.3");
  EXPECT_EQ(info.git_version, "v1.2.3");
  EXPECT_EQ(info.platform, "linux/" + goArch());
  EXPECT_TRUE(info.compiler.rfind("gcc ", 0) == 0 || info.compiler.rfind("clang ", 0) == 0)
      << info.compiler;
}

TEST(VersionInfoTest, VersionRouteServesIt) {
  const Router router(RouterParts{.version = buildVersionInfo("1.2.3")});
  server::HttpRequest request;
  request.method = "GET";
  request.target = "/version";
  const auto response = testing::routeRequest(router, request);
  ASSERT_EQ(response.status, 200);
  EXPECT_EQ(Json::parse(response.body), versionDocument(buildVersionInfo("1.2.3")));
  EXPECT_EQ(Json::parse(response.body)["platform"], "linux/" + goArch());
}

}  // namespace
}  // namespace metrics_adapter::api
