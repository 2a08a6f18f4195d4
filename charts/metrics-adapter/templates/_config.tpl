{{/* The preset names and the files (files/config/, copies of the repository's config/) each
is made of, in the order deploy/components lists them. */}}
{{- define "metrics-adapter.presetFiles" -}}
dcgm: [gpu-dcgm-exporter.yaml, gpu-external-rules.yaml]
alibaba: [gpu-alibaba-exporter.yaml]
llm-inference: [llm-vllm.yaml, llm-d-epp.yaml, triton.yaml]
resource-metrics: [resource-rules.yaml]
forecast: [forecast-gpu.yaml]
{{- end -}}

{{/* The presets' files merged as scripts/merge_presets.py merges them: each file's lines before
its first top-level key first, in order; then each top-level key once, with every file's body
for it, in the order the keys first appear. Comments and rule text are kept byte for byte, so
the ConfigMap reads like the presets. Then the blocks from values, under the same keys. */}}
{{- define "metrics-adapter.configText" -}}
{{- $presetFiles := include "metrics-adapter.presetFiles" . | fromYaml -}}
{{- $descriptions := list -}}
{{- $keys := list -}}
{{- $bodies := dict -}}
{{- range $preset := .Values.config.presets -}}
{{- range $file := get $presetFiles $preset -}}
{{- $key := "" -}}
{{- $lines := splitList "\n" ($.Files.Get (printf "files/config/%s" $file)) -}}
{{- $last := sub (len $lines) 1 -}}
{{- range $i, $line := $lines -}}
{{- if and (eq $i $last) (eq $line "") }}{{ break }}{{ end -}}
{{- $text := ternary $line (printf "%s\n" $line) (eq $i $last) -}}
{{- if regexMatch "^[A-Za-z]+:\\s*$" $line -}}
{{- $key = regexFind "^[A-Za-z]+" $line -}}
{{- if not (hasKey $bodies $key) -}}
{{- $keys = append $keys $key -}}
{{- $_ := set $bodies $key list -}}
{{- end -}}
{{- else if eq $key "" -}}
{{- $descriptions = append $descriptions $text -}}
{{- else -}}
{{- $_ := set $bodies $key (append (get $bodies $key) $text) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $key := list "rules" "externalRules" "forecastRules" -}}
{{- $items := get $.Values.config $key -}}
{{- if $items -}}
{{- if not (hasKey $bodies $key) -}}
{{- $keys = append $keys $key -}}
{{- $_ := set $bodies $key list -}}
{{- end -}}
{{- $block := printf "# config.%s from the chart's values\n%s\n" $key (toYaml $items) -}}
{{- $_ := set $bodies $key (append (get $bodies $key) $block) -}}
{{- end -}}
{{- end -}}
{{- range $key := list "resourceRules" "backends" -}}
{{- $block := get $.Values.config $key -}}
{{- if $block -}}
{{- if hasKey $bodies $key -}}
{{- fail (printf "config.%s: a preset already has %s (config.presets); give one or the other" $key $key) -}}
{{- end -}}
{{- $keys = append $keys $key -}}
{{- $_ := set $bodies $key (list (printf "%s\n" (toYaml $block | indent 2))) -}}
{{- end -}}
{{- end -}}
{{- join "" $descriptions -}}
{{- range $key := $keys -}}
{{- printf "%s:\n%s" $key (join "" (get $bodies $key)) -}}
{{- end -}}
{{- end -}}

{{/* True when the rendered config serves metrics.k8s.io: the chart cannot see into an existing
ConfigMap, so that one is trusted. */}}
{{- define "metrics-adapter.hasResourceRules" -}}
{{- if or .Values.config.existingConfigMap (has "resource-metrics" .Values.config.presets) .Values.config.resourceRules -}}
true
{{- end -}}
{{- end -}}
