{{/* The release's full name: "metrics-adapter" for `helm install metrics-adapter`, so the
objects carry the names deploy/ gives them. */}}
{{- define "metrics-adapter.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "metrics-adapter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "metrics-adapter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "metrics-adapter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "metrics-adapter.labels" -}}
{{ include "metrics-adapter.selectorLabels" . }}
app.kubernetes.io/part-of: metrics-adapter
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "metrics-adapter.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "metrics-adapter.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: needed when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The name the aggregator dials, which the serving certificate must carry. */}}
{{- define "metrics-adapter.serviceHost" -}}
{{- printf "%s.%s.svc" (include "metrics-adapter.fullname" .) .Release.Namespace -}}
{{- end -}}

{{- define "metrics-adapter.configMapName" -}}
{{- default (printf "%s-config" (include "metrics-adapter.fullname" .)) .Values.config.existingConfigMap -}}
{{- end -}}
