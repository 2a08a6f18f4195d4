// A stand-in for the Prometheus HTTP API, fast enough not to be what a benchmark measures.
//
//   /api/v1/series  N synthetic dcgm-exporter GPU series (whatever match[] asks), generated and
//                   streamed with chunked encoding, never held whole: in 64 KB chunks, or
//                   with --one-chunk true as one chunk, as Prometheus (Go net/http) sends it;
//                   gzipped in 2 KiB chunks when the client asks for gzip, as Prometheus does.
//   /api/v1/query   an instant vector with one sample per pod the PromQL names through its
//                   pod matcher (pod="a", pod=~"a|b|c", or pod!="" for every bench pod). For
//                   the resource rules' container queries (config/resource-rules.yaml, grouped
//                   by pod,container) each sample also carries container="app", and its value
//                   is cores (container_cpu_*) or bytes (container_memory_*).
//   /stats          {"series_calls", "query_calls", "query_busy_us"} as JSON.
//
// The series are those of synthetic_series.h. Plain HTTP/1.1 with keep-alive, one thread per
// connection.

// Boost 1.74's Asio uses std::exchange without including <utility> under C++20.
#include <utility>
// clang-format off
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <zlib.h>
// clang-format on
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "metrics_adapter/text/ascii.h"
#include "synthetic_series.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct Options {
  unsigned short port = 0;
  std::size_t series = 10000;
  bench::SeriesShape shape;
  bool one_chunk = false;  // the series answer as one HTTP chunk, as Prometheus sends it
};

struct Counters {
  std::atomic<std::uint64_t> series_calls{0};
  std::atomic<std::uint64_t> query_calls{0};
  std::atomic<std::uint64_t> query_busy_us{0};
};

std::string percentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out.push_back(' ');
    } else if (text[i] == '%' && i + 2 < text.size()) {
      int value = 0;
      std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16);
      out.push_back(static_cast<char>(value));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// The decoded value of `name` in a query string or form body, "" when absent.
std::string formValue(std::string_view form, std::string_view name) {
  while (!form.empty()) {
    const auto amp = form.find('&');
    const std::string_view item = form.substr(0, amp);
    const auto eq = item.find('=');
    if (eq != std::string_view::npos && percentDecode(item.substr(0, eq)) == name) {
      return percentDecode(item.substr(eq + 1));
    }
    if (amp == std::string_view::npos) break;
    form.remove_prefix(amp + 1);
  }
  return "";
}

void writeChunk(tcp::socket& socket, const std::string& data) {
  char size[32];
  const int length = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::vector<asio::const_buffer> buffers = {asio::buffer(size, static_cast<std::size_t>(length)),
                                             asio::buffer(data), asio::buffer("\r\n", 2)};
  asio::write(socket, buffers);
}

// Calls write(piece) with the series answer in pieces of about 64 KB.
template <class Write>
void produceSeriesAnswer(const Options& options, const Write& write) {
  std::string piece = R"({"status":"success","data":[)";
  piece.reserve(70000);
  for (std::size_t i = 0; i < options.series; ++i) {
    if (i > 0) piece += ',';
    bench::appendSeries(piece, i, options.shape);
    if (piece.size() >= 64000) {
      write(piece);
      piece.clear();
    }
  }
  piece += "]}";
  write(piece);
}

// Prometheus 2.42's test (util/httputil): a comma-separated token, trimmed, equal to "gzip".
// "gzip;q=0.5" does not count, which is what hid round 2's header (docs/performance.md).
bool asksForGzip(std::string_view accept_encoding) {
  while (!accept_encoding.empty()) {
    const std::size_t comma = accept_encoding.find(',');
    if (metrics_adapter::text::trimAsciiSpace(accept_encoding.substr(0, comma)) == "gzip") {
      return true;
    }
    if (comma == std::string_view::npos) break;
    accept_encoding.remove_prefix(comma + 1);
  }
  return false;
}

// The series answer gzipped as Prometheus's Go server does it (level 6), made once: the bench
// measures the adapter inflating it, not the fake compressing 300 MB per relist.
const std::string& gzippedSeriesAnswer(const Options& options) {
  static std::once_flag once;
  static std::string compressed;
  std::call_once(once, [&] {
    z_stream stream{};
    constexpr int kGzipWindowBits = 15 + 16;  // 16: a gzip header and trailer
    constexpr int kGoDefaultLevel = 6;
    deflateInit2(&stream, kGoDefaultLevel, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY);
    std::string out(1 << 16, '\0');
    const auto pump = [&](const std::string& piece, int flush) {
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(piece.data()));
      stream.avail_in = static_cast<uInt>(piece.size());
      do {
        stream.next_out = reinterpret_cast<Bytef*>(out.data());
        stream.avail_out = static_cast<uInt>(out.size());
        deflate(&stream, flush);
        compressed.append(out.data(), out.size() - stream.avail_out);
      } while (stream.avail_out == 0);
    };
    produceSeriesAnswer(options, [&](const std::string& piece) { pump(piece, Z_NO_FLUSH); });
    pump(std::string(), Z_FINISH);
    deflateEnd(&stream);
  });
  return compressed;
}

