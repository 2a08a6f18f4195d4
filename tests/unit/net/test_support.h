#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace metrics_adapter::net::testing {

// A fresh directory under the system's temporary directory, removed with everything in it when
// the object goes.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("ma-test-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

  // Writes `name` whole and returns its path. An existing file is replaced the way the kubelet
  // replaces projected files: the new content is written aside, then renamed over it.
  std::string write(const std::string& name, const std::string& content) const {
    const std::filesystem::path aside = path_ / (name + ".new");
    std::ofstream(aside, std::ios::binary) << content;
    std::filesystem::rename(aside, path_ / name);
    return file(name);
  }

 private:
  std::filesystem::path path_;
};

// The `Error` that `call` throws; a test failure and nullopt when it throws none.
template <typename Error, typename Call>
std::optional<Error> thrown(Call&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "nothing was thrown";
  return std::nullopt;
}

}  // namespace metrics_adapter::net::testing
