#include "prometheus/request_builder.h"

#include <cctype>
#include <stdexcept>

#include "metrics_adapter/net/url.h"
#include "metrics_adapter/text/ascii.h"
#include "metrics_adapter/text/percent_encoding.h"

namespace metrics_adapter::prometheus {
namespace {

std::invalid_argument badUrl(const std::string& url, const std::string& why) {
  return std::invalid_argument("--prometheus-url: \"" + url + "\": " + why);
}

}  // namespace

BaseUrl parseBaseUrl(const std::string& url) {
  net::UrlParts parsed;
  try {
    parsed = net::splitUrl(url);
  } catch (const std::invalid_argument&) {
    throw badUrl(url, "not a valid URL");
  }
  BaseUrl base;
  base.scheme = text::lowerAscii(parsed.scheme);
  if (base.scheme != "http" && base.scheme != "https") {
    throw badUrl(url, "the scheme must be http or https");
  }
  if (parsed.host.empty()) throw badUrl(url, "no host");
  if (!parsed.user_info.empty()) {
    throw badUrl(url,
                 "credentials in the URL are not supported; pass them with "
                 "--prometheus-header Authorization=...");
  }
  if (parsed.port < 0 || parsed.port > 65535) throw badUrl(url, "port out of range");
  base.host = parsed.host;
  base.port = parsed.port;
  base.origin = base.scheme + "://" + base.host;
  if (base.port != 0) base.origin += ":" + std::to_string(base.port);
  base.path_prefix = parsed.path;
  while (!base.path_prefix.empty() && base.path_prefix.back() == '/') base.path_prefix.pop_back();
  base.query = parsed.query;
  return base;
}

Verb parseVerb(std::string_view verb) {
  const std::string upper = text::upperAscii(verb);
  if (upper == "GET") return Verb::kGet;
  if (upper == "POST") return Verb::kPost;
  throw std::invalid_argument("--prometheus-verb: \"" + std::string(verb) +
                              "\": must be GET or POST");
}

std::string encodeParams(const Params& params) {
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out.push_back('&');
    out += text::percentEncode(name);
    out.push_back('=');
    out += text::percentEncode(value);
  }
  return out;
}

std::string formatPrometheusTime(Clock::time_point at) {
  return formatPrometheusSeconds(
      std::chrono::floor<std::chrono::milliseconds>(at.time_since_epoch()));
}

std::string formatPrometheusSeconds(std::chrono::milliseconds duration) {
  const auto millis = duration.count();
  // Format the magnitude and prepend the sign: "-0.500" must not become "-1.500".
  const bool negative = millis < 0;
  const auto magnitude =
      negative ? -static_cast<unsigned long long>(millis) : static_cast<unsigned long long>(millis);
  std::string fraction = std::to_string(magnitude % 1000);
  fraction.insert(0, 3 - fraction.size(), '0');
  return (negative ? "-" : "") + std::to_string(magnitude / 1000) + "." + fraction;
}

std::string formatPrometheusDuration(std::chrono::milliseconds duration) {
  const auto millis = duration.count();
  if (millis % 1000 == 0) return std::to_string(millis / 1000) + "s";
  return std::to_string(millis) + "ms";
}

HttpRequestSpec buildRequest(const BaseUrl& base, std::string_view endpoint, const Params& params,
                             Verb verb, std::size_t post_threshold_bytes) {
  const std::string encoded = encodeParams(params);
  HttpRequestSpec spec;
  spec.verb =
      (verb == Verb::kPost || encoded.size() > post_threshold_bytes) ? Verb::kPost : Verb::kGet;
  spec.target = base.path_prefix;
  spec.target += endpoint;
  std::string query = base.query;
  if (spec.verb == Verb::kGet && !encoded.empty()) {
    if (!query.empty()) query.push_back('&');
    query += encoded;
  } else {
    spec.body = encoded;
  }
  if (!query.empty()) spec.target += "?" + query;
  return spec;
}

}  // namespace metrics_adapter::prometheus
