#include "metrics_adapter/api/openapi_documents.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "api/http_caching.h"
#include "metrics_adapter/api/api_error.h"

namespace metrics_adapter::api {
namespace {

// Every "$ref" string anywhere in `node`.
void collectRefs(const Json& node, std::vector<std::string>& refs) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (key == "$ref" && value.is_string()) {
        refs.push_back(value.get<std::string>());
      } else {
        collectRefs(value, refs);
      }
    }
  } else if (node.is_array()) {
    for (const auto& value : node) collectRefs(value, refs);
  }
}

// The (group, version, kind)s the definitions of `definitions` declare.
std::set<std::string> declaredKinds(const Json& definitions) {
  std::set<std::string> kinds;
  for (const auto& [name, schema] : definitions.items()) {
    for (const auto& gvk : schema.value("x-kubernetes-group-version-kind", Json::array())) {
      kinds.insert(gvk["group"].get<std::string>() + "/" + gvk["version"].get<std::string>() + "/" +
                   gvk["kind"].get<std::string>());
    }
  }
  return kinds;
}

TEST(OpenApiV2, EveryRefResolvesAndEveryKindWeReturnIsDefined) {
  const Json swagger = Json::parse(buildOpenApiDocuments(true, "v9.9.9").v2);
  EXPECT_EQ(swagger["swagger"], "2.0");
  EXPECT_EQ(swagger["info"]["version"], "v9.9.9");
  std::vector<std::string> refs;
  collectRefs(swagger["paths"], refs);
  collectRefs(swagger["definitions"], refs);
  ASSERT_FALSE(refs.empty());
  for (const auto& ref : refs) {
    ASSERT_EQ(ref.rfind("#/definitions/", 0), 0u) << ref;
    EXPECT_TRUE(swagger["definitions"].contains(ref.substr(14))) << ref;
  }
  const std::set<std::string> kinds = declaredKinds(swagger["definitions"]);
  for (const char* kind :
       {"custom.metrics.k8s.io/v1beta1/MetricValueList",
        "custom.metrics.k8s.io/v1beta2/MetricValueList",
        "external.metrics.k8s.io/v1beta1/ExternalMetricValueList",
        "metrics.k8s.io/v1beta1/PodMetrics", "metrics.k8s.io/v1beta1/PodMetricsList",
        "metrics.k8s.io/v1beta1/NodeMetrics", "metrics.k8s.io/v1beta1/NodeMetricsList",
        "/v1/Status", "/v1/APIResourceList"}) {
    EXPECT_TRUE(kinds.count(kind)) << kind;
  }
  for (const char* type :
       {"io.k8s.api.core.v1.ObjectReference", "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "io.k8s.apimachinery.pkg.api.resource.Quantity",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time"}) {
    EXPECT_TRUE(swagger["definitions"].contains(type)) << type;
  }
}

TEST(OpenApiV2, OperationIdsAreUniqueAndTheRoutesAreTheGenericOnes) {
  const Json swagger = Json::parse(buildOpenApiDocuments(true, "v1").v2);
  std::set<std::string> ids;
  for (const auto& [path, item] : swagger["paths"].items()) {
    for (const auto& [method, operation] : item.items()) {
      EXPECT_EQ(method, "get") << path;
      EXPECT_TRUE(ids.insert(operation["operationId"].get<std::string>()).second) << path;
      for (const auto& parameter : operation["parameters"]) {
        if (parameter["in"] == "path") {
          EXPECT_NE(path.find("{" + parameter["name"].get<std::string>() + "}"), std::string::npos)
              << path;
        }
      }
    }
  }
  for (const std::string version : {"v1beta1", "v1beta2"}) {
    const std::string prefix = "/apis/custom.metrics.k8s.io/" + version + "/";
    EXPECT_TRUE(swagger["paths"].contains(prefix + "{resource}/{name}/{subresource}"));
    EXPECT_TRUE(swagger["paths"].contains(
        prefix + "namespaces/{namespace}/{resource}/{name}/{subresource}"));
    EXPECT_TRUE(swagger["paths"].contains(prefix + "namespaces/{namespace}/metrics/{name}"));
  }
  EXPECT_TRUE(swagger["paths"].contains(
      "/apis/external.metrics.k8s.io/v1beta1/namespaces/{namespace}/{resource}"));
  const Json& pods = swagger["paths"]["/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods"];
  EXPECT_EQ(pods["get"]["x-kubernetes-group-version-kind"],
            Json({{"group", "metrics.k8s.io"}, {"kind", "PodMetrics"}, {"version", "v1beta1"}}));
  EXPECT_EQ(pods["get"]["x-kubernetes-action"], "list");
}

TEST(OpenApiDocuments, MetricsK8sIoOnlyWhenServed) {
  const OpenApiDocuments without = buildOpenApiDocuments(false, "v1");
  EXPECT_EQ(without.v2.find("\"/apis/metrics.k8s.io/"), std::string::npos);
  EXPECT_EQ(without.v2.find("pkg.apis.metrics.v1beta1"), std::string::npos);
  EXPECT_EQ(without.find("apis/metrics.k8s.io/v1beta1"), nullptr);
  EXPECT_EQ(without.v3_index.find("apis/metrics.k8s.io/"), std::string::npos);
  const OpenApiDocuments with = buildOpenApiDocuments(true, "v1");
  EXPECT_NE(with.find("apis/metrics.k8s.io/v1beta1"), nullptr);
  EXPECT_NE(with.v2_etag, without.v2_etag);
}

