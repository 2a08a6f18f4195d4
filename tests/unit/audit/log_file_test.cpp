#include "audit/log_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "unit/net/test_support.h"

namespace metrics_adapter::audit {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> backups(const fs::path& dir, const std::string& except) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name != except) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string gunzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return "<not gzip>";
  std::string text;
  std::vector<char> buffer(4096);
  int count = 0;
  while ((count = gzread(file, buffer.data(), static_cast<unsigned>(buffer.size()))) > 0) {
    text.append(buffer.data(), static_cast<std::size_t>(count));
  }
  const bool ok = count == 0 && gzclose(file) == Z_OK;
  return ok ? text : "<broken gzip>";
}

TEST(LogFileTest, RotatesAtMaxSizeAndKeepsMaxBackups) {
  net::testing::TempDir dir;
  const std::string path = (dir.path() / "sub" / "audit.log").string();  // directory created
  LogFileOptions options;
  options.path = path;
  options.max_size_bytes = 100;
  options.max_backups = 2;
  LogFile file(options);
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  const std::string line(40, 'x');
  std::vector<std::string> lines;
  for (int i = 0; i < 9; ++i) {
    const std::string text = std::to_string(i) + line.substr(1) + "\n";
    ASSERT_TRUE(file.write(text));
    lines.push_back(text);
  }
  file.waitForHousekeeping();
  // 40 bytes a line, 100 bytes a file: 2 lines per file, 5 files written, 2 backups kept.
  EXPECT_EQ(read(path), lines[8]);
  const std::vector<std::string> kept = backups(dir.path() / "sub", "audit.log");
  ASSERT_EQ(kept.size(), 2u);
  for (const std::string& name : kept) {
    EXPECT_EQ(name.size(), std::string("audit-2006-01-02T15-04-05.000.log").size()) << name;
    EXPECT_EQ(name.rfind("audit-", 0), 0u);
  }
  EXPECT_EQ(read((dir.path() / "sub" / kept[0]).string()), lines[4] + lines[5]);
  EXPECT_EQ(read((dir.path() / "sub" / kept[1]).string()), lines[6] + lines[7]);
  EXPECT_FALSE(file.write(std::string(101, 'y')));  // longer than a whole file
}

TEST(LogFileTest, CompressesRotatedFilesAndPrunesOldOnes) {
  net::testing::TempDir dir;
  const std::string path = dir.file("audit.log");
  // A backup older than max age, named as rotation names them: pruned.
  const std::string old_name =
      LogFile::backupName(path, std::chrono::system_clock::now() - std::chrono::hours(24 * 8));
  std::ofstream(old_name) << "old\n";
  LogFileOptions options;
  options.path = path;
  options.max_size_bytes = 10;
  options.max_age_days = 7;
  options.compress = true;
  LogFile file(options);
  ASSERT_TRUE(file.write("first\n"));
  ASSERT_TRUE(file.write("second\n"));
  file.waitForHousekeeping();
  EXPECT_FALSE(fs::exists(old_name));
  const std::vector<std::string> kept = backups(dir.path(), "audit.log");
  ASSERT_EQ(kept.size(), 1u);
  ASSERT_EQ(kept[0].substr(kept[0].size() - 7), ".log.gz");
  const std::string gz = dir.file(kept[0]);
  EXPECT_EQ(gunzip(gz), "first\n");
  struct stat info {};
  ASSERT_EQ(::stat(gz.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_EQ(read(path), "second\n");
}

TEST(LogFileTest, BackupNameIsLumberjacks) {
  const auto time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1700000000123));
  EXPECT_EQ(LogFile::backupName("/var/log/audit.log", time),
            "/var/log/audit-2023-11-14T22-13-20.123.log");
  EXPECT_EQ(LogFile::backupName("/var/log/audit", time), "/var/log/audit-2023-11-14T22-13-20.123");
}

TEST(LogFileTest, AppendsToAnExistingFile) {
  net::testing::TempDir dir;
  const std::string path = dir.write("audit.log", "before\n");
  {
    LogFileOptions options;
    options.path = path;
    LogFile file(options);
    ASSERT_TRUE(file.write("after\n"));
  }
  EXPECT_EQ(read(path), "before\nafter\n");
}

}  // namespace
}  // namespace metrics_adapter::audit
