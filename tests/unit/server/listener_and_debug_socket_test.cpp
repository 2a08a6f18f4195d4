// --permit-port-sharing (SO_REUSEPORT), the exchange observer's refusal of an answer
// (blocking-strict audit), and the debug socket (--debug-socket-path).

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "metrics_adapter/server/debug_socket.h"
#include "unit/server/test_support.h"

namespace metrics_adapter::server {
namespace {
using namespace testing;

HttpResponse echo(const HttpRequest& request) { return textResponse(request.target); }

TEST(PortSharingTest, TwoServersShareOnePortOnlyWhenBothAskForIt) {
  TempDir dir;
  ServerOptions first_options = testOptions(dir);
  first_options.reuse_port = true;
  auto first = startServer(first_options, echo);

  ServerOptions second_options = testOptions(dir);
  second_options.port = first->port();
  second_options.reuse_port = true;
  auto second = startServer(second_options, echo);  // would throw "address in use" otherwise
  EXPECT_EQ(second->port(), first->port());

  ServerOptions third_options = second_options;
  third_options.reuse_port = false;
  const std::string failure = startFailure([&] { startServer(third_options, echo); });
  EXPECT_NE(failure.find("bind"), std::string::npos) << failure;

  TlsClient client;
  ASSERT_FALSE(client.connect(first->port()));
  EXPECT_EQ(client.get("/shared").body(), "/shared");
}

// Refuses the first answer it sees, as a blocking-strict audit log that cannot write.
class RefusingObserver : public ExchangeObserver {
 public:
  bool observe(const Exchange& exchange) override {
    std::lock_guard lock(mutex_);
    codes_.push_back(exchange.code);
    users_.emplace_back(exchange.notes->user);
    return codes_.size() > 1;
  }
  std::vector<int> codes() const {
    std::lock_guard lock(mutex_);
    return codes_;
  }
  std::vector<std::string> users() const {
    std::lock_guard lock(mutex_);
    return users_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<int> codes_;
  std::vector<std::string> users_;
};

TEST(ExchangeObserverTest, AnAnswerTheObserverRefusesBecomesA500ThatIsObservedToo) {
  TempDir dir;
  auto observer = std::make_shared<RefusingObserver>();
  auto server = startServer(
      testOptions(dir),
      [](const HttpRequest&) {
        HttpResponse response = textResponse("secret");
        response.notes.user = "alice";
        return response;
      },
      observer);
  TlsClient client;
  ASSERT_FALSE(client.connect(server->port()));
  const auto refused = client.get("/x");
  EXPECT_EQ(refused.result_int(), 500u);
  EXPECT_EQ(refused.body().find("secret"), std::string::npos);
  EXPECT_NE(refused.body().find("could not be audited"), std::string::npos) << refused.body();
  EXPECT_EQ(observer->codes(), (std::vector<int>{200, 500}));
  EXPECT_EQ(observer->users(), (std::vector<std::string>{"alice", "alice"}));  // kept
  EXPECT_EQ(client.get("/y").result_int(), 200u);  // the connection goes on
}

// One request over the Unix socket; the raw answer.
std::string unixRequest(const std::string& path, const std::string& request) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  path.copy(address.sun_path, sizeof(address.sun_path) - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return "connect failed";
  }
  EXPECT_EQ(::write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  std::string answer;
  char buffer[4096];
  ssize_t got = 0;
  while ((got = ::read(fd, buffer, sizeof(buffer))) > 0) answer.append(buffer, got);
  ::close(fd);
  return answer;
}

TEST(DebugSocketTest, ServesTheHandlerPlainOverTheSocketOnlyToItsOwner) {
  TempDir dir;
  const std::string path = dir.file("debug.sock");
  std::vector<std::string> seen;
  DebugSocketServer server(path, [&seen](const HttpRequest& request) {
    seen.push_back(request.method + " " + request.target + " " + request.body);
    return textResponse("answer to " + request.target);
  });
  server.start();
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_TRUE(S_ISSOCK(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0600u);

  const std::string answer = unixRequest(path, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  EXPECT_NE(answer.find("\r\n\r\nanswer to /metrics"), std::string::npos) << answer;
  const std::string put =
      unixRequest(path, "PUT /debug/flags/v HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n7");
  EXPECT_EQ(put.rfind("HTTP/1.1 200", 0), 0u) << put;
  EXPECT_EQ(seen, (std::vector<std::string>{"GET /metrics ", "PUT /debug/flags/v 7"}));

  server.stop();
  EXPECT_NE(::access(path.c_str(), F_OK), 0);  // the socket file is removed
}

TEST(DebugSocketTest, AStaleSocketIsReplacedAndAnythingElseIsKept) {
  TempDir dir;
  const std::string stale = dir.file("stale.sock");
  {
    DebugSocketServer first(stale, echo);
    first.start();
    // A process that died leaves its socket file: simulated by starting again over it.
    DebugSocketServer second(stale, echo);
    second.start();
    EXPECT_NE(unixRequest(stale, "GET /z HTTP/1.1\r\nHost: x\r\n\r\n").find("/z"),
              std::string::npos);
  }
  EXPECT_NE(::access(stale.c_str(), F_OK), 0);
  const std::string file = dir.file("not-a-socket");
  std::ofstream(file) << "keep me";
  DebugSocketServer refused(file, echo);
  try {
    refused.start();
    ADD_FAILURE() << "started over a regular file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--debug-socket-path"), std::string::npos) << e.what();
  }
  std::string kept;
  std::getline(std::ifstream(file), kept);
  EXPECT_EQ(kept, "keep me");
}

}  // namespace
}  // namespace metrics_adapter::server
