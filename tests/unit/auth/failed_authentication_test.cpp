#include "metrics_adapter/auth/failed_authentication.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace metrics_adapter::auth {
namespace {

TEST(FailedAuthenticationMessageTest, NamesTheCredentialsTriedInUpstreamsOrder) {
  struct Case {
    std::string name;
    std::string authorization;  // "" for no header
    std::string target;
    bool certificate;
    std::string message;
  };
  const std::string none = "Authentication failed, no credentials provided";
  const std::string tried = "Authentication failed, attempted: ";
  // "alice:secret" and "alice" (no ':') in base64.
  const std::string basic = "YWxpY2U6c2VjcmV0";
  const std::string no_colon = "YWxpY2U=";
  for (const Case& c : std::vector<Case>{
           {"nothing", "", "/apis", false, none},
           {"bearer", "Bearer abc", "/apis", false, tried + "bearer"},
           {"bearer in any case, spaces around", "  bEaReR abc ", "/apis", false, tried + "bearer"},
           {"bearer without a token is none", "Bearer", "/apis", false, none},
           {"bearer and spaces only is none (they are trimmed)", "Bearer  ", "/apis", false, none},
           {"bearer, two spaces, a token", "Bearer  abc", "/apis", false, tried + "bearer"},
           {"basic", "Basic " + basic, "/apis", false, tried + "basic"},
           {"basic in any case", "bAsIc " + basic, "/apis", false, tried + "basic"},
           {"basic without a colon is none", "Basic " + no_colon, "/apis", false, none},
           {"basic that is not base64 is none", "Basic !!!!", "/apis", false, none},
           {"basic unpadded is none", "Basic YWxpY2U6c2VjcmV", "/apis", false, none},
           {"another scheme is none", "Negotiate abc", "/apis", false, none},
           {"access_token", "", "/apis?access_token=t", false, tried + "access_token"},
           {"access_token encoded", "", "/apis?a=b&access%5Ftoken=%74", false,
            tried + "access_token"},
           {"blank access_token", "", "/apis?access_token=+%20", false, none},
           {"only the first access_token counts", "", "/apis?access_token=&access_token=t", false,
            none},
           {"x509", "", "/apis", true, tried + "x509"},
           {"everything, in order", "Bearer abc", "/apis?access_token=t", true,
            tried + "bearer, access_token, x509"},
       }) {
    server::HttpRequest request;
    request.method = "GET";
    request.target = c.target;
    if (!c.authorization.empty()) request.headers = {{"Authorization", c.authorization}};
    if (c.certificate) request.peer_certificates_pem = {"-----BEGIN CERTIFICATE-----..."};
    EXPECT_EQ(failedAuthenticationMessage(request), c.message) << c.name;
  }
}

}  // namespace
}  // namespace metrics_adapter::auth
