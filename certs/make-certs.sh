#!/usr/bin/env bash
# Makes an ECDSA P-256 CA and a serving certificate for metrics-adapter with openssl only, and
# hands them to the kustomize base in deploy/.
#   certs/make-certs.sh [--out DIR] [--service NAME] [--namespace NS] [--kustomize DIR] [--force]
# --out DIR (default certs/out) receives ca.crt, ca.key, serving.crt and serving.key.
# The serving certificate names <service>, <service>.<ns>, <service>.<ns>.svc (what the
# aggregator verifies), <service>.<ns>.svc.cluster.local, localhost, 127.0.0.1 and ::1; the
# defaults, metrics-adapter in custom-metrics, are the Service of deploy/.
# --kustomize DIR copies the serving certificate, its key and the CA certificate to DIR/tls.crt,
# DIR/tls.key and DIR/ca.crt, from which deploy/base generates the Secret and the APIServices'
# caBundle. Default: deploy/base/certs when --out is not given; nothing when it is (the demo and
# the tests make certificates for local use).
# Idempotent: an existing CA is kept (never overwritten unless --force); the serving certificate
# is kept while the CA verifies it, it names <service>.<ns>.svc, matches its key and has more
# than 30 days left, and is made anew otherwise (or with --force). Prints the base64 caBundle.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
out='' service=metrics-adapter namespace=custom-metrics kustomize='' force=0
while (($#)); do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --service) service=$2; shift 2 ;;
    --namespace) namespace=$2; shift 2 ;;
    --kustomize) kustomize=$2; shift 2 ;;
    --force) force=1; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
if [[ -z $out ]]; then
  out=$repo/certs/out
  kustomize=${kustomize:-$repo/deploy/base/certs}
fi
mkdir -p "$out"
umask 077
host=$service.$namespace.svc

if [[ -f "$out/ca.crt" && $force -eq 0 ]]; then
  echo "reusing the CA in $out (pass --force to replace it)" >&2
else
  openssl ecparam -name prime256v1 -genkey -noout -out "$out/ca.key"
  openssl req -x509 -new -sha256 -days 3650 -key "$out/ca.key" -out "$out/ca.crt" \
    -subj "/CN=metrics-adapter-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
  chmod 644 "$out/ca.crt"
fi

serving_is_good() {
  [[ -f "$out/serving.crt" && -f "$out/serving.key" ]] &&
    openssl verify -CAfile "$out/ca.crt" "$out/serving.crt" >/dev/null 2>&1 &&
    openssl x509 -in "$out/serving.crt" -noout -checkend $((30 * 86400)) >/dev/null &&
    openssl x509 -in "$out/serving.crt" -noout -checkhost "$host" | grep -q 'does match' &&
    [[ "$(openssl x509 -in "$out/serving.crt" -noout -pubkey)" == \
       "$(openssl pkey -in "$out/serving.key" -pubout 2>/dev/null)" ]]
}

if ((force == 0)) && serving_is_good; then
  echo "keeping the serving certificate in $out (valid for $host, more than 30 days left)" >&2
else
  if [[ ! -f "$out/ca.key" ]]; then
    echo "$out/ca.key is missing: cannot sign a new serving certificate (--force makes a new CA)" >&2
    exit 1
  fi
  openssl ecparam -name prime256v1 -genkey -noout -out "$out/serving.key"
  openssl req -new -sha256 -key "$out/serving.key" -out "$out/serving.csr" -subj "/CN=$service"
  cat > "$out/serving.ext" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:$service,DNS:$service.$namespace,DNS:$host,DNS:$host.cluster.local,DNS:localhost,IP:127.0.0.1,IP:::1
EXT
  openssl x509 -req -sha256 -days 365 -in "$out/serving.csr" -CA "$out/ca.crt" \
    -CAkey "$out/ca.key" -CAcreateserial -out "$out/serving.crt" -extfile "$out/serving.ext" \
    2>/dev/null
  rm -f "$out/serving.csr" "$out/serving.ext"
  chmod 644 "$out/serving.crt"
  echo "serving certificate: $out/serving.crt (key $out/serving.key) for $host" >&2
fi

if [[ -n $kustomize ]]; then
  mkdir -p "$kustomize"
  install -m 644 "$out/serving.crt" "$kustomize/tls.crt"
  install -m 600 "$out/serving.key" "$kustomize/tls.key"
  install -m 644 "$out/ca.crt" "$kustomize/ca.crt"
  echo "wrote tls.crt, tls.key and ca.crt to $kustomize for kubectl apply -k" >&2
fi
echo "CA: $out/ca.crt" >&2
echo "caBundle: $(base64 -w0 < "$out/ca.crt")"
