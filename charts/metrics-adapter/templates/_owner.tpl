{{/* Only one APIService can be v1beta1.metrics.k8s.io. When the cluster's is another service's
(metrics-server's, usually) or the API server's own, installing would silently take `kubectl
top` and every HPA of `type: Resource` away from it: refused, naming the owner, unless
apis.resourceMetrics.replaceExisting. Ours (this release's Service) is fine: that is an upgrade.
`helm template` has no cluster, finds nothing and renders. */}}
{{- define "metrics-adapter.checkMetricsOwner" -}}
{{- $current := lookup "apiregistration.k8s.io/v1" "APIService" "" "v1beta1.metrics.k8s.io" -}}
{{- if and $current (not .Values.apis.resourceMetrics.replaceExisting) -}}
{{- $service := dig "spec" "service" dict $current -}}
{{- $ours := and $service (eq (get $service "name") (include "metrics-adapter.fullname" .)) (eq (get $service "namespace") .Release.Namespace) -}}
{{- if not $ours -}}
{{- $owner := "the Kubernetes API server itself (a local APIService)" -}}
{{- if $service -}}
{{- $owner = printf "service %s/%s" (get $service "namespace") (get $service "name") -}}
{{- end -}}
{{- fail (printf "apis.resourceMetrics.enabled: v1beta1.metrics.k8s.io is served by %s. Taking it over moves `kubectl top` and HPA metrics of type Resource to this adapter. To do so, remove that APIService first (kubectl delete apiservice v1beta1.metrics.k8s.io), or set apis.resourceMetrics.replaceExisting=true and install with --take-ownership --force, which replaces it (README.md, \"metrics.k8s.io\")" $owner) -}}
{{- end -}}
{{- end -}}
{{- end -}}
