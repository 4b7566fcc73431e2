{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "openbot.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of the release's resources: the release name, with the chart name unless it already contains it. */}}
{{- define "openbot.fullname" -}}
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

{{- define "openbot.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "openbot.selectorLabels" -}}
app.kubernetes.io/name: {{ include "openbot.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "openbot.labels" -}}
helm.sh/chart: {{ include "openbot.chart" . }}
{{ include "openbot.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: openbot
{{- end }}

{{- define "openbot.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "openbot.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "openbot.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* The Secret read with envFrom: the chart's own, or the existing one. */}}
{{- define "openbot.secretName" -}}
{{- if .Values.secret.create }}
{{- include "openbot.fullname" . }}
{{- else }}
{{- required "secret.existingSecret must name a Secret when secret.create is false" .Values.secret.existingSecret }}
{{- end }}
{{- end }}

{{/*
OPENBOT_PUBLIC_URL: config.publicUrl, else the first ingress host (https when TLS is configured),
else nothing (the server then refuses SSO logins in production).
*/}}
{{- define "openbot.publicUrl" -}}
{{- if .Values.config.publicUrl }}
{{- .Values.config.publicUrl | trimSuffix "/" }}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts }}
{{- with (first .Values.ingress.hosts).host }}
{{- if $.Values.ingress.tls }}https{{ else }}http{{ end }}://{{ . }}
{{- end }}
{{- end }}
{{- end }}

{{/* Non-secret environment as a YAML map: the ConfigMap's data, and the migration Job's env. */}}
{{- define "openbot.configData" -}}
NODE_ENV: "production"
LOG_LEVEL: {{ .Values.config.logLevel | quote }}
OPENBOT_BODY_LIMIT: {{ .Values.config.bodyLimit | int64 | quote }}
OPENBOT_SHUTDOWN_TIMEOUT_MS: {{ .Values.config.shutdownTimeoutMs | int64 | quote }}
OPENBOT_LEASE_SECONDS: {{ .Values.config.leaseSeconds | int64 | quote }}
{{- with (include "openbot.publicUrl" .) }}
OPENBOT_PUBLIC_URL: {{ . | quote }}
{{- end }}
{{- with .Values.config.egressAllow }}
OPENBOT_EGRESS_ALLOW: {{ join "," . | quote }}
{{- end }}
{{- with .Values.config.trustedProxies }}
OPENBOT_TRUSTED_PROXIES: {{ join "," . | quote }}
{{- end }}
{{- if .Values.metrics.enabled }}
OPENBOT_METRICS_PORT: {{ .Values.metrics.port | int64 | quote }}
OPENBOT_METRICS_HOST: "0.0.0.0"
{{- end }}
{{- with .Values.traces.otlpEndpoint }}
OTEL_EXPORTER_OTLP_ENDPOINT: {{ . | quote }}
OTEL_SERVICE_NAME: {{ $.Values.traces.serviceName | quote }}
{{- end }}
OPENBOT_RETENTION_TEXT_DELTA_DAYS: {{ .Values.retention.textDeltaDays | int64 | quote }}
OPENBOT_RETENTION_CALL_PAYLOAD_DAYS: {{ .Values.retention.callPayloadDays | int64 | quote }}
OPENBOT_RETENTION_SCHEDULE: {{ .Values.retention.schedule | quote }}
OPENBOT_RETENTION_MAX_DAYS: {{ .Values.retention.maxDays | int64 | quote }}
OBJECT_STORE: "s3"
S3_BUCKET: {{ required "s3.bucket is required (production stores objects in S3)" .Values.s3.bucket | quote }}
S3_REGION: {{ .Values.s3.region | quote }}
S3_FORCE_PATH_STYLE: {{ .Values.s3.forcePathStyle | toString | quote }}
{{- with .Values.s3.endpoint }}
S3_ENDPOINT: {{ . | quote }}
{{- end }}
{{- range $name, $value := .Values.config.extraEnv }}
{{ $name }}: {{ $value | toString | quote }}
{{- end }}
{{- end }}

{{/* The chart-created Secret's data (secret.create), base64-encoded, keyed by variable name. */}}
{{- define "openbot.secretData" -}}
DATABASE_URL: {{ required "secret.databaseUrl is required when secret.create is true" .Values.secret.databaseUrl | b64enc | quote }}
OPENBOT_MASTER_KEY: {{ required "secret.masterKey is required when secret.create is true" .Values.secret.masterKey | b64enc | quote }}
{{- with .Values.secret.oldMasterKeys }}
OPENBOT_MASTER_KEYS_OLD: {{ . | b64enc | quote }}
{{- end }}
{{- with .Values.secret.adminToken }}
OPENBOT_ADMIN_TOKEN: {{ . | b64enc | quote }}
{{- end }}
{{- with .Values.secret.s3AccessKeyId }}
S3_ACCESS_KEY_ID: {{ . | b64enc | quote }}
{{- end }}
{{- with .Values.secret.s3SecretAccessKey }}
S3_SECRET_ACCESS_KEY: {{ . | b64enc | quote }}
{{- end }}
{{- end }}

{{/* env entries for secretKeyRefs: single variables from other Secrets; `env` wins over `envFrom`. */}}
{{- define "openbot.secretKeyRefEnv" -}}
{{- $variables := dict "databaseUrl" "DATABASE_URL" "masterKey" "OPENBOT_MASTER_KEY" "oldMasterKeys" "OPENBOT_MASTER_KEYS_OLD" "adminToken" "OPENBOT_ADMIN_TOKEN" "s3AccessKeyId" "S3_ACCESS_KEY_ID" "s3SecretAccessKey" "S3_SECRET_ACCESS_KEY" }}
{{- range $value, $variable := $variables }}
{{- with (get $.Values.secretKeyRefs $value) }}
- name: {{ $variable }}
  valueFrom:
    secretKeyRef:
      name: {{ .name | quote }}
      key: {{ .key | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Refuses a grace period that cannot hold the preStop sleep and the drain: the kubelet would kill
pods mid-drain, and their executions would wait for lease expiry instead of being handed over.
*/}}
{{- define "openbot.validate" -}}
{{- $drainSeconds := div (add (int64 .Values.config.shutdownTimeoutMs) 999) 1000 }}
{{- $needed := add (int64 .Values.preStopSleepSeconds) $drainSeconds }}
{{- if le (int64 .Values.terminationGracePeriodSeconds) $needed }}
{{- fail (printf "terminationGracePeriodSeconds (%d) must exceed preStopSleepSeconds + config.shutdownTimeoutMs in seconds (%d)" (int64 .Values.terminationGracePeriodSeconds) $needed) }}
{{- end }}
{{- if and .Values.metrics.serviceMonitor.enabled (not .Values.metrics.enabled) }}
{{- fail "metrics.serviceMonitor.enabled needs metrics.enabled (the pods serve no /metrics without it)" }}
{{- end }}
{{- if and .Values.ingress.enabled (empty .Values.config.trustedProxies) (not .Values.ingress.allowUntrustedProxies) }}
{{- fail "ingress.enabled needs config.trustedProxies (the ingress's addresses, e.g. 10.0.0.0/8): without it every client shares the ingress's address and its failed-authentication and sign-in limits; set ingress.allowUntrustedProxies=true to render anyway" }}
{{- end }}
{{- end }}

{{/* Pod settings shared by the Deployment and the migration Job. */}}
{{- define "openbot.podCommon" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
automountServiceAccountToken: false
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . | quote }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
