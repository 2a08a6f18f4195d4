#pragma once

#include <map>
#include <string>
#include <vector>

namespace metrics_adapter::auth {

// Who is asking, as Kubernetes sees it (authentication.k8s.io UserInfo).
struct UserInfo {
  std::string name;  // "system:anonymous" for unauthenticated callers
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;

  bool operator==(const UserInfo&) const = default;
};

inline UserInfo anonymousUser() { return {"system:anonymous", "", {"system:unauthenticated"}, {}}; }

}  // namespace metrics_adapter::auth
