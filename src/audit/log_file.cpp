#include "audit/log_file.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace metrics_adapter::audit {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kTimeFormatExample = "2006-01-02T15-04-05.000";

struct NameParts {
  fs::path dir;
  std::string prefix;  // the file name without its extension, then "-"
  std::string ext;     // ".log", or ""
};

NameParts nameParts(const std::string& path) {
  const fs::path file(path);
  NameParts parts;
  parts.dir = file.parent_path();
  const std::string name = file.filename().string();
  const auto dot = name.rfind('.');
  parts.ext = dot == std::string::npos ? "" : name.substr(dot);
  parts.prefix = name.substr(0, name.size() - parts.ext.size()) + "-";
  return parts;
}

std::string timestamp(std::chrono::system_clock::time_point time) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  const auto seconds = static_cast<time_t>(ms / 1000);
  tm utc{};
  gmtime_r(&seconds, &utc);
  std::array<char, 96> text{};
  std::snprintf(text.data(), text.size(), "%04d-%02d-%02dT%02d-%02d-%02d.%03d", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(ms % 1000));
  return text.data();
}

// The time in a backup's name, or nullopt for a file that is not a backup.
std::optional<std::chrono::system_clock::time_point> backupTime(const std::string& name,
                                                                const NameParts& parts) {
  std::string_view rest(name);
  if (rest.substr(0, parts.prefix.size()) != parts.prefix) return std::nullopt;
  rest.remove_prefix(parts.prefix.size());
  if (rest.size() >= 3 && rest.substr(rest.size() - 3) == ".gz") rest.remove_suffix(3);
  if (rest.size() != kTimeFormatExample.size() + parts.ext.size() ||
      rest.substr(kTimeFormatExample.size()) != parts.ext) {
    return std::nullopt;
  }
  tm utc{};
  int millis = 0;
  const std::string stamp(rest.substr(0, kTimeFormatExample.size()));
  if (std::sscanf(stamp.c_str(), "%4d-%2d-%2dT%2d-%2d-%2d.%3d", &utc.tm_year, &utc.tm_mon,
                  &utc.tm_mday, &utc.tm_hour, &utc.tm_min, &utc.tm_sec, &millis) != 7) {
    return std::nullopt;
  }
  utc.tm_year -= 1900;
  utc.tm_mon -= 1;
  return std::chrono::system_clock::from_time_t(timegm(&utc)) + std::chrono::milliseconds(millis);
}

}  // namespace

std::string LogFile::backupName(const std::string& path,
                                std::chrono::system_clock::time_point time) {
  const NameParts parts = nameParts(path);
  return (parts.dir / (parts.prefix + timestamp(time) + parts.ext)).string();
}

bool gzipFile(const std::string& input, const std::string& output) {
  const int in = ::open(input.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return false;
  const int out = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0) {
    ::close(in);
    return false;
  }
  gzFile gz = gzdopen(out, "wb");
  bool ok = gz != nullptr;
  std::vector<char> buffer(std::size_t{1} << 16);
  while (ok) {
    const ssize_t count = ::read(in, buffer.data(), buffer.size());
    if (count < 0) ok = false;
    if (count <= 0) break;
    ok = gzwrite(gz, buffer.data(), static_cast<unsigned>(count)) == count;
  }
  if (gz != nullptr) {
    ok = gzclose(gz) == Z_OK && ok;
  } else {
    ::close(out);
  }
  ::close(in);
  return ok;
}

LogFile::LogFile(LogFileOptions options) : options_(std::move(options)) {
  std::error_code error;
  const fs::path dir = fs::path(options_.path).parent_path();
  if (!dir.empty()) fs::create_directories(dir, error);
  if (error) {
    throw std::runtime_error(options_.path + ": cannot create the directory: " + error.message());
  }
  if (!open()) {
    throw std::runtime_error(options_.path + ": cannot open: " + std::strerror(errno));
  }
  housekeeper_ = std::thread([this] { housekeeping(); });
}

LogFile::~LogFile() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  housekeeper_.join();
  if (fd_ >= 0) ::close(fd_);
}

bool LogFile::open() {
  fd_ = ::open(options_.path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0) return false;
  struct stat info {};
  size_ = ::fstat(fd_, &info) == 0 ? static_cast<std::uint64_t>(info.st_size) : 0;
  return true;
}

bool LogFile::rotate() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  auto when = std::chrono::system_clock::now();
  std::string backup = backupName(options_.path, when);
  // Two rotations within a millisecond would share a name; the later one moves on a millisecond.
  std::error_code error;
  while (fs::exists(backup, error) || fs::exists(backup + ".gz", error)) {
    when += std::chrono::milliseconds(1);
    backup = backupName(options_.path, when);
  }
  if (::rename(options_.path.c_str(), backup.c_str()) != 0 && errno != ENOENT) {
    SPDLOG_WARN("audit log: cannot rotate {}: {}", options_.path, std::strerror(errno));
  }
  const bool opened = open();
  {
    std::lock_guard lock(mutex_);
    ++asked_;
  }
  wake_.notify_all();
  return opened;
}

bool LogFile::write(std::string_view bytes) {
  if (bytes.size() > options_.max_size_bytes) return false;
  if (fd_ < 0 || size_ + bytes.size() > options_.max_size_bytes) {
    if (!rotate()) return false;
  }
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd_, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    size_ += static_cast<std::uint64_t>(written);
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

void LogFile::waitForHousekeeping() {
  std::unique_lock lock(mutex_);
  const std::uint64_t target = asked_;
  idle_.wait(lock, [&] { return done_ >= target; });
}

void LogFile::housekeeping() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || done_ < asked_; });
    if (done_ >= asked_) return;  // stopping with nothing asked
    const std::uint64_t target = asked_;
    lock.unlock();
    mill();
    lock.lock();
    done_ = target;
    idle_.notify_all();
  }
}

void LogFile::mill() {
  const NameParts parts = nameParts(options_.path);
  struct Backup {
    fs::path path;
    std::chrono::system_clock::time_point time;
  };
  std::vector<Backup> backups;
  std::error_code error;
  const fs::path dir = parts.dir.empty() ? fs::path(".") : parts.dir;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (const auto time = backupTime(name, parts)) backups.push_back({entry.path(), *time});
  }
  std::sort(backups.begin(), backups.end(),
            [](const Backup& a, const Backup& b) { return a.time > b.time; });
  std::vector<Backup> kept;
  const auto oldest =
      std::chrono::system_clock::now() - std::chrono::hours(24) * options_.max_age_days;
  for (std::size_t i = 0; i < backups.size(); ++i) {
    const bool too_many =
        options_.max_backups > 0 && i >= static_cast<std::size_t>(options_.max_backups);
    const bool too_old = options_.max_age_days > 0 && backups[i].time < oldest;
    if (too_many || too_old) {
      fs::remove(backups[i].path, error);
    } else {
      kept.push_back(backups[i]);
    }
  }
  if (!options_.compress) return;
  for (const Backup& backup : kept) {
    const std::string path = backup.path.string();
    if (path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0) continue;
    if (gzipFile(path, path + ".gz")) {
      fs::remove(backup.path, error);
    } else {
      SPDLOG_WARN("audit log: cannot compress {}", path);
      fs::remove(path + ".gz", error);
    }
  }
}

}  // namespace metrics_adapter::audit
