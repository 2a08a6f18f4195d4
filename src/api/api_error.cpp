#include "metrics_adapter/api/api_error.h"

namespace metrics_adapter::api {

std::string ApiError::toStatusJson() const {
  return server::statusJson(code_, reason_, what(), details_);
}

}  // namespace metrics_adapter::api
