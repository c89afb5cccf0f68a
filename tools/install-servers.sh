#!/usr/bin/env bash
# Installs the real servers the tests and benchmarks start: redis-server and
# redis-cli from the distribution's packages (Debian's `redis-server` and
# `redis-tools`), and openssl's command line for the TLS tests' certificates
# (tools/test-pki.sh). Does nothing when all three are already on the PATH.
set -euo pipefail
present() { command -v redis-server && command -v redis-cli && command -v openssl; } >/dev/null
if present; then
    exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends redis-server redis-tools openssl
# The package starts a system-wide server on port 6379; the tests start their
# own on free ports, so stop it where a service manager runs.
if command -v systemctl >/dev/null && systemctl is-active --quiet redis-server 2>/dev/null; then
    $sudo systemctl stop redis-server || true
fi
present
