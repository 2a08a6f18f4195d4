#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace metrics_adapter::api {

// One OpenAPI v3 document: the routes of one group-version.
struct OpenApiGroupVersion {
  std::string path;  // the index key, "apis/<group>/<version>"
  std::string body;  // compact JSON
  std::string hash;  // SHA-512 of body, upper-case hex: the index's ?hash= and the ETag
};

// What /openapi/v2 and /openapi/v3[/apis/<group>/<version>] serve (docs/api-contract.md
// "OpenAPI"), rendered once: the routes are the generic ones, as custom-metrics-apiserver
// publishes them ({resource}/{name}/{subresource} ...), so nothing here depends on which
// metrics exist; only on whether metrics.k8s.io is served. Every kind we return is defined with
// its x-kubernetes-group-version-kind, so `kubectl explain` and the aggregator's merger know it.
struct OpenApiDocuments {
  std::string v2;        // Swagger 2.0, compact JSON
  std::string v2_etag;   // quoted, as the ETag header carries it
  std::string v3_index;  // {"paths": {"apis/<g>/<v>": {"serverRelativeURL": ...?hash=}}}
  std::string v3_index_etag;
  std::vector<OpenApiGroupVersion> v3;

  // The document for "apis/<group>/<version>", or null.
  const OpenApiGroupVersion* find(const std::string& path) const;
};

// The documents for custom.metrics.k8s.io v1beta1 and v1beta2, external.metrics.k8s.io v1beta1,
// forecast.metrics-adapter.io v1alpha1 and, with `resource_metrics`, metrics.k8s.io v1beta1
// (never listed otherwise: the aggregator would send that group's OpenAPI requests to us even
// where metrics-server serves it). `version` is the binary's, for info.version.
OpenApiDocuments buildOpenApiDocuments(bool resource_metrics, const std::string& version);

// buildOpenApiDocuments' documents, built when first asked for (issue 47: the two variants built
// at start were 0.19 MB of the idle heap, heaptrack). The aggregator fetches OpenAPI soon after
// the APIService is available, and then only the variant served is built; a server nobody asks
// (outside a cluster, behind no aggregator) holds neither. Thread-safe.
class LazyOpenApiDocuments {
 public:
  LazyOpenApiDocuments(bool resource_metrics, std::string version);

  // The documents, built by the first call (a few milliseconds; later callers wait for it).
  std::shared_ptr<const OpenApiDocuments> get() const;

 private:
  bool resource_metrics_;
  std::string version_;
  mutable std::once_flag built_;
  mutable std::shared_ptr<const OpenApiDocuments> documents_;
};

}  // namespace metrics_adapter::api
