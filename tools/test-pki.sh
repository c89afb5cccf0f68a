#!/usr/bin/env bash
# Writes a throwaway PKI for the TLS tests into DIR (created if missing):
#   ca.pem                       a CA of its own (a fresh name each run, so two
#                                runs' CAs never pass for one another)
#   server-cert.pem, server-key.pem   for 127.0.0.1 and localhost, signed by it
#   client-cert.pem, client-key.pem   a client certificate for mutual TLS
# P-256 keys in PKCS#8, valid for 30 days. Every language's tests call this
# one script (openssl's command line, from `make servers`).
set -euo pipefail
dir=${1:?usage: test-pki.sh DIR}
mkdir -p "$dir"
cd "$dir"

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }

key ca-key.pem
openssl req -x509 -new -key ca-key.pem -sha256 -days 30 \
    -subj "/CN=sds test CA $(openssl rand -hex 6)" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out ca.pem

# leaf NAME EXTENSIONS: NAME-key.pem and NAME-cert.pem signed by the CA.
leaf() {
    key "$1-key.pem"
    openssl req -new -key "$1-key.pem" -subj "/CN=sds test $1" -out "$1.csr"
    printf '%b\n' "$2" > "$1.ext"
    openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca-key.pem \
        -set_serial "0x$(openssl rand -hex 8)" -days 30 -sha256 \
        -extfile "$1.ext" -out "$1-cert.pem" 2>/dev/null
    rm -f "$1.csr" "$1.ext"
}
leaf server "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth"
leaf client "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth"
