#include "metrics_adapter/net/bearer_token_file.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace metrics_adapter::net {
namespace {

constexpr std::size_t kMaxTokenBytes = std::size_t{64} * 1024;

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace

bool BearerTokenFile::Stamp::operator==(const Stamp& other) const {
  return mtime.tv_sec == other.mtime.tv_sec && mtime.tv_nsec == other.mtime.tv_nsec &&
         size == other.size && inode == other.inode && device == other.device;
}

BearerTokenFile::BearerTokenFile(std::string path, std::chrono::milliseconds recheck_interval,
                                 std::string_view setting)
    : path_(std::move(path)), recheck_interval_(recheck_interval) {
  if (const std::string error = load(token_, stamp_); !error.empty()) {
    throw std::invalid_argument(std::string(setting) + ": " + error);
  }
  last_check_ = std::chrono::steady_clock::now();
}

std::string BearerTokenFile::current() {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (now - last_check_ < recheck_interval_) return token_;
  last_check_ = now;

  struct stat info {};
  if (::stat(path_.c_str(), &info) != 0) {
    SPDLOG_WARN("cannot check {}: {}; keeping the value read before", path_, std::strerror(errno));
    return token_;
  }
  const Stamp seen{info.st_mtim, info.st_size, info.st_ino, info.st_dev};
  if (seen == stamp_) return token_;

  std::string token;
  Stamp stamp;
  if (const std::string error = load(token, stamp); !error.empty()) {
    SPDLOG_WARN("{}; keeping the value read before", error);
    return token_;
  }
  token_ = std::move(token);
  stamp_ = stamp;
  SPDLOG_INFO("re-read {}: it changed", path_);
  return token_;
}

std::string BearerTokenFile::load(std::string& token, Stamp& stamp) const {
  // fstat on the descriptor that is read, so the stamp always describes the bytes we got even
  // when the file is replaced meanwhile.
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "cannot read " + path_ + ": " + std::strerror(errno);
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    return "cannot read " + path_ + ": " + std::strerror(error);
  }
  stamp = Stamp{info.st_mtim, info.st_size, info.st_ino, info.st_dev};
  std::string content;
  char buffer[4096];
  while (content.size() <= kMaxTokenBytes) {
    const ssize_t count = ::read(fd, buffer, sizeof buffer);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) {
      const int error = errno;
      ::close(fd);
      return "cannot read " + path_ + ": " + std::strerror(error);
    }
    if (count == 0) break;
    content.append(buffer, static_cast<std::size_t>(count));
  }
  ::close(fd);
  if (content.size() > kMaxTokenBytes) {
    return path_ + " is larger than " + std::to_string(kMaxTokenBytes) + " bytes";
  }
  std::size_t begin = 0;
  std::size_t end = content.size();
  while (begin < end && isSpace(content[begin])) ++begin;
  while (end > begin && isSpace(content[end - 1])) --end;
  if (begin == end) return path_ + " is empty";
  for (std::size_t i = begin; i < end; ++i) {
    const auto c = static_cast<unsigned char>(content[i]);
    if (c < 0x20 || c == 0x7F) return path_ + " holds control characters inside the token";
  }
  token = content.substr(begin, end - begin);
  return "";
}

}  // namespace metrics_adapter::net
