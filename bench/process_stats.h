#pragma once

// What a bench reads of its own process.

#include <fstream>
#include <string>

namespace bench {

// The resident set size now, from /proc/self/status.
inline long rssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

}  // namespace bench
