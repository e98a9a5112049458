{{/* Name of the chart, or nameOverride. */}}
{{- define "haptic.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Prefix of resource names: the release name when it holds the chart name. */}}
{{- define "haptic.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "haptic.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every resource. */}}
{{- define "haptic.labels" -}}
helm.sh/chart: {{ include "haptic.chart" . }}
{{ include "haptic.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "haptic.selectorLabels" -}}
app.kubernetes.io/name: {{ include "haptic.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Pods of the controller. */}}
{{- define "haptic.controller.selectorLabels" -}}
{{ include "haptic.selectorLabels" . }}
app.kubernetes.io/component: controller
{{- end -}}

{{/* The HAProxy pods of Ingresses: the config's podSelector. Per-Gateway copies drop
these labels (the controller relabels them). */}}
{{- define "haptic.haproxy.selectorLabels" -}}
{{ include "haptic.selectorLabels" . }}
app.kubernetes.io/component: loadbalancer
{{- end -}}

{{- define "haptic.controller.fullname" -}}
{{- printf "%s-controller" (include "haptic.fullname" .) -}}
{{- end -}}

{{- define "haptic.haproxy.fullname" -}}
{{- printf "%s-haproxy" (include "haptic.fullname" .) -}}
{{- end -}}

{{- define "haptic.serviceAccountName" -}}
{{- if .Values.controller.serviceAccount.create -}}
{{- default (include "haptic.controller.fullname" .) .Values.controller.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.controller.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "haptic.credentialsSecretName" -}}
{{- default (printf "%s-agent-credentials" (include "haptic.fullname" .)) .Values.haproxy.agent.credentials.existingSecret -}}
{{- end -}}

{{- define "haptic.controller.image" -}}
{{- printf "%s:%s" .Values.controller.image.repository (default .Chart.AppVersion .Values.controller.image.tag) -}}
{{- end -}}

{{- define "haptic.haproxy.image" -}}
{{- printf "%s:%s" .Values.haproxy.image.repository (default .Chart.AppVersion .Values.haproxy.image.tag) -}}
{{- end -}}

{{/* hard-stop-after of the bootstrap config: extraContext.hardStopAfter, else 10s
(as the base library); "" disables it. */}}
{{- define "haptic.hardStopAfter" -}}
{{- $extra := .Values.controller.config.templatingSettings.extraContext | default dict -}}
{{- if hasKey $extra "hardStopAfter" -}}
{{- $extra.hardStopAfter | toString | trim -}}
{{- else -}}
10s
{{- end -}}
{{- end -}}

{{/* nbthread: haproxy.nbthread when set, else ceil(haproxy.resources.limits.cpu),
else nothing (HAProxy uses every core it may run on). */}}
{{- define "haptic.nbthread" -}}
{{- if not (kindIs "invalid" .Values.haproxy.nbthread) -}}
{{- int .Values.haproxy.nbthread -}}
{{- else -}}
{{- $cpu := "" -}}
{{- with .Values.haproxy.resources -}}{{- with .limits -}}{{- with .cpu -}}{{- $cpu = toString . -}}{{- end -}}{{- end -}}{{- end -}}
{{- if $cpu -}}
{{- if hasSuffix "m" $cpu -}}
{{- $milli := trimSuffix "m" $cpu | int -}}
{{- div (add $milli 999) 1000 -}}
{{- else -}}
{{- ceil (float64 $cpu) | int -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The parts every webhook of the ValidatingWebhookConfiguration shares. */}}
{{- define "haptic.webhook.common" -}}
{{- $w := .root.Values.controller.webhook -}}
clientConfig:
  service:
    name: {{ .service }}
    namespace: {{ .root.Release.Namespace }}
    path: /validate
  caBundle: {{ .ca }}
failurePolicy: {{ $w.failurePolicy }}
timeoutSeconds: {{ $w.timeoutSeconds }}
sideEffects: None
admissionReviewVersions: [v1]
{{- with $w.namespaceSelector }}
namespaceSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
