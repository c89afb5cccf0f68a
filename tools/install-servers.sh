#!/usr/bin/env bash
# Installs the real servers the tests and benchmarks start: redis-server and
# redis-cli from the distribution's packages (Debian's `redis-server` and
# `redis-tools`), Prometheus and promtool (Debian's `prometheus`: the
# metrics tests scrape real apps with it and check every exposition with
# promtool), and openssl's command line for the TLS tests' certificates
# (tools/test-pki.sh). Does nothing when all are already on the PATH.
set -euo pipefail
present() {
    command -v redis-server && command -v redis-cli && command -v openssl &&
        command -v prometheus && command -v promtool
} >/dev/null
if present; then
    exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends redis-server redis-tools openssl prometheus
# The package starts a system-wide server on port 6379; the tests start their
# own on free ports, so stop it where a service manager runs.
if command -v systemctl >/dev/null && systemctl is-active --quiet redis-server 2>/dev/null; then
    $sudo systemctl stop redis-server || true
fi
# Likewise the package's Prometheus (port 9090) and its node exporter.
if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then
    $sudo systemctl stop prometheus prometheus-node-exporter || true
fi
present
