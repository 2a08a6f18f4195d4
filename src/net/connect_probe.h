#pragma once

#include <chrono>
#include <string>

namespace metrics_adapter::net {

// Why a TCP connection to host:port fails, in the system's words ("Connection refused",
// "No route to host", "Connection timed out"...). cpprestsdk reports every failed connect as
// "host unreachable"; this repeats the attempt once, bounded by `deadline`, to name the cause.
// `host` may be an IPv6 literal in brackets.
std::string diagnoseConnectFailure(const std::string& host, const std::string& port,
                                   std::chrono::steady_clock::time_point deadline);

}  // namespace metrics_adapter::net
