#!/usr/bin/env bash
# Makes an ECDSA P-256 CA and a serving certificate for metrics-adapter with openssl only.
#   certs/make-certs.sh [--out DIR] [--service NAME] [--namespace NS] [--force]
# The serving certificate names <service>, <service>.<ns>, <service>.<ns>.svc (what the
# aggregator verifies), localhost and 127.0.0.1. An existing CA is reused unless --force, so
# re-running only renews the serving certificate. Prints the base64 caBundle for the APIService.
set -euo pipefail

out=certs/out service=metrics-adapter namespace=monitoring force=0
while (($#)); do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --service) service=$2; shift 2 ;;
    --namespace) namespace=$2; shift 2 ;;
    --force) force=1; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
umask 077

if [[ -f "$out/ca.crt" && $force -eq 0 ]]; then
  echo "reusing the CA in $out (pass --force to replace it)" >&2
else
  openssl ecparam -name prime256v1 -genkey -noout -out "$out/ca.key"
  openssl req -x509 -new -sha256 -days 3650 -key "$out/ca.key" -out "$out/ca.crt" \
    -subj "/CN=metrics-adapter-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
fi

openssl ecparam -name prime256v1 -genkey -noout -out "$out/serving.key"
openssl req -new -sha256 -key "$out/serving.key" -out "$out/serving.csr" -subj "/CN=$service"
cat > "$out/serving.ext" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:$service,DNS:$service.$namespace,DNS:$service.$namespace.svc,DNS:$service.$namespace.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:::1
EXT
openssl x509 -req -sha256 -days 365 -in "$out/serving.csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" \
  -CAcreateserial -out "$out/serving.crt" -extfile "$out/serving.ext" 2>/dev/null
rm -f "$out/serving.csr" "$out/serving.ext"
chmod 644 "$out/ca.crt" "$out/serving.crt"

echo "serving certificate: $out/serving.crt (key $out/serving.key), CA: $out/ca.crt" >&2
echo "caBundle: $(base64 -w0 < "$out/ca.crt")"
