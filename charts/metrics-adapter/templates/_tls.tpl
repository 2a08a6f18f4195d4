{{/* The Secret the pod mounts as its serving certificate, whichever tls.mode made it. */}}
{{- define "metrics-adapter.tlsSecretName" -}}
{{- if eq .Values.tls.mode "existingSecret" -}}
{{- required "tls.existingSecret.name: needed with tls.mode existingSecret" .Values.tls.existingSecret.name -}}
{{- else -}}
{{- printf "%s-serving-cert" (include "metrics-adapter.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* The generated CA and serving certificate as the Secret's base64 data {ca.crt, tls.crt,
tls.key}. Read back from the cluster when the Secret exists, so `helm upgrade` keeps the CA
(and the APIServices' caBundle) instead of making a new one each time; made once per render
otherwise, and kept in .Values so the Secret and every APIService see the same CA. */}}
{{- define "metrics-adapter.generatedTLS" -}}
{{- if not (hasKey .Values.tls "_generatedData") -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "metrics-adapter.tlsSecretName" .) -}}
{{- $data := dict -}}
{{- if and $existing $existing.data (hasKey $existing.data "ca.crt") (hasKey $existing.data "tls.crt") (hasKey $existing.data "tls.key") -}}
{{- $data = pick $existing.data "ca.crt" "tls.crt" "tls.key" -}}
{{- else -}}
{{- $fullname := include "metrics-adapter.fullname" . -}}
{{- $days := int .Values.tls.generated.validityDays -}}
{{- $ca := genCA (printf "%s-ca" $fullname) $days -}}
{{- $host := include "metrics-adapter.serviceHost" . -}}
{{- $names := list $fullname (printf "%s.%s" $fullname .Release.Namespace) $host (printf "%s.cluster.local" $host) -}}
{{- $cert := genSignedCert $host nil $names $days $ca -}}
{{- $data = dict "ca.crt" ($ca.Cert | b64enc) "tls.crt" ($cert.Cert | b64enc) "tls.key" ($cert.Key | b64enc) -}}
{{- end -}}
{{- $_ := set .Values.tls "_generatedData" $data -}}
{{- end -}}
{{- toJson (get .Values.tls "_generatedData") -}}
{{- end -}}

{{/* The TLS part of an APIService's spec, never insecureSkipTLSVerify. */}}
{{- define "metrics-adapter.apiserviceCA" -}}
{{- if eq .Values.tls.mode "generated" -}}
caBundle: {{ get (include "metrics-adapter.generatedTLS" . | fromJson) "ca.crt" }}
{{- else if eq .Values.tls.mode "existingSecret" -}}
caBundle: {{ required "tls.existingSecret.caBundle: the CA's PEM is needed with tls.mode existingSecret" .Values.tls.existingSecret.caBundle | b64enc }}
{{- end -}}
{{- end -}}

{{- define "metrics-adapter.apiserviceAnnotations" -}}
{{- if eq .Values.tls.mode "certManager" -}}
cert-manager.io/inject-ca-from: {{ printf "%s/%s-serving-cert" .Release.Namespace (include "metrics-adapter.fullname" .) }}
{{- end -}}
{{- end -}}
