#!/usr/bin/env bash
# make run: the local cluster, HAProxy with its agent and the controller as pods,
# the example library, and a sample application routed through HAProxy.
# Ctrl-C stops all of it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cluster=$root/bin/haptic-cluster
port=${HAPTIC_RUN_PORT:-8080}
k() { "$cluster" kubectl "$@"; }

cleanup() {
  trap - INT TERM EXIT
  echo
  echo ">> stopping"
  [ -n "${forward_pid:-}" ] && kill "$forward_pid" 2>/dev/null && wait "$forward_pid" 2>/dev/null || true
  "$cluster" down || true
}
trap cleanup INT TERM EXIT

echo ">> starting the local cluster"
"$cluster" up

echo ">> installing HAPTIC (CRD, credentials, HAProxy, controller, config)"
k apply --server-side --force-conflicts -f charts/haptic/crds/ >/dev/null
k create namespace haptic --dry-run=client -o yaml | k apply -f - >/dev/null
password=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
k -n haptic create secret generic haptic-agent-credentials --from-literal=username=haptic \
  --from-literal=password="$password" --from-literal=credentials="haptic:$password" \
  --dry-run=client -o yaml | k apply -f - >/dev/null
k -n haptic create secret generic haptic-kubeconfig \
  --from-file=kubeconfig=/var/lib/haptic-cluster/admin.kubeconfig --dry-run=client -o yaml | k apply -f - >/dev/null
# The admission webhook's certificate (a CA of its own) and its registration.
certs=$(mktemp -d)
go run ./tools/webhookcert -dir "$certs" haptic-webhook.haptic.svc
k -n haptic create secret tls haptic-webhook-tls --cert="$certs/tls.crt" --key="$certs/tls.key" \
  --dry-run=client -o yaml | k apply -f - >/dev/null
k apply -f deploy/local/10-haproxy.yaml -f deploy/local/20-controller.yaml >/dev/null
# The chart's default libraries (LIBRARIES, in merge order) plus the deployment's settings.
libs=""
for l in ${LIBRARIES:-base ingress gateway}; do libs="$libs -f charts/haptic/libraries/$l.yaml"; done
# shellcheck disable=SC2086
bin/haptic merge $libs -f deploy/local/30-haptic-overlay.yaml | k apply -f - >/dev/null

k -n haptic rollout status deployment/haptic-controller --timeout=120s
echo ">> registering the admission webhook"
sed "s|CA_BUNDLE|$(base64 -w0 "$certs/ca.crt")|" deploy/local/25-webhook.yaml | k apply -f - >/dev/null
rm -rf "$certs"
for _ in $(seq 1 60); do # the webhook Service has the controller as endpoint
  [ -n "$(k -n haptic get endpointslices -l kubernetes.io/service-name=haptic-webhook \
    -o jsonpath='{.items[*].endpoints[*].addresses[*]}')" ] && break
  sleep 0.5
done

echo ">> deploying the sample application (echo Deployment, Service, Ingress)"
k apply -f deploy/local/40-echo.yaml >/dev/null
k -n haptic rollout status deployment/haproxy --timeout=120s
k -n default rollout status deployment/echo --timeout=120s

ip=$(k -n haptic get pods -l app.kubernetes.io/component=loadbalancer -o jsonpath='{.items[0].status.podIP}')
echo ">> waiting for the route through HAProxy ($ip)"
for _ in $(seq 1 120); do
  code=$("$cluster" exec curl -s -o /dev/null -w '%{http_code}' -H 'Host: echo.localhost' "http://$ip:8080/" || true)
  [ "$code" = 200 ] && break
  sleep 0.5
done
[ "$code" = 200 ] || { echo "the route did not answer 200 (last: $code); see: $cluster logs haptic/<pod>"; exit 1; }

"$cluster" forward "$port" "$ip:8080" &
forward_pid=$!
sleep 0.5
cat <<MSG

HAPTIC is running. The sample application answers through HAProxy:

curl -H 'Host: echo.localhost' http://127.0.0.1:$port/

kubectl: $cluster kubectl get pods -A     logs: $cluster logs haptic/<pod>
An Ingress the libraries reject is refused at apply time (admission webhook), e.g.
  $cluster kubectl annotate ingress echo haproxy-haptic.org/timeout-server='5 parsecs' 
Press Ctrl-C to stop everything.
MSG
wait "$forward_pid"
