#include "net/connect_probe.h"

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <optional>

namespace metrics_adapter::net {

std::string diagnoseConnectFailure(const std::string& host, const std::string& port,
                                   std::chrono::steady_clock::time_point deadline) {
  using boost::asio::ip::tcp;
  std::string name = host;
  if (name.size() >= 2 && name.front() == '[' && name.back() == ']') {
    name = name.substr(1, name.size() - 2);
  }
  // Never longer than the call's own budget, and never long: this only explains a failure.
  const auto budget = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     deadline - std::chrono::steady_clock::now()),
                                 std::chrono::milliseconds(0), std::chrono::milliseconds(2000));

  boost::asio::io_context io;
  tcp::resolver resolver(io);
  tcp::socket socket(io);
  std::optional<boost::system::error_code> outcome;
  resolver.async_resolve(
      name, port,
      [&](const boost::system::error_code& error, const tcp::resolver::results_type& endpoints) {
        if (error) {
          outcome = error;
          return;
        }
        boost::asio::async_connect(socket, endpoints,
                                   [&](const boost::system::error_code& connect_error,
                                       const tcp::endpoint&) { outcome = connect_error; });
      });
  io.run_for(budget);
  if (!outcome) return "connection failed (no answer while connecting)";
  if (*outcome) return outcome->message();
  return "connection failed (the retry to diagnose it succeeded)";
}

}  // namespace metrics_adapter::net
