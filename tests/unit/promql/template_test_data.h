#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "metrics_adapter/promql/template.h"

namespace metrics_adapter::promql::testdata {

// The fields prometheus-adapter gives metricsQuery/containerQuery/nodeQuery (docs/api-contract.md
// "prometheus-adapter: templates").
inline const std::set<std::string> kQueryFields = {"Series", "LabelMatchers", "LabelValuesByName",
                                                   "GroupBy", "GroupBySlice"};

// The fields of resources.template (docs/api-contract.md "prometheus-adapter: resource template").
inline const std::set<std::string> kResourceFields = {"Group", "Resource"};

// Custom metrics, wildcard request for pods p1 and p2 in namespace ns (docs/api-contract.md
// "prometheus-adapter: rendering by request shape", second row).
inline TemplateData customData() {
  return {
      {"Series", "http_requests_total"},
      {"LabelMatchers", R"(namespace="ns",pod=~"p1|p2")"},
      {"LabelValuesByName",
       std::map<std::string, std::string>{{"namespace", "ns"}, {"pod", "p1|p2"}}},
      {"GroupBy", "pod"},
      {"GroupBySlice", std::vector<std::string>{"pod"}},
  };
}

// Resource metrics for pods: grouped by pod and container, empty series (docs/api-contract.md
// "prometheus-adapter: resource-rule rendering").
inline TemplateData podResourceData() {
  return {
      {"Series", ""},
      {"LabelMatchers", R"(namespace="ns",pod=~"p1|p2")"},
      {"LabelValuesByName",
       std::map<std::string, std::string>{{"namespace", "ns"}, {"pod", "p1|p2"}}},
      {"GroupBy", "pod,container"},
      {"GroupBySlice", std::vector<std::string>{"pod", "container"}},
  };
}

// External metrics: selector queue=jobs in namespace ns, never a group-by (docs/api-contract.md
// "prometheus-adapter: external metrics rendering").
inline TemplateData externalData() {
  return {
      {"Series", "queue_depth"},
      {"LabelMatchers", R"(queue="jobs",namespace="ns")"},
      {"LabelValuesByName",
       std::map<std::string, std::string>{{"namespace", "ns"}, {"queue", "jobs"}}},
      {"GroupBy", ""},
      {"GroupBySlice", std::vector<std::string>{}},
  };
}

enum class DataSet { kCustom, kPodResource, kExternal };

inline TemplateData dataFor(DataSet set) {
  switch (set) {
    case DataSet::kCustom:
      return customData();
    case DataSet::kPodResource:
      return podResourceData();
    case DataSet::kExternal:
      return externalData();
  }
  return {};
}

}  // namespace metrics_adapter::promql::testdata
