#include "api/openapi_schemas.h"

#include <nlohmann/json.hpp>

namespace metrics_adapter::api::openapi {
namespace {

// One JSON text for all of them: read once, at first use. The field descriptions are what
// `kubectl explain` shows; they describe what we serve.
constexpr const char* kDefinitions = R"json({
"io.k8s.apimachinery.pkg.api.resource.Quantity": {
  "description": "A fixed-point number with an optional suffix (\"250m\", \"1500Mi\", \"2\"), as Kubernetes writes quantities.",
  "type": "string"
},
"io.k8s.apimachinery.pkg.apis.meta.v1.Time": {
  "description": "A time in RFC 3339 form, UTC, to the second.",
  "type": "string", "format": "date-time"
},
"io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta": {
  "description": "Metadata of a list: empty in every list we serve.",
  "type": "object",
  "properties": {
    "continue": {"description": "Not used: every answer is whole.", "type": "string"},
    "remainingItemCount": {"description": "Not used: every answer is whole.", "type": "integer", "format": "int64"},
    "resourceVersion": {"description": "Not used: metric values have no versions.", "type": "string"},
    "selfLink": {"description": "Deprecated and never set.", "type": "string"}
  }
},
"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {
  "description": "Metadata of the object a resource metric describes.",
  "type": "object",
  "properties": {
    "annotations": {"description": "Not set by us.", "type": "object", "additionalProperties": {"type": "string"}},
    "creationTimestamp": {"description": "When the value was computed.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time"},
    "labels": {"description": "The labels of the pod or node the metrics belong to.", "type": "object", "additionalProperties": {"type": "string"}},
    "name": {"description": "The name of the pod or node.", "type": "string"},
    "namespace": {"description": "The namespace of the pod; empty for a node.", "type": "string"},
    "resourceVersion": {"description": "Not used.", "type": "string"},
    "selfLink": {"description": "Deprecated and never set.", "type": "string"},
    "uid": {"description": "Not set by us.", "type": "string"}
  }
},
"io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector": {
  "description": "A label query: every requirement must hold.",
  "type": "object",
  "properties": {
    "matchExpressions": {"description": "Requirements on label values.", "type": "array", "items": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement"}},
    "matchLabels": {"description": "Labels that must have exactly these values.", "type": "object", "additionalProperties": {"type": "string"}}
  },
  "x-kubernetes-map-type": "atomic"
},
"io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement": {
  "description": "One requirement of a label selector.",
  "type": "object",
  "required": ["key", "operator"],
  "properties": {
    "key": {"description": "The label's name.", "type": "string"},
    "operator": {"description": "In, NotIn, Exists or DoesNotExist.", "type": "string"},
    "values": {"description": "The values for In and NotIn; empty for Exists and DoesNotExist.", "type": "array", "items": {"type": "string"}}
  }
},
"io.k8s.apimachinery.pkg.apis.meta.v1.Status": {
  "description": "The answer to every request that fails: what went wrong and the HTTP code.",
  "type": "object",
  "properties": {
    "apiVersion": {"description": "v1.", "type": "string"},
    "code": {"description": "The HTTP status code.", "type": "integer", "format": "int32"},
    "details": {"description": "The object the failure concerns, when there is one.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails"},
    "kind": {"description": "Status.", "type": "string"},
    "message": {"description": "What went wrong, for a person.", "type": "string"},
    "metadata": {"description": "Empty.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"},
    "reason": {"description": "A machine-readable reason, e.g. NotFound, BadRequest, Forbidden, ServiceUnavailable.", "type": "string"},
    "status": {"description": "Failure.", "type": "string"}
  },
  "x-kubernetes-group-version-kind": [{"group": "", "kind": "Status", "version": "v1"}]
},
"io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails": {
  "description": "The object a failure concerns.",
  "type": "object",
  "properties": {
    "causes": {"description": "The causes, when there are several.", "type": "array", "items": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause"}},
    "group": {"description": "The API group of the object.", "type": "string"},
    "kind": {"description": "The resource of the object.", "type": "string"},
    "name": {"description": "The name of the object, e.g. the metric.", "type": "string"},
    "retryAfterSeconds": {"description": "When to try again.", "type": "integer", "format": "int32"},
    "uid": {"description": "Not set by us.", "type": "string"}
  }
},
"io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause": {
  "description": "One cause of a failure.",
  "type": "object",
  "properties": {
    "field": {"description": "The field of the request at fault.", "type": "string"},
    "message": {"description": "What is wrong with it.", "type": "string"},
    "reason": {"description": "A machine-readable reason.", "type": "string"}
  }
},
"io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList": {
  "description": "The resources a group-version serves: for custom metrics, one <resource>/<metric> entry per metric that a rule serves for that resource.",
  "type": "object",
  "required": ["groupVersion", "resources"],
  "properties": {
    "apiVersion": {"description": "v1.", "type": "string"},
    "groupVersion": {"description": "The group-version, e.g. custom.metrics.k8s.io/v1beta2.", "type": "string"},
    "kind": {"description": "APIResourceList.", "type": "string"},
    "resources": {"description": "The resources.", "type": "array", "items": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.APIResource"}}
  },
  "x-kubernetes-group-version-kind": [{"group": "", "kind": "APIResourceList", "version": "v1"}]
},
"io.k8s.apimachinery.pkg.apis.meta.v1.APIResource": {
  "description": "One resource of a group-version.",
  "type": "object",
  "required": ["name", "singularName", "namespaced", "kind", "verbs"],
  "properties": {
    "categories": {"description": "Not used.", "type": "array", "items": {"type": "string"}},
    "group": {"description": "Not used.", "type": "string"},
    "kind": {"description": "The kind of the answer, e.g. MetricValueList.", "type": "string"},
    "name": {"description": "The resource, e.g. pods/duty_cycle_current.", "type": "string"},
    "namespaced": {"description": "Whether its objects live in a namespace.", "type": "boolean"},
    "shortNames": {"description": "Not used.", "type": "array", "items": {"type": "string"}},
    "singularName": {"description": "Always empty, as upstream.", "type": "string"},
    "storageVersionHash": {"description": "Not used.", "type": "string"},
    "verbs": {"description": "get (and list for metrics.k8s.io).", "type": "array", "items": {"type": "string"}},
    "version": {"description": "Not used.", "type": "string"}
  }
},
"io.k8s.api.core.v1.ObjectReference": {
  "description": "The object a metric value describes.",
  "type": "object",
  "properties": {
    "apiVersion": {"description": "The object's API version, e.g. v1 or apps/v1.", "type": "string"},
    "fieldPath": {"description": "Not used.", "type": "string"},
    "kind": {"description": "The object's kind, e.g. Pod.", "type": "string"},
    "name": {"description": "The object's name.", "type": "string"},
    "namespace": {"description": "The object's namespace; empty for a cluster-scoped object.", "type": "string"},
    "resourceVersion": {"description": "Not used.", "type": "string"},
    "uid": {"description": "Not used.", "type": "string"}
  },
  "x-kubernetes-map-type": "atomic"
},
"io.k8s.metrics.pkg.apis.custom_metrics.v1beta1.MetricValueList": {
  "description": "The values of one custom metric for the objects asked for.",
  "type": "object",
  "required": ["items"],
  "properties": {
    "apiVersion": {"description": "custom.metrics.k8s.io/v1beta1.", "type": "string"},
    "items": {"description": "One value per object that has one.", "type": "array", "items": {"$ref": "#/definitions/io.k8s.metrics.pkg.apis.custom_metrics.v1beta1.MetricValue"}},
    "kind": {"description": "MetricValueList.", "type": "string"},
    "metadata": {"description": "Empty.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}
  },
  "x-kubernetes-group-version-kind": [{"group": "custom.metrics.k8s.io", "kind": "MetricValueList", "version": "v1beta1"}]
},
"io.k8s.metrics.pkg.apis.custom_metrics.v1beta1.MetricValue": {
  "description": "The value of a metric for one object.",
  "type": "object",
  "required": ["describedObject", "metricName", "timestamp", "value"],
  "properties": {
    "describedObject": {"description": "The object the value is for.", "$ref": "#/definitions/io.k8s.api.core.v1.ObjectReference"},
    "metricName": {"description": "The metric's name.", "type": "string"},
    "selector": {"description": "The metricLabelSelector the value was computed with; null when none was given.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"},
    "timestamp": {"description": "When the value was computed.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time"},
    "value": {"description": "The value.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"},
    "window": {"description": "The window, in seconds, a rate or average was computed over, when known.", "type": "integer", "format": "int64"}
  }
},
"io.k8s.metrics.pkg.apis.custom_metrics.v1beta2.MetricValueList": {
  "description": "The values of one custom metric for the objects asked for.",
  "type": "object",
  "required": ["items"],
  "properties": {
    "apiVersion": {"description": "custom.metrics.k8s.io/v1beta2.", "type": "string"},
    "items": {"description": "One value per object that has one.", "type": "array", "items": {"$ref": "#/definitions/io.k8s.metrics.pkg.apis.custom_metrics.v1beta2.MetricValue"}},
    "kind": {"description": "MetricValueList.", "type": "string"},
    "metadata": {"description": "Empty.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}
  },
  "x-kubernetes-group-version-kind": [{"group": "custom.metrics.k8s.io", "kind": "MetricValueList", "version": "v1beta2"}]
},
"io.k8s.metrics.pkg.apis.custom_metrics.v1beta2.MetricValue": {
  "description": "The value of a metric for one object.",
  "type": "object",
  "required": ["describedObject", "metric", "timestamp", "value"],
  "properties": {
    "describedObject": {"description": "The object the value is for.", "$ref": "#/definitions/io.k8s.api.core.v1.ObjectReference"},
    "metric": {"description": "The metric and the label selector it was computed with.", "$ref": "#/definitions/io.k8s.metrics.pkg.apis.custom_metrics.v1beta2.MetricIdentifier"},
    "timestamp": {"description": "When the value was computed.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time"},
    "value": {"description": "The value.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"},
    "windowSeconds": {"description": "The window, in seconds, a rate or average was computed over, when known.", "type": "integer", "format": "int64"}
  }
},
"io.k8s.metrics.pkg.apis.custom_metrics.v1beta2.MetricIdentifier": {
  "description": "A metric's name and the label selector its value was computed with.",
  "type": "object",
  "required": ["name"],
  "properties": {
    "name": {"description": "The metric's name.", "type": "string"},
    "selector": {"description": "The metricLabelSelector, when one was given.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"}
  }
},
"io.k8s.metrics.pkg.apis.external_metrics.v1beta1.ExternalMetricValueList": {
  "description": "The values of one external metric: one per series the external rule's query returned.",
  "type": "object",
  "required": ["items"],
  "properties": {
    "apiVersion": {"description": "external.metrics.k8s.io/v1beta1.", "type": "string"},
    "items": {"description": "One value per series.", "type": "array", "items": {"$ref": "#/definitions/io.k8s.metrics.pkg.apis.external_metrics.v1beta1.ExternalMetricValue"}},
    "kind": {"description": "ExternalMetricValueList.", "type": "string"},
    "metadata": {"description": "Empty.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}
  },
  "x-kubernetes-group-version-kind": [{"group": "external.metrics.k8s.io", "kind": "ExternalMetricValueList", "version": "v1beta1"}]
},
"io.k8s.metrics.pkg.apis.external_metrics.v1beta1.ExternalMetricValue": {
  "description": "The value of one series of an external metric.",
  "type": "object",
  "required": ["metricName", "metricLabels", "timestamp", "value"],
  "properties": {
    "metricLabels": {"description": "The series' labels.", "type": "object", "additionalProperties": {"type": "string"}},
    "metricName": {"description": "The metric's name.", "type": "string"},
    "timestamp": {"description": "When the value was computed.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time"},
    "value": {"description": "The value.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"},
    "window": {"description": "The window, in seconds, a rate or average was computed over, when known.", "type": "integer", "format": "int64"}
  }
},
"io.k8s.metrics.pkg.apis.metrics.v1beta1.ContainerMetrics": {
  "description": "The resource usage of one container.",
  "type": "object",
  "required": ["name", "usage"],
  "properties": {
    "name": {"description": "The container's name.", "type": "string"},
    "usage": {"description": "CPU (cores) and memory (bytes) in use.", "type": "object", "additionalProperties": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"}}
  }
},
"io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics": {
  "description": "The resource usage of a node, from the resource rules' queries.",
  "type": "object",
  "required": ["timestamp", "window", "usage"],
  "properties": {
    "apiVersion": {"description": "metrics.k8s.io/v1beta1.", "type": "string"},
    "kind": {"description": "NodeMetrics.", "type": "string"},
    "metadata": {"description": "The node's name and labels.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
    "timestamp": {"description": "The time of the samples.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time"},
    "usage": {"description": "CPU (cores) and memory (bytes) in use.", "type": "object", "additionalProperties": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"}},
    "window": {"description": "The window the usage was computed over, e.g. 5m0s.", "type": "string"}
  },
  "x-kubernetes-group-version-kind": [{"group": "metrics.k8s.io", "kind": "NodeMetrics", "version": "v1beta1"}]
},
"io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetricsList": {
  "description": "The resource usage of nodes.",
  "type": "object",
  "required": ["items"],
  "properties": {
    "apiVersion": {"description": "metrics.k8s.io/v1beta1.", "type": "string"},
    "items": {"description": "One entry per node with usage.", "type": "array", "items": {"$ref": "#/definitions/io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics"}},
    "kind": {"description": "NodeMetricsList.", "type": "string"},
    "metadata": {"description": "Empty.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}
  },
  "x-kubernetes-group-version-kind": [{"group": "metrics.k8s.io", "kind": "NodeMetricsList", "version": "v1beta1"}]
},
"io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics": {
  "description": "The resource usage of a pod's containers, from the resource rules' queries.",
  "type": "object",
  "required": ["timestamp", "window", "containers"],
  "properties": {
    "apiVersion": {"description": "metrics.k8s.io/v1beta1.", "type": "string"},
    "containers": {"description": "One entry per container with usage.", "type": "array", "items": {"$ref": "#/definitions/io.k8s.metrics.pkg.apis.metrics.v1beta1.ContainerMetrics"}},
    "kind": {"description": "PodMetrics.", "type": "string"},
    "metadata": {"description": "The pod's name, namespace and labels.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
    "timestamp": {"description": "The time of the samples.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time"},
    "window": {"description": "The window the usage was computed over, e.g. 5m0s.", "type": "string"}
  },
  "x-kubernetes-group-version-kind": [{"group": "metrics.k8s.io", "kind": "PodMetrics", "version": "v1beta1"}]
},
"io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetricsList": {
  "description": "The resource usage of pods.",
  "type": "object",
  "required": ["items"],
  "properties": {
    "apiVersion": {"description": "metrics.k8s.io/v1beta1.", "type": "string"},
    "items": {"description": "One entry per pod with usage.", "type": "array", "items": {"$ref": "#/definitions/io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics"}},
    "kind": {"description": "PodMetricsList.", "type": "string"},
    "metadata": {"description": "Empty.", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}
  },
  "x-kubernetes-group-version-kind": [{"group": "metrics.k8s.io", "kind": "PodMetricsList", "version": "v1beta1"}]
}
})json";

}  // namespace

const Json& definitions() {
  static const Json kParsed = Json::parse(kDefinitions);
  return kParsed;
}

}  // namespace metrics_adapter::api::openapi