TEST(OpenApiDocuments, LazyDocumentsAreBuiltOnceForAllCallers) {
  const LazyOpenApiDocuments lazy(true, "v1");
  std::vector<std::shared_ptr<const OpenApiDocuments>> seen(8);
  std::vector<std::thread> callers;
  for (auto& documents : seen) {
    callers.emplace_back([&lazy, &documents] { documents = lazy.get(); });
  }
  for (auto& caller : callers) caller.join();
  ASSERT_NE(seen[0], nullptr);
  for (const auto& documents : seen) EXPECT_EQ(documents, seen[0]);
  EXPECT_EQ(lazy.get(), seen[0]);
  const OpenApiDocuments built = buildOpenApiDocuments(true, "v1");
  EXPECT_EQ(seen[0]->v2, built.v2);
  EXPECT_EQ(seen[0]->v3_index, built.v3_index);
  EXPECT_NE(LazyOpenApiDocuments(false, "v1").get()->v2_etag, seen[0]->v2_etag);
}

TEST(OpenApiV3, TheIndexNamesEachDocumentByItsContentHash) {
  const OpenApiDocuments documents = buildOpenApiDocuments(true, "v1");
  const Json index = Json::parse(documents.v3_index);
  std::set<std::string> listed;
  for (const auto& [path, entry] : index["paths"].items()) {
    listed.insert(path);
    const OpenApiGroupVersion* document = documents.find(path);
    ASSERT_NE(document, nullptr) << path;
    EXPECT_EQ(document->hash, contentHash(document->body));
    EXPECT_EQ(entry["serverRelativeURL"], "/openapi/v3/" + path + "?hash=" + document->hash);
  }
  EXPECT_EQ(listed, (std::set<std::string>{
                        "apis/custom.metrics.k8s.io/v1beta1", "apis/custom.metrics.k8s.io/v1beta2",
                        "apis/external.metrics.k8s.io/v1beta1", "apis/metrics.k8s.io/v1beta1",
                        "apis/forecast.metrics-adapter.io/v1alpha1"}));
  EXPECT_EQ(documents.v3_index_etag, quotedEtag(contentHash(documents.v3_index)));
  EXPECT_EQ(documents.v2_etag, quotedEtag(contentHash(documents.v2)));
}

TEST(OpenApiV3, EachDocumentHoldsItsOwnRoutesAndEverySchemaTheyReferTo) {
  const OpenApiDocuments documents = buildOpenApiDocuments(true, "v1");
  for (const auto& document : documents.v3) {
    const Json openapi = Json::parse(document.body);
    EXPECT_EQ(openapi["openapi"], "3.0.0");
    for (const auto& [path, item] : openapi["paths"].items()) {
      EXPECT_EQ(path.rfind("/" + document.path + "/", 0), 0u) << path;
    }
    std::vector<std::string> refs;
    collectRefs(openapi, refs);
    for (const auto& ref : refs) {
      ASSERT_EQ(ref.rfind("#/components/schemas/", 0), 0u) << ref;
      EXPECT_TRUE(openapi["components"]["schemas"].contains(ref.substr(21)))
          << document.path << ": " << ref;
    }
    EXPECT_TRUE(
        openapi["components"]["schemas"].contains("io.k8s.apimachinery.pkg.apis.meta.v1.Status"));
  }
  // A $ref with a description beside it is wrapped in allOf (3.0 ignores a $ref's siblings).
  const Json pods = Json::parse(documents.find("apis/metrics.k8s.io/v1beta1")->body);
  const Json& metadata =
      pods["components"]["schemas"]["io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics"]
          ["properties"]["metadata"];
  EXPECT_FALSE(metadata.contains("$ref"));
  EXPECT_EQ(metadata["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
  EXPECT_FALSE(metadata["description"].get<std::string>().empty());
}

TEST(HttpCaching, ContentHashIsSha512InUpperCaseHex) {
  // FIPS 180-2's test vector for "abc".
  EXPECT_EQ(contentHash("abc"),
            "DDAF35A193617ABACC417349AE20413112E6FA4E89A97EA20A9EEEE64B55D39A"
            "2192992A274FC1A836BA3C23A3FEEBBD454D4423643CE80E2A9AC94FA54CA49F");
}

TEST(HttpCaching, IfNoneMatchComparesWeaklyAndAcceptsLists) {
  EXPECT_TRUE(ifNoneMatch("\"A\"", "\"A\""));
  EXPECT_TRUE(ifNoneMatch("W/\"A\"", "\"A\""));
  EXPECT_TRUE(ifNoneMatch("\"B\", \"A\"", "\"A\""));
  EXPECT_TRUE(ifNoneMatch("*", "\"A\""));
  EXPECT_FALSE(ifNoneMatch("", "\"A\""));
  EXPECT_FALSE(ifNoneMatch("\"AB\"", "\"A\""));
  EXPECT_FALSE(ifNoneMatch("A", "\"A\""));  // unquoted: not an entity tag
}

}  // namespace
}  // namespace metrics_adapter::api
