{{/* The release's base name, at most 63 characters. */}}
{{- define "weft.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "weft.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one role: dict "ctx" $ "role" "single|ingest|..." */}}
{{- define "weft.selectorLabels" -}}
app.kubernetes.io/name: {{ .ctx.Chart.Name }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .role }}
{{- end -}}

{{/* The one image every workload runs. */}}
{{- define "weft.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* Fails the render when scale-out lacks what it cannot run without. */}}
{{- define "weft.checkScaleout" -}}
{{- if not .Values.scaleout.kafkaBrokers -}}
{{- fail "mode scaleout: set scaleout.kafkaBrokers to the Kafka bootstrap brokers" -}}
{{- end -}}
{{- if not .Values.scaleout.clickhouseDSNSecret.name -}}
{{- fail "mode scaleout: set scaleout.clickhouseDSNSecret.name to a Secret holding the ClickHouse DSN" -}}
{{- end -}}
{{- if not .Values.secrets.existingSecret -}}
{{- fail "mode scaleout: set secrets.existingSecret to a Secret holding WEFT_SECRETS_KEY; every role must seal with the same key" -}}
{{- end -}}
{{- end -}}

{{/* Environment shared by every weft container of the release. */}}
{{- define "weft.env" -}}
- name: WEFT_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- if .Values.secrets.existingSecret }}
- name: WEFT_SECRETS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.secrets.existingSecret }}
      key: {{ .Values.secrets.secretsKeyKey }}
{{- end }}
{{- if eq .Values.mode "scaleout" }}
- name: WEFT_KAFKA_BROKERS
  value: {{ .Values.scaleout.kafkaBrokers | quote }}
- name: WEFT_CLICKHOUSE_DSN
  valueFrom:
    secretKeyRef:
      name: {{ .Values.scaleout.clickhouseDSNSecret.name }}
      key: {{ .Values.scaleout.clickhouseDSNSecret.key }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Liveness on /health, readiness on /ready, and a start-up allowance
for rebuilding the store's indexes after a crash (up to about 90 s on
tens of millions of calls). */}}
{{- define "weft.probes" -}}
startupProbe:
  httpGet: {path: /health, port: http}
  periodSeconds: 5
  failureThreshold: 60
livenessProbe:
  httpGet: {path: /health, port: http}
  periodSeconds: 10
  timeoutSeconds: 5
  failureThreshold: 6
readinessProbe:
  httpGet: {path: /ready, port: http}
  periodSeconds: 5
  timeoutSeconds: 5
{{- end -}}

{{/* Container ports of a serving role. */}}
{{- define "weft.ports" -}}
- name: http
  containerPort: 6345
  protocol: TCP
- name: otlp-grpc
  containerPort: 4317
  protocol: TCP
{{- end -}}

{{/* Pod-level fields every workload shares. */}}
{{- define "weft.podCommon" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{ toYaml . }}
{{- end }}
securityContext:
{{ toYaml .Values.podSecurityContext | indent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector:
{{ toYaml . | indent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
{{ toYaml . | indent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
{{ toYaml . | indent 2 }}
{{- end }}
{{- end -}}

{{/* Pod labels of one role: its selector labels and the version. */}}
{{- define "weft.podLabels" -}}
{{ include "weft.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
{{- end -}}
