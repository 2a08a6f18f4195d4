#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace metrics_adapter::prometheus {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// True for the bytes of an HTTP token (RFC 9110): what a header name may consist of.
bool isHeaderTokenChar(char c);

// Go's net/textproto.CanonicalMIMEHeaderKey, the form prometheus-adapter sends
// --prometheus-header names in: the first letter and every letter after a '-' upper-case, the
// other letters lower-case ("x-scope-orgid" -> "X-Scope-Orgid"). A name holding any byte that is
// not a token character is returned unchanged, as Go does.
std::string canonicalHeaderName(std::string_view name);

// `headers` with canonical names, grouped for cpprestsdk: one entry per distinct name, in the
// order each name first appears; the values of a repeated name are kept in order and joined
// with "\r\n<Name>:", so that writing the entry as "<Name>:<value>\r\n" puts one line per value
// on the wire. cpprestsdk keeps headers in a case-insensitive map and would otherwise send
// "v1, v2" in one line, which a proxy comparing tenant headers byte for byte refuses. Values
// must hold no CR, LF or NUL (the client checks that first).
HeaderList wireHeaders(const HeaderList& headers);

// "Basic " + base64("user:password"): the Authorization value of HTTP basic authentication.
std::string basicAuthorization(std::string_view username, std::string_view password);

}  // namespace metrics_adapter::prometheus
