#pragma once

namespace metrics_adapter::auth {

// Whether an auth stage may ask the Kubernetes API (TokenReview, SubjectAccessReview) or must
// decide from what it already holds: certificates, always-allowed paths and its caches. The
// request pipeline answers discovery documents on the I/O thread with kCachedOnly, where a
// call would stall every connection of that thread; a request that needs one goes to a worker.
enum class Reviews { kMayAsk, kCachedOnly };

}  // namespace metrics_adapter::auth
