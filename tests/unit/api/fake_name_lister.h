#pragma once

#include <string>
#include <utility>
#include <vector>

#include "metrics_adapter/kube/object_lister.h"

namespace metrics_adapter::testing {

// An ObjectLister that lists the same objects, by name, whatever the resource, namespace or
// selector asked for.
class FakeNameLister : public kube::ObjectLister {
 public:
  std::vector<std::string> names;

  std::vector<std::string> listNames(const kube::ResourceInfo&, const std::string&,
                                     const promql::LabelSelector&) override {
    return names;
  }
  std::vector<kube::ObjectMeta> listObjects(const kube::ResourceInfo&, const std::string&,
                                            const promql::LabelSelector&,
                                            const std::string& = "") override {
    std::vector<kube::ObjectMeta> objects;
    for (const auto& name : names) {
      kube::ObjectMeta object;
      object.name = name;
      objects.push_back(std::move(object));
    }
    return objects;
  }
};

}  // namespace metrics_adapter::testing