// Go's net/http writes a gzip writer's output through a 2 KiB buffer: one chunk per 2 KiB.
void serveGzippedSeries(tcp::socket& socket, const Options& options, bool keep_alive) {
  std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
      "Transfer-Encoding: chunked\r\n";
  head += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  asio::write(socket, asio::buffer(head));
  const std::string& body = gzippedSeriesAnswer(options);
  constexpr std::size_t kGoChunk = 2048;
  std::string framed;  // many chunks per socket write, to keep the fake's own CPU low
  for (std::size_t at = 0; at < body.size(); at += kGoChunk) {
    const std::size_t size = std::min(kGoChunk, body.size() - at);
    char header[32];
    const int length = std::snprintf(header, sizeof header, "%zx\r\n", size);
    framed.append(header, static_cast<std::size_t>(length)).append(body, at, size).append("\r\n");
    if (framed.size() >= 65536) {
      asio::write(socket, asio::buffer(framed));
      framed.clear();
    }
  }
  framed += "0\r\n\r\n";
  asio::write(socket, asio::buffer(framed));
}

void serveSeries(tcp::socket& socket, const Options& options, bool keep_alive) {
  std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n";
  head += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  asio::write(socket, asio::buffer(head));
  if (options.one_chunk) {
    // As Prometheus sends it: Go's net/http makes the one Write of the marshalled answer one
    // chunk. Sized by a first pass, then streamed, so the fake still holds 64 KB at a time.
    std::size_t size = 0;
    produceSeriesAnswer(options, [&](const std::string& piece) { size += piece.size(); });
    char header[32];
    const int length = std::snprintf(header, sizeof header, "%zx\r\n", size);
    asio::write(socket, asio::buffer(header, static_cast<std::size_t>(length)));
    produceSeriesAnswer(
        options, [&](const std::string& piece) { asio::write(socket, asio::buffer(piece)); });
    asio::write(socket, asio::buffer("\r\n", 2));
  } else {
    produceSeriesAnswer(options, [&](const std::string& piece) { writeChunk(socket, piece); });
  }
  asio::write(socket, asio::buffer("0\r\n\r\n", 5));
}

// The pods the PromQL's pod matcher names; every bench pod for pod!="" or pod=~".+".
std::vector<std::string> podsNamed(const std::string& promql, const Options& options) {
  std::vector<std::string> pods;
  for (std::size_t at = promql.find("pod"); at != std::string::npos;
       at = promql.find("pod", at + 1)) {
    if (at > 0 && promql[at - 1] != '{' && promql[at - 1] != ',' && promql[at - 1] != ' ') {
      continue;
    }
    std::string_view rest = std::string_view(promql).substr(at + 3);
    std::string_view op = rest.substr(0, rest.find('"'));
    if (op != "=" && op != "=~" && op != "!=") continue;
    rest.remove_prefix(op.size() + 1);
    std::string value;
    for (std::size_t i = 0; i < rest.size() && rest[i] != '"'; ++i) {
      if (rest[i] == '\\' && i + 1 < rest.size()) ++i;
      if (rest[i] != '\\') value.push_back(rest[i]);
    }
    if (op == "!=" || value == ".+" || value == ".*") {
      for (std::size_t k = 0; k < options.shape.pods; ++k)
        pods.push_back("bench-pod-" + std::to_string(k));
      return pods;
    }
    std::string_view names = value;
    while (!names.empty()) {
      const auto bar = names.find('|');
      pods.emplace_back(names.substr(0, bar));
      if (bar == std::string_view::npos) break;
      names.remove_prefix(bar + 1);
    }
    return pods;
  }
  return pods;
}

