{{/*
Names, labels and the per-component settings every template shares.
A "component context" is (dict "root" $ "name" <component name>).
*/}}

{{- define "mithril.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mithril.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "mithril.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object of the release. */}}
{{- define "mithril.labels" -}}
helm.sh/chart: {{ include "mithril.chart" . }}
{{ include "mithril.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: mithril
{{- end }}

{{/* Selects every pod of the release. */}}
{{- define "mithril.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mithril.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The name of a component's objects: <fullname>-<component>. */}}
{{- define "mithril.componentName" -}}
{{- printf "%s-%s" (include "mithril.fullname" .root) .name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mithril.componentLabels" -}}
{{ include "mithril.labels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end }}

{{- define "mithril.componentSelectorLabels" -}}
{{ include "mithril.selectorLabels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end }}

{{/*
A component's settings: `default` with the component's own entry merged over it (maps key
by key, lists and scalars replaced), as YAML; read it with `include ... | fromYaml`.
*/}}
{{- define "mithril.config" -}}
{{- $spec := index .root.Values.components .name }}
{{- toYaml (mergeOverwrite (deepCopy .root.Values.default) (deepCopy $spec)) }}
{{- end }}

{{- define "mithril.enabled" -}}
{{- $spec := index .root.Values.components .name | default dict }}
{{- if $spec.enabled }}true{{ end }}
{{- end }}

{{/*
Who calls whom (the code's call graph, not a setting): the env-var addresses, the
NetworkPolicy ingress allow-lists and the callers' egress rules all come from here.
*/}}
{{- define "mithril.callGraph" -}}
gateway: [scanner, secrets, embedding, judge, reputation, memory-gate]
memory-gate: [secrets, scanner, reputation, judge]
{{- end }}

{{/* MITHRIL_<COMPONENT>, the env prefix of a component's settings. */}}
{{- define "mithril.envPrefix" -}}
{{- printf "MITHRIL_%s" (. | upper | replace "-" "_") }}
{{- end }}

{{/* A service's gRPC target, resolved by DNS to every ready pod (headless Service), so
the callers' round_robin policy balances over all replicas. */}}
{{- define "mithril.grpcTarget" -}}
{{- $spec := index .root.Values.components .name }}
{{- printf "dns:///%s.%s.svc.%s:%d" (include "mithril.componentName" .) .root.Release.Namespace .root.Values.clusterDomain (int $spec.port) }}
{{- end }}

{{- define "mithril.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{- define "mithril.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mithril.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "mithril.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "mithril.fullname" .) }}
{{- end }}

{{- define "mithril.policyConfigMapName" -}}
{{- .Values.policy.existingConfigMap | default (printf "%s-policy" (include "mithril.fullname" .)) }}
{{- end }}

{{- define "mithril.databaseConfigured" -}}
{{- if or .Values.database.url .Values.database.existingSecret }}true{{ end }}
{{- end }}

{{/* Components with a database URL setting. */}}
{{- define "mithril.databaseUsers" -}}
[gateway, reputation, memory-gate]
{{- end }}

{{- define "mithril.homePath" -}}/var/lib/mithril{{- end }}
{{- define "mithril.policyDir" -}}/etc/mithril/policy{{- end }}

{{/* The PVC a component's MITHRIL_HOME lives on. */}}
{{- define "mithril.claimName" -}}
{{- $c := include "mithril.config" . | fromYaml }}
{{- $c.persistence.existingClaim | default (printf "%s-data" (include "mithril.componentName" .)) }}
{{- end }}

{{/* The pod count a component runs at least: the HPA's minimum, or its replicas. */}}
{{- define "mithril.minReplicas" -}}
{{- $c := include "mithril.config" . | fromYaml }}
{{- if $c.autoscaling.enabled }}{{ int $c.autoscaling.minReplicas }}{{ else }}{{ int $c.replicas }}{{ end }}
{{- end }}

{{/*
Checks the values cannot express in values.schema.json; rendering fails with the reason.
*/}}
{{- define "mithril.validate" -}}
{{- $root := . }}
{{- $mg := index .Values.components "memory-gate" }}
{{- if $mg.enabled }}
{{- $c := include "mithril.config" (dict "root" $root "name" "memory-gate") | fromYaml }}
{{- if gt (int $c.replicas) 1 }}
{{- fail (printf "components.memory-gate.replicas is %d: the memory gate runs embedded Cognee on local files and must run exactly 1 replica" (int $c.replicas)) }}
{{- end }}
{{- if $c.autoscaling.enabled }}
{{- fail "components.memory-gate.autoscaling.enabled: the memory gate runs embedded Cognee on local files and cannot scale; disable its HPA" }}
{{- end }}
{{- range $needed := list "secrets" "scanner" "reputation" }}
{{- if not (include "mithril.enabled" (dict "root" $root "name" $needed)) }}
{{- fail (printf "components.memory-gate needs components.%s (it calls it on every claim); enable it or disable the memory gate" $needed) }}
{{- end }}
{{- end }}
{{- end }}
{{- if include "mithril.enabled" (dict "root" $root "name" "gateway") }}
{{- $gw := include "mithril.config" (dict "root" $root "name" "gateway") | fromYaml }}
{{- if eq (toString (index $gw.env "MITHRIL_GATEWAY_FAST_TIER" | default "local")) "remote" }}
{{- range $needed := list "scanner" "secrets" }}
{{- if not (include "mithril.enabled" (dict "root" $root "name" $needed)) }}
{{- fail (printf "the gateway calls components.%s on every request; enable it, or run the fast tier inside the gateway (drop components.gateway.env.MITHRIL_GATEWAY_FAST_TIER: remote)" $needed) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- if not (include "mithril.databaseConfigured" .) }}
{{- range $name := list "gateway" "reputation" }}
{{- if include "mithril.enabled" (dict "root" $root "name" $name) }}
{{- $min := include "mithril.minReplicas" (dict "root" $root "name" $name) | int }}
{{- $c := include "mithril.config" (dict "root" $root "name" $name) | fromYaml }}
{{- if or (gt $min 1) $c.autoscaling.enabled }}
{{- fail (printf "components.%s runs more than one replica but database.url (or database.existingSecret) is not set: each pod would keep its own SQLite file; set a PostgreSQL URL" $name) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- range $name, $spec := .Values.components }}
{{- if $spec.enabled }}
{{- $c := include "mithril.config" (dict "root" $root "name" $name) | fromYaml }}
{{- if $c.autoscaling.enabled }}
{{- if gt (int $c.autoscaling.minReplicas) (int $c.autoscaling.maxReplicas) }}
{{- fail (printf "components.%s.autoscaling: minReplicas (%d) is above maxReplicas (%d)" $name (int $c.autoscaling.minReplicas) (int $c.autoscaling.maxReplicas)) }}
{{- end }}
{{- end }}
{{- $pdb := $c.podDisruptionBudget }}
{{- if $pdb.enabled }}
{{- if and (not (kindIs "invalid" $pdb.minAvailable)) (not (kindIs "invalid" $pdb.maxUnavailable)) }}
{{- fail (printf "components.%s.podDisruptionBudget: set minAvailable or maxUnavailable, not both (make the other null)" $name) }}
{{- end }}
{{- if and (kindIs "invalid" $pdb.minAvailable) (kindIs "invalid" $pdb.maxUnavailable) }}
{{- fail (printf "components.%s.podDisruptionBudget: set minAvailable or maxUnavailable" $name) }}
{{- end }}
{{- $min := include "mithril.minReplicas" (dict "root" $root "name" $name) | int }}
{{- if and (kindIs "float64" $pdb.minAvailable) (ge (int $pdb.minAvailable) $min) }}
{{- fail (printf "components.%s.podDisruptionBudget.minAvailable (%d) leaves no pod to evict with %d replica(s): it would block every node drain" $name (int $pdb.minAvailable) $min) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* A grpc probe on the component's gRPC port, with the timing from `probes.<kind>`. */}}
{{- define "mithril.probe" -}}
grpc:
  port: {{ .port }}
{{- range $key, $value := .timing }}
{{ $key }}: {{ int $value }}
{{- end }}
{{- end }}

{{/*
The container's environment: downward-API values first (OTEL_RESOURCE_ATTRIBUTES refers to
them), then the plain settings (the chart's, with `env` merged over them), then every secret
through secretKeyRef, then `extraEnv`.
*/}}
{{- define "mithril.env" -}}
{{- $root := .root }}
{{- $name := .name }}
{{- $c := include "mithril.config" . | fromYaml }}
{{- $prefix := include "mithril.envPrefix" $name }}
{{- $graph := include "mithril.callGraph" . | fromYaml }}
{{- $secret := include "mithril.secretName" $root }}
{{- $plain := dict
  "MITHRIL_HOME" (include "mithril.homePath" .)
  "HOME" (include "mithril.homePath" .)
  "PYTHONUNBUFFERED" "1"
  "OTEL_SERVICE_NAME" (printf "mithril-%s" $name)
}}
{{- if eq $name "gateway" }}
{{- $_ := set $plain "MITHRIL_GATEWAY_GRPC_PORT" (toString (int $c.port)) }}
{{- $_ := set $plain "MITHRIL_GATEWAY_HTTP_PORT" (toString (int $c.httpPort)) }}
{{- $_ := set $plain "MITHRIL_GATEWAY_HTTP_HOST" "0.0.0.0" }}
{{- $_ := set $plain "MITHRIL_GATEWAY_POLICY_FILE" (printf "%s/policy.yaml" (include "mithril.policyDir" .)) }}
{{- $tiers := list }}
{{- if include "mithril.enabled" (dict "root" $root "name" "embedding") }}
{{- $tiers = concat $tiers (list "embedding" "classifier") }}
{{- end }}
{{- if include "mithril.enabled" (dict "root" $root "name" "judge") }}
{{- $tiers = append $tiers "judge" }}
{{- end }}
{{- $_ := set $plain "MITHRIL_GATEWAY_LEARNED_TIERS" (toJson $tiers) }}
{{- else }}
{{- $_ := set $plain (printf "%s_PORT" $prefix) (toString (int $c.port)) }}
{{- end }}
{{- range $callee := (index $graph $name | default list) }}
{{- $key := printf "%s_%s_ADDR" $prefix ($callee | upper | replace "-" "_") }}
{{- if include "mithril.enabled" (dict "root" $root "name" $callee) }}
{{- $_ := set $plain $key (include "mithril.grpcTarget" (dict "root" $root "name" $callee)) }}
{{- else if and (eq $name "memory-gate") (eq $callee "judge") }}
{{- /* An empty judge address makes the memory gate skip the judge. */}}
{{- $_ := set $plain $key "" }}
{{- end }}
{{- end }}
{{- if $c.llm }}
{{- if $c.llm.baseUrl }}
{{- $base := ternary "MITHRIL_JUDGE" (printf "%s_LLM" $prefix) (eq $name "judge") }}
{{- $_ := set $plain (printf "%s_BASE_URL" $base) $c.llm.baseUrl }}
{{- $_ := set $plain (printf "%s_MODEL" $base) $c.llm.model }}
{{- end }}
{{- end }}
{{- if $root.Values.otel.endpoint }}
{{- $_ := set $plain "OTEL_EXPORTER_OTLP_ENDPOINT" $root.Values.otel.endpoint }}
{{- end }}
{{- $attrs := list
  "k8s.pod.name=$(K8S_POD_NAME)"
  "k8s.namespace.name=$(K8S_NAMESPACE_NAME)"
  "k8s.node.name=$(K8S_NODE_NAME)"
  (printf "k8s.deployment.name=%s" (include "mithril.componentName" .))
  "service.namespace=mithril"
  "service.instance.id=$(K8S_POD_NAME)"
  (printf "service.version=%s" $root.Chart.AppVersion)
  (printf "mithril.component=%s" $name)
}}
{{- range $k, $v := $root.Values.otel.resourceAttributes }}
{{- $attrs = append $attrs (printf "%s=%v" $k $v) }}
{{- end }}
{{- $_ := set $plain "OTEL_RESOURCE_ATTRIBUTES" (join "," $attrs) }}
{{- $plain = mergeOverwrite $plain ($c.env | default dict) }}
{{- /* Secrets: env name -> (secret, key, optional). */}}
{{- $secretEnv := dict }}
{{- if eq $name "gateway" }}
{{- $_ := set $secretEnv "MITHRIL_GATEWAY_SERVICE_TOKEN" (list $secret "service-token" false) }}
{{- $_ := set $secretEnv "MITHRIL_GATEWAY_ADMIN_TOKEN" (list $secret "admin-token" false) }}
{{- $_ := set $secretEnv "MITHRIL_GATEWAY_AUTH_TOKEN" (list $secret "gateway-auth-token" true) }}
{{- else }}
{{- $_ := set $secretEnv (printf "%s_AUTH_TOKEN" $prefix) (list $secret "service-token" false) }}
{{- end }}
{{- if eq $name "memory-gate" }}
{{- $_ := set $secretEnv "MITHRIL_MEMORY_GATE_SERVICE_TOKEN" (list $secret "service-token" false) }}
{{- $_ := set $secretEnv "MITHRIL_MEMORY_GATE_LLM_API_KEY" (list $secret "memory-gate-llm-api-key" true) }}
{{- end }}
{{- if eq $name "judge" }}
{{- $_ := set $secretEnv "MITHRIL_JUDGE_API_KEY" (list $secret "judge-api-key" true) }}
{{- end }}
{{- if and (include "mithril.databaseConfigured" $root) (has $name (include "mithril.databaseUsers" . | fromYamlArray)) }}
{{- $dbSecret := $root.Values.database.existingSecret | default $secret }}
{{- $dbKey := ternary $root.Values.database.existingSecretKey "database-url" (not (empty $root.Values.database.existingSecret)) }}
{{- $_ := set $secretEnv (printf "%s_DATABASE_URL" $prefix) (list $dbSecret $dbKey false) }}
{{- end }}
{{- range $env, $key := ($c.secretEnv | default dict) }}
{{- $_ := set $secretEnv $env (list $secret $key false) }}
{{- end }}
- name: K8S_POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: K8S_NAMESPACE_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: K8S_NODE_NAME
  valueFrom:
    fieldRef:
      fieldPath: spec.nodeName
{{- range $env := keys $plain | sortAlpha }}
- name: {{ $env }}
  value: {{ index $plain $env | toString | quote }}
{{- end }}
{{- range $env := keys $secretEnv | sortAlpha }}
{{- $ref := index $secretEnv $env }}
- name: {{ $env }}
  valueFrom:
    secretKeyRef:
      name: {{ index $ref 0 }}
      key: {{ index $ref 1 }}
      {{- if index $ref 2 }}
      optional: true
      {{- end }}
{{- end }}
{{- with $c.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}
