{{/*
haptic.config is the HAProxyTemplateConfig as YAML: the enabled default libraries
(charts/haptic/libraries/*.yaml, the single source of the templates) merged in the
fixed order base → ingress → gateway, then the deployment's overlay from values,
then controller.config.spec. Validation tests are dropped: they are for
`haptic validate`, not for the controller.
*/}}
{{- define "haptic.config" -}}
{{- $root := . -}}
{{- $cfg := dict -}}
{{- range $lib := list "base" "ingress" "gateway" -}}
{{- $switch := index $root.Values.controller.templateLibraries $lib | default dict -}}
{{- if $switch.enabled -}}
{{- $path := printf "libraries/%s.yaml" $lib -}}
{{- $doc := $root.Files.Get $path | fromYaml -}}
{{- if hasKey $doc "Error" -}}
{{- fail (printf "%s: %s" $path $doc.Error) -}}
{{- end -}}
{{- if not $doc.spec -}}
{{- fail (printf "%s: no spec (is the file in the chart?)" $path) -}}
{{- end -}}
{{- $cfg = mergeOverwrite $cfg $doc -}}
{{- end -}}
{{- end -}}
{{- if not $cfg.spec -}}
{{- fail "controller.templateLibraries: enable at least one library (base holds haproxy.cfg)" -}}
{{- end -}}
{{- $values := $root.Values.controller.config -}}
{{- $_ := set $cfg "apiVersion" "haproxy-haptic.org/v1alpha1" -}}
{{- $_ := set $cfg "kind" "HAProxyTemplateConfig" -}}
{{- $_ := set $cfg "metadata" (dict "name" $values.name "namespace" $root.Release.Namespace "labels" (include "haptic.labels" $root | fromYaml)) -}}
{{- $spec := $cfg.spec -}}
{{- $_ := unset $spec "validationTests" -}}
{{- /* The HAProxy pods of this release and the agent's credentials. */ -}}
{{- $_ := set $spec "podSelector" (dict "matchLabels" (include "haptic.haproxy.selectorLabels" $root | fromYaml)) -}}
{{- $_ := set $spec "credentialsSecretRef" (dict "name" (include "haptic.credentialsSecretName" $root)) -}}
{{- $dataplane := deepCopy ($values.dataplane | default dict) -}}
{{- $_ := set $dataplane "port" (int $root.Values.haproxy.agent.port) -}}
{{- $_ := set $spec "dataplane" $dataplane -}}
{{- /* spec.gateways: the libraries' (supportedFeatures), then the values'. */ -}}
{{- $gateways := mergeOverwrite (deepCopy ($spec.gateways | default dict)) (deepCopy ($values.gateways | default dict)) -}}
{{- $_ := set $gateways "deploymentName" (include "haptic.haproxy.fullname" $root) -}}
{{- $_ := set $gateways "controllerName" $root.Values.gatewayClass.controllerName -}}
{{- $_ := set $spec "gateways" $gateways -}}
{{- $level := $root.Values.controller.logLevel | default "info" -}}
{{- $_ := set $spec "logging" (dict "level" $level) -}}
{{- /* extraContext: what the chart derives, then the values' keys (they win). */ -}}
{{- $extra := dict -}}
{{- $_ := set $extra "ingressClass" $root.Values.ingressClass.name -}}
{{- $_ := set $extra "httpPort" (int $root.Values.haproxy.ports.http) -}}
{{- $_ := set $extra "httpsPort" (int $root.Values.haproxy.ports.https) -}}
{{- $_ := set $extra "statusPort" (int $root.Values.haproxy.ports.status) -}}
{{- $nbthread := include "haptic.nbthread" $root -}}
{{- if ne $nbthread "" -}}
{{- $_ := set $extra "nbthread" (int $nbthread) -}}
{{- end -}}
{{- if $root.Values.controller.templateLibraries.gateway.experimentalChannel -}}
{{- $_ := set $extra "experimentalChannel" true -}}
{{- end -}}
{{- range $k, $v := ($values.templatingSettings.extraContext | default dict) -}}
{{- $_ := set $extra $k $v -}}
{{- end -}}
{{- $templating := dict "extraContext" $extra -}}
{{- with $values.templatingSettings.resourceAccess -}}
{{- $_ := set $templating "resourceAccess" . -}}
{{- end -}}
{{- $_ := set $spec "templatingSettings" $templating -}}
{{- with $values.watchedResourcesIgnoreFields -}}
{{- $_ := set $spec "watchedResourcesIgnoreFields" . -}}
{{- end -}}
{{- with $values.spec -}}
{{- $_ := mergeOverwrite $spec (deepCopy .) -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}
