#!/usr/bin/env bash
# Builds the metrics-adapter image from the Dockerfile with Debian 12's own tools, needing no
# container registry: podman builds, and the Debian base comes from Debian's package repository
# (debootstrap --variant=minbase bookworm, imported as localhost/debian:bookworm once and reused).
# Installs podman and debootstrap with apt-get when missing. Prints the image size at the end.
#   scripts/build-image.sh [--tag NAME] [--base IMAGE] [--jobs N]
# --tag   the image to build (default metrics-adapter:0.1.0, the name deploy/ uses)
# --base  the Debian 12 image the build stage starts from (default localhost/debian:bookworm,
#         made here when absent; with a registry, --base debian:12 works as well)
# --jobs  parallel compile jobs in the build stage (default: every CPU)
# DEBIAN_MIRROR (environment) overrides http://deb.debian.org for the base.
set -euo pipefail
cd "$(dirname "$0")/.."
local_base=localhost/debian:bookworm
tag=metrics-adapter:0.1.0 base=$local_base jobs=""
usage() { echo "usage: scripts/build-image.sh [--tag NAME] [--base IMAGE] [--jobs N]" >&2; exit 2; }
while (($#)); do
  case "$1" in
    --tag) (($# >= 2)) || usage; tag=$2; shift 2 ;;
    --base) (($# >= 2)) || usage; base=$2; shift 2 ;;
    --jobs) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || usage; jobs=$2; shift 2 ;;
    *) usage ;;
  esac
done
mirror=${DEBIAN_MIRROR:-http://deb.debian.org}

as_root=()
if [[ $(id -u) -ne 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "build-image.sh: run as root or install sudo" >&2
    exit 1
  fi
  as_root=(sudo)
fi

missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
[[ $base != "$local_base" ]] || command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# The base, made once: a minimal Debian 12 whose apt sources are those of the official debian:12
# image (bookworm, bookworm-updates, bookworm-security), so the build stage gets security fixes.
make_base() {
  local tree
  tree=$(mktemp -d /var/tmp/debian-bookworm.XXXXXX)
  # shellcheck disable=SC2064  # expand $tree now: it is local to this function
  trap "${as_root[*]} rm -rf '$tree'" EXIT
  echo "making $local_base with debootstrap from $mirror (once; later builds reuse it)"
  "${as_root[@]}" debootstrap --variant=minbase bookworm "$tree" "$mirror/debian" >/dev/null
  "${as_root[@]}" rm -f "$tree/etc/apt/sources.list"
  "${as_root[@]}" tee "$tree/etc/apt/sources.list.d/debian.sources" >/dev/null <<EOF
Types: deb
URIs: $mirror/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $mirror/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  "${as_root[@]}" chroot "$tree" apt-get clean
  "${as_root[@]}" rm -rf "$tree"/var/lib/apt/lists/* "$tree"/var/log/*.log \
    "$tree"/var/cache/apt/*.bin
  "${as_root[@]}" tar -C "$tree" --numeric-owner -c . |
    podman import --change 'CMD ["bash"]' - "$local_base" >/dev/null
  "${as_root[@]}" rm -rf "$tree"
  trap - EXIT
}
if [[ $base == "$local_base" ]] && ! podman image exists "$local_base"; then
  make_base
fi

# crun, podman's OCI runtime on Debian 12, refuses every container when the host mixes cgroup v1
# with a cgroup v2 hierarchy that holds a controller ("cgroups in hybrid mode not supported, drop
# all controllers from cgroupv2"; its own check of /sys/fs/cgroup/unified/cgroup.controllers).
# Buildah's chroot isolation runs the RUN steps without an OCI runtime or cgroups instead.
isolation=()
if [[ -n $(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null) ]]; then
  echo "cgroup v1 + v2 hybrid with v2 controllers: crun cannot run here; using --isolation chroot"
  isolation=(--isolation chroot)
fi

echo "building $tag from $base"
start=$SECONDS
podman build "${isolation[@]}" --build-arg BASE_IMAGE="$base" ${jobs:+--build-arg JOBS="$jobs"} \
  -t "$tag" -f Dockerfile .
echo "built $tag in $((SECONDS - start)) s"
podman images --format '{{.Repository}}:{{.Tag}}  {{.Size}}' "$tag"
