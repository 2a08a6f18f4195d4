#pragma once

#include <boost/beast/http/message.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "metrics_adapter/server/https_server.h"
#include "server/request_parser.h"
#include "server/response_body.h"

namespace metrics_adapter::server {

using BeastResponse = boost::beast::http::response<ResponseBody>;

// The handler's view of a parsed request.
HttpRequest toHttpRequest(ParsedRequest&& parsed, std::string remote_address,
                          std::vector<std::string> peer_certificates_pem);

// The wire response: Content-Type, Content-Length, `X-Content-Type-Options: nosniff`,
// `Cache-Control: no-cache, private` (unless the handler set one) and the handler's extra headers.
// For HEAD the body is dropped but Content-Length still describes it. A status outside 200..599
// becomes a 500 (logged); header lines containing CR, LF or NUL are dropped (logged).
BeastResponse toBeastResponse(HttpResponse response, bool head_request);

// A response carrying a Kubernetes Status failure body.
HttpResponse statusResponse(int code, std::string_view reason, std::string_view message);

}  // namespace metrics_adapter::server
