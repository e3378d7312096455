{{/*
Labels on every object. Selectors use only switchyard.selector (plus the worker group): they are
immutable, and they are the kustomize tree's, so the two paths select the same pods.
*/}}
{{- define "switchyard.labels" -}}
app.kubernetes.io/name: switchyard
app.kubernetes.io/part-of: switchyard
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "switchyard.image" -}}
{{ .repository }}:{{ .tag }}
{{- end -}}

{{/* The restricted pod and container security settings both apps run with (uid 1000 = node). */}}
{{- define "switchyard.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "switchyard.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end -}}

{{/* startup/readiness/liveness probes on the named port "http", the same for both apps. */}}
{{- define "switchyard.probes" -}}
startupProbe:
  httpGet:
    path: /health/live
    port: http
  periodSeconds: 2
  failureThreshold: 60
readinessProbe:
  httpGet:
    path: /health/ready
    port: http
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 3
livenessProbe:
  httpGet:
    path: /health/live
    port: http
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 6
{{- end -}}

{{/* Scrape annotations and the config checksum (the ConfigMaps have fixed names, so this rolls the pods). */}}
{{- define "switchyard.podAnnotations" -}}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .port | quote }}
prometheus.io/path: /metrics
checksum/config: {{ include "switchyard.configFile" .root | sha256sum }}
checksum/env: {{ include "switchyard.envData" .root | sha256sum }}
{{- end -}}

{{/* switchyard.yaml: servers, teams and the other sections from config. */}}
{{- define "switchyard.configFile" -}}
{{- $file := deepCopy (.Values.config | default dict) -}}
{{- $_ := set $file "servers" .Values.servers -}}
{{- $_ := set $file "teams" .Values.teams -}}
{{- toYaml $file -}}
{{- end -}}

{{/* The data of ConfigMap switchyard-env. */}}
{{- define "switchyard.envData" -}}
{{- $env := dict "SWITCHYARD_CONFIG" "/etc/switchyard/switchyard.yaml" "SWITCHYARD_PREFIX" .Values.prefix "DATABASE_SCHEMA" .Values.databaseSchema "LOG_LEVEL" .Values.logLevel "SWITCHYARD_BACKEND" .Values.backend -}}
{{- range $key, $value := .Values.env }}{{ $_ := set $env $key (toString $value) }}{{ end -}}
{{- toYaml $env -}}
{{- end -}}

{{/* BullMQ's PostgreSQL schema for the prefix: "." and "-" become "_", plus "_queues". */}}
{{- define "switchyard.queueSchema" -}}
{{ .Values.prefix | replace "." "_" | replace "-" "_" }}_queues
{{- end -}}

{{/*
Refuses values the apps or KEDA would trip over later, naming the key: an unknown backend, a server no
group serves or two groups serve, a group naming a server that is not configured.
*/}}
{{- define "switchyard.validate" -}}
{{- if not (has .Values.backend (list "redis" "postgres")) -}}
{{- fail (printf "backend: expected \"redis\" or \"postgres\", got %q" (toString .Values.backend)) -}}
{{- end -}}
{{- if not .Values.workerGroups -}}
{{- fail "workerGroups: at least one worker group is needed to run the servers' calls" -}}
{{- end -}}
{{- range $group, $spec := .Values.workerGroups -}}
{{- if not $spec.servers -}}
{{- fail (printf "workerGroups.%s.servers: empty; list the servers this group runs" $group) -}}
{{- end -}}
{{- range $spec.servers -}}
{{- if not (hasKey $.Values.servers .) -}}
{{- fail (printf "workerGroups.%s.servers: %q is not a key of servers" $group .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $server, $_ := .Values.servers -}}
{{- $serving := list -}}
{{- range $group, $spec := $.Values.workerGroups -}}
{{- if has $server $spec.servers }}{{ $serving = append $serving $group }}{{ end -}}
{{- end -}}
{{- if ne (len $serving) 1 -}}
{{- fail (printf "servers.%s: served by %d worker groups (%s); list it in exactly one workerGroups.*.servers" $server (len $serving) (join ", " $serving)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