std::string queryAnswer(const std::string& promql, const std::string& time,
                        const Options& options) {
  const bool cpu = promql.find("container_cpu_") != std::string::npos;
  const bool memory = promql.find("container_memory_") != std::string::npos;
  std::string out = R"({"status":"success","data":{"resultType":"vector","result":[)";
  bool first = true;
  for (const auto& pod : podsNamed(promql, options)) {
    if (!first) out += ',';
    first = false;
    const auto hash = std::hash<std::string>{}(pod);
    std::string value;
    if (cpu) {
      value = std::to_string(0.001 * static_cast<double>(1 + hash % 2000));  // 1m to 2 cores
    } else if (memory) {
      value = std::to_string((1 + hash % 1024) << 20);  // 1 to 1024 MiB
    } else {
      value = std::to_string(40 + hash % 6000 / 100.0);
    }
    out += R"({"metric":{"pod":")" + pod;
    if (cpu || memory) out += R"(","container":"app)";
    out += R"("},"value":[)" + (time.empty() ? "0" : time) + R"(,")" + value + R"("]})";
  }
  out += "]}}";
  return out;
}

void serveConnection(tcp::socket socket, const Options& options, Counters& counters) {
  beast::flat_buffer buffer;
  beast::error_code error;
  while (true) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(16 << 20);
    http::read(socket, buffer, parser, error);
    if (error) return;
    const auto& request = parser.get();
    const std::string_view target(request.target().data(), request.target().size());
    const auto question = target.find('?');
    const std::string_view path = target.substr(0, question);
    const std::string_view form =
        request.method() == http::verb::post
            ? std::string_view(request.body())
            : (question == std::string_view::npos ? std::string_view()
                                                  : target.substr(question + 1));
    const bool keep_alive = request.keep_alive();
    if (path == "/api/v1/series") {
      ++counters.series_calls;
      // As Prometheus 2.42: gzip when one token of Accept-Encoding is exactly "gzip".
      const beast::string_view accept_encoding = request[http::field::accept_encoding];
      if (asksForGzip({accept_encoding.data(), accept_encoding.size()})) {
        serveGzippedSeries(socket, options, keep_alive);
      } else {
        serveSeries(socket, options, keep_alive);
      }
      if (!keep_alive) return;
      continue;
    }
    http::response<http::string_body> response{http::status::ok, request.version()};
    response.set(http::field::content_type, "application/json");
    response.keep_alive(keep_alive);
    if (path == "/api/v1/query") {
      const auto began = std::chrono::steady_clock::now();
      ++counters.query_calls;
      response.body() = queryAnswer(formValue(form, "query"), formValue(form, "time"), options);
      counters.query_busy_us +=
          static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                         std::chrono::steady_clock::now() - began)
                                         .count());
    } else if (path == "/stats") {
      response.body() = "{\"series_calls\":" + std::to_string(counters.series_calls) +
                        ",\"query_calls\":" + std::to_string(counters.query_calls) +
                        ",\"query_busy_us\":" + std::to_string(counters.query_busy_us) + "}";
    } else if (path == "/-/ready") {
      response.body() = "ready";
    } else {
      response.result(http::status::not_found);
      response.body() = R"({"status":"error","errorType":"not_found","error":"no such path"})";
    }
    response.prepare_payload();
    http::write(socket, response, error);
    if (error || !keep_alive) return;
  }
}

std::size_t numberArg(const char* value) {
  return static_cast<std::size_t>(std::strtoull(value, nullptr, 10));
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view name = argv[i];
    if (name == "--port") {
      options.port = static_cast<unsigned short>(numberArg(argv[i + 1]));
    } else if (name == "--series") {
      options.series = numberArg(argv[i + 1]);
    } else if (name == "--metrics") {
      options.shape.metrics =
          std::clamp<std::size_t>(numberArg(argv[i + 1]), 1, bench::kMaxMetrics);
    } else if (name == "--pods") {
      options.shape.pods = numberArg(argv[i + 1]);
    } else if (name == "--one-chunk") {
      options.one_chunk = std::string_view(argv[i + 1]) == "true";
    } else {
      std::cerr << "usage: fake_prometheus [--port P] [--series N] [--metrics K] [--pods P] "
                   "[--one-chunk true|false]\n";
      return 2;
    }
  }
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), options.port));
  // Compressed before the port is printed: the first relist would otherwise wait for it.
  gzippedSeriesAnswer(options);
  // The driver reads the port from the first line.
  std::cout << acceptor.local_endpoint().port() << std::endl;
  Counters counters;
  while (true) {
    tcp::socket socket(io);
    acceptor.accept(socket);
    socket.set_option(tcp::no_delay(true));
    std::thread([socket = std::move(socket), &options, &counters]() mutable {
      try {
        serveConnection(std::move(socket), options, counters);
      } catch (const std::exception&) {
        // The peer went away mid-answer; nothing to clean up.
      }
    }).detach();
  }
}
