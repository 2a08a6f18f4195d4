#pragma once

#include "metrics_adapter/net/body_pipe.h"

namespace metrics_adapter::prometheus {

// The pipe moved to the net module; its tests still live with the Prometheus client.
using net::BodyPipe;

}  // namespace metrics_adapter::prometheus
