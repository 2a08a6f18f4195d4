#!/usr/bin/env bash
# The main job in one command: install what is missing, build, make certificates, start a local
# Prometheus fed by the simulated GPU exporter, start metrics-adapter with the Alibaba GPU
# rules, and show what `kubectl get --raw` answers. Ctrl-C stops everything it started.
#   scripts/demo.sh [--once] [--config config/gpu-dcgm-exporter.yaml]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
once=0 config=config/gpu-alibaba-exporter.yaml metric=duty_cycle_current
while (($#)); do
  case "$1" in
    --once) once=1; shift ;;
    --config) config=$2; shift 2 ;;
    *) echo "usage: scripts/demo.sh [--once] [--config FILE]" >&2; exit 2 ;;
  esac
done
[[ $config == *dcgm* ]] && metric=DCGM_FI_DEV_GPU_UTIL

# Only what the demo runs: the server, not the unit tests nor the clang tools the gate uses;
# each module as one batch, as a build from nothing is cheapest (CMakeLists.txt, MA_UNITY_ALL).
scripts/install-deps.sh --demo
MA_UNITY_ALL=ON scripts/build.sh metrics-adapter

run=$repo/.run/demo
mkdir -p "$run"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "stopped exporter, Prometheus and metrics-adapter"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() {  # wait_for DESCRIPTION COMMAND...
  local what=$1; shift
  for _ in $(seq 1 300); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "timed out waiting for $what (logs in $run)" >&2; exit 1
}

certs/make-certs.sh --out "$run/certs" >/dev/null

exporter_port=$(free_port)
python3 scripts/gpu_exporter_sim.py --port "$exporter_port" --mode wave >"$run/exporter.log" 2>&1 &
pids+=($!)

prometheus_port=$(free_port)
cat >"$run/prometheus.yml" <<YAML
global: {scrape_interval: 5s}
scrape_configs:
  - job_name: gpu
    static_configs: [{targets: ['127.0.0.1:$exporter_port']}]
YAML
prometheus --config.file="$run/prometheus.yml" --storage.tsdb.path="$run/prometheus-data" \
  --web.listen-address="127.0.0.1:$prometheus_port" --log.level=warn >"$run/prometheus.log" 2>&1 &
pids+=($!)
wait_for "Prometheus" curl -sf "http://127.0.0.1:$prometheus_port/-/ready"
wait_for "the first scrape" bash -c "curl -sf 'http://127.0.0.1:$prometheus_port/api/v1/query?query=nvidia_gpu_duty_cycle' | grep -q node_name"

adapter_port=$(free_port)
build/metrics-adapter --config="$config" --prometheus-url="http://127.0.0.1:$prometheus_port" \
  --secure-port="$adapter_port" --bind-address=127.0.0.1 \
  --tls-cert-file="$run/certs/serving.crt" --tls-private-key-file="$run/certs/serving.key" \
  --metrics-relist-interval=30s --authentication-mode=none >"$run/adapter.log" 2>&1 &
pids+=($!)

cat >"$run/kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: demo, cluster: {server: "https://127.0.0.1:$adapter_port", certificate-authority: "$run/certs/ca.crt"}}]
users: [{name: demo, user: {token: demo}}]  # keeps kubectl from prompting for a username
contexts: [{name: demo, context: {cluster: demo, user: demo}}]
current-context: demo
YAML
kube() { kubectl --kubeconfig "$run/kubeconfig" "$@"; }
wait_for "metrics-adapter" curl -sf --cacert "$run/certs/ca.crt" "https://127.0.0.1:$adapter_port/readyz"
wait_for "discovery" bash -c "kubectl --kubeconfig '$run/kubeconfig' get --raw /apis/custom.metrics.k8s.io/v1beta1 | grep -q '\"pods/$metric\"'"

show() {
  echo
  echo "\$ kubectl get --raw \"$1\""
  # The answer is read whole before it is printed: a Ctrl-C while kubectl waits ends the script
  # (trap above) instead of handing the JSON printer an empty input to complain about.
  local answer
  answer=$(kube get --raw "$1")
  python3 -m json.tool <<<"$answer"
}
echo "metrics-adapter is serving on https://127.0.0.1:$adapter_port (kubeconfig: $run/kubeconfig)"
# Shortened on screen (the whole document is in $run/discovery.txt); no pipe into head, which
# would end the script under pipefail.
show /apis/custom.metrics.k8s.io/v1beta1 >"$run/discovery.txt"
sed -n 1,40p "$run/discovery.txt"
echo "  ... (discovery document shortened; all of it in $run/discovery.txt)"
show "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/$metric"
((once)) && exit 0

echo
echo "Asking again every 15 seconds, as the HPA does. Ctrl-C stops everything."
while sleep 15; do
  show "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/$metric"
done
