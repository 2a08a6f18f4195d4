#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace metrics_adapter::audit {

// An event's sourceIPs as upstream's utilnet.SourceIPs lists them: each valid address of
// `forwarded_for` (X-Forwarded-For, comma-separated, spaces trimmed, duplicates kept) in order,
// then `real_ip` (X-Real-Ip) unless the chain holds it already, then the connection's address
// (`remote`, "host:port", "[v6]:port" or a bare address) unless it is the chain's last. Invalid
// entries are dropped. Addresses are written as Go's net.IP.String() writes them (10.0.0.1,
// ::ffff:10.0.0.1 as 10.0.0.1, 2001:db8::1), so equal addresses compare equal as text.
// `out` is cleared first and keeps its capacity: IPv4 addresses fit its strings' inline
// buffers, so a request through the aggregator allocates nothing here once `out` has grown.
void sourceIps(std::string_view forwarded_for, std::string_view real_ip, std::string_view remote,
               std::vector<std::string>& out);

// Appends `text` as Go's net.IP.String() writes it when it is an address that Kubernetes'
// ParseIPSloppy reads (IPv4 octets may carry leading zeros: 010.0.0.1 is 10.0.0.1; IPv6 as
// inet_pton reads it, no zone); false, with `out` untouched, otherwise.
bool appendCanonicalIp(std::string_view text, std::string& out);

// The address without its port: "10.0.0.1:5443" -> "10.0.0.1", "[::1]:443" -> "::1"; "" for
// "unknown" and "". A view of `remote`.
std::string_view sourceIp(std::string_view remote);

}  // namespace metrics_adapter::audit
