#!/usr/bin/env bash
# Makes a throwaway PKI for the finsy TLS cases with the openssl CLI:
#   tests/finsy/pki.sh DIR
# DIR/ca.pem (test CA), server.pem/.key (localhost, 127.0.0.1; serverAuth),
# client.pem/.key (clientAuth), rogue-ca.pem (a CA that signed nothing here).
# EC P-256 keys, valid for 2 days. Exits non-zero if openssl fails.
set -euo pipefail
dir="$1"
mkdir -p "$dir"
cd "$dir"
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
for ca in ca rogue-ca; do
  openssl req -x509 "${ec[@]}" -keyout "$ca.key" -out "$ca.pem" -days 2 -subj "/CN=roceswitch $ca" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,digitalSignature 2>/dev/null
done
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >server.ext
printf 'extendedKeyUsage=clientAuth\n' >client.ext
for leaf in server client; do
  openssl req "${ec[@]}" -keyout "$leaf.key" -out "$leaf.csr" -subj "/CN=$leaf" 2>/dev/null
  openssl x509 -req -in "$leaf.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -out "$leaf.pem" \
    -days 2 -extfile "$leaf.ext" 2>/dev/null
done
rm -f ./*.csr ./*.ext ca.srl
