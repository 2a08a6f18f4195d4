#include "metrics_adapter/net/base64.h"

#include <stdexcept>
#include <vector>

#include "net/cpprest.h"

namespace metrics_adapter::net {

std::string encodeBase64(std::string_view bytes) {
  return utility::conversions::to_base64(std::vector<unsigned char>(bytes.begin(), bytes.end()));
}

std::string decodeBase64(std::string_view text) {
  try {
    const std::vector<unsigned char> bytes = utility::conversions::from_base64(std::string(text));
    return {bytes.begin(), bytes.end()};
  } catch (const std::exception& e) {
    throw std::invalid_argument(e.what());
  }
}

}  // namespace metrics_adapter::net
