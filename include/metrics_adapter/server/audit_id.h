#pragma once

#include <array>
#include <string_view>

namespace metrics_adapter::server {

// A random (version 4) UUID, as upstream's auditID: 36 characters. Cheap enough for every
// request on an I/O thread (two draws of a per-thread generator, no allocation).
using AuditId = std::array<char, 36>;
AuditId newAuditId();

// The audit ID a request asks for in its Audit-ID header (`header`: the first value), without
// the spaces and tabs around it, as Go's header parser keeps it; "" when none, and then the
// server makes one. Upstream (apiserver filters.WithAuditInit) takes any non-empty value as it
// is, neither checked nor truncated, so that the kube-apiserver's proxy can hand its own ID on;
// the header parser has already refused CR, LF and NUL in it. A view of `header`.
std::string_view requestedAuditId(std::string_view header);

}  // namespace metrics_adapter::server
