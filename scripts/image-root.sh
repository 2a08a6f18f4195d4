#!/usr/bin/env bash
# Fills ROOT with what the metrics-adapter binary needs to run and nothing else: the binary, the
# shared libraries ldd says it loads and the dynamic loader, the copyright files of the Debian
# packages those and the code compiled into the binary come from, the CA roots for an https --prometheus-url, /etc/passwd and
# /etc/group naming the unprivileged user 65532, and an empty /tmp. No shell, no package manager.
# The Dockerfile's final stage (FROM scratch) is this tree; tests/integration/test_deploy.py runs
# this script against the host's build and starts the binary from the tree.
#   scripts/image-root.sh BINARY ROOT
set -euo pipefail
if (($# != 2)); then
  echo "usage: scripts/image-root.sh BINARY ROOT" >&2
  exit 2
fi
binary=$1 root=$2
fail() { echo "image-root.sh: $*" >&2; exit 1; }
[[ -f $binary && -x $binary ]] || fail "$binary: not an executable file"
[[ ! -e $root ]] || [[ -d $root && -z $(ls -A "$root") ]] || fail "$root: exists and is not empty"
[[ -f /etc/ssl/certs/ca-certificates.crt ]] ||
  fail "no /etc/ssl/certs/ca-certificates.crt (install ca-certificates)"

# The Debian package that owns a library. With merged /usr, dpkg knows /lib/... while ldd may
# print either that or the /usr/lib/... path.
owner() {
  local real
  real=$(realpath "$1")
  for path in "$1" "$real" "${real#/usr}"; do
    dpkg -S "$path" 2>/dev/null | sed -n '1s/:.*//p' | grep . && return 0
  done
  fail "no Debian package owns $1"
}

install -D -m 0755 "$binary" "$root/usr/local/bin/metrics-adapter"
# Where upstream's image has its binary: manifests written for prometheus-adapter that set
# command: ["/adapter"] start this one.
ln -s /usr/local/bin/metrics-adapter "$root/adapter"

# Every absolute path ldd prints: the libraries and the loader the binary names (its ELF
# interpreter, /lib64/ld-linux-x86-64.so.2 on amd64). Each is copied as a regular file at the
# path ldd shows, where glibc's loader looks by default, so the tree needs no ld.so.cache.
ldd_out=$(ldd "$binary") || fail "ldd $binary failed (not a dynamic executable?)"
libraries=$(grep -o '/[^ ]*' <<<"$ldd_out" | sort -u)
[[ -n $libraries ]] || fail "ldd lists no libraries for $binary"
packages=()
for library in $libraries; do
  mkdir -p "$root$(dirname "$library")"
  cp -L "$library" "$root$library"
  packages+=("$(owner "$library")")
done
# The libraries compiled into the binary (static archives and header-only code, CMakeLists.txt)
# have no file of their own in the tree, but their licences travel with the binary all the same.
packages+=(libre2-dev libyaml-cpp-dev libdeflate-dev libspdlog-dev libfmt-dev nlohmann-json3-dev)
# Their licences travel with them (LGPL for glibc, OpenSSL's Apache-2.0, ...).
for package in $(printf '%s\n' "${packages[@]}" | sort -u); do
  install -D -m 0644 "/usr/share/doc/$package/copyright" "$root/usr/share/doc/$package/copyright"
done

# set_default_verify_paths() (an https Prometheus without --prometheus-ca-file) reads
# OPENSSLDIR/cert.pem and OPENSSLDIR/certs; Debian points both at /etc/ssl/certs.
install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
mkdir -p "$root/usr/lib/ssl"
ln -s /etc/ssl/certs/ca-certificates.crt "$root/usr/lib/ssl/cert.pem"
ln -s /etc/ssl/certs "$root/usr/lib/ssl/certs"

# 65532 is the user the Deployment runs as (runAsUser/runAsGroup); naming it lets tools show a
# name instead of a number. nsswitch.conf: /etc/hosts before DNS, as on any Debian system.
cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
nonroot:x:65532:
EOF
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
install -d -m 1777 "$root/tmp"
