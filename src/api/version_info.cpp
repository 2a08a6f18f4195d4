#include "metrics_adapter/api/version_info.h"

#include <nlohmann/json.hpp>

namespace metrics_adapter::api {
namespace {

// Go's GOOS and GOARCH names, which is what clients of /version compare against.
constexpr const char* kOs =
#if defined(__linux__)
    "linux";
#elif defined(__APPLE__)
    "darwin";
#else
    "unknown";
#endif

constexpr const char* kArch =
#if defined(__x86_64__)
    "amd64";
#elif defined(__aarch64__)
    "arm64";
#elif defined(__i386__)
    "386";
#elif defined(__arm__)
        "arm";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        "ppc64le";
#elif defined(__s390x__)
        "s390x";
#elif defined(__riscv) && __riscv_xlen == 64
        "riscv64";
#else
        "unknown";
#endif

std::string compiler() {
#if defined(__clang__)
  return "clang " + std::to_string(__clang_major__) + "." + std::to_string(__clang_minor__) + "." +
         std::to_string(__clang_patchlevel__);
#elif defined(__GNUC__)
  return "gcc " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
         std::to_string(__GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

}  // namespace

VersionInfo buildVersionInfo(const std::string& version) {
  return {.git_version = "v" + version,
          .platform = std::string(kOs) + "/" + kArch,
          .compiler = compiler()};
}

Json versionDocument(const VersionInfo& info) {
  return Json{
      {"gitVersion", info.git_version}, {"compiler", info.compiler}, {"platform", info.platform}};
}

}  // namespace metrics_adapter::api
