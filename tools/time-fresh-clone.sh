#!/usr/bin/env bash
# Times what a newcomer waits for: a fresh clone of this repository's
# committed HEAD into a temporary directory, then `make demo`, then
# `make test`, each timed with the wall clock and logged. Nothing is shared
# with this working tree (no target/, no node_modules, no venv), but the
# machine's caches stay as they are: cargo's registry and git checkouts,
# npm's, pip's and Maven's downloads (a machine that never built anything
# waits for those downloads too).
#   tools/time-fresh-clone.sh [make targets...]   (default: demo test)
# Prints "TARGET: N s" per target and keeps the logs in the printed
# directory; exits with the first failing target's status.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
targets=${*:-demo test}
work=$(mktemp -d "${TMPDIR:-/tmp}/sds-fresh.XXXXXX")
git clone -q --no-local "$repo" "$work/clone"
echo "clone of $(git -C "$repo" rev-parse --short HEAD) in $work/clone"
for target in $targets; do
    start=$(date +%s)
    status=0
    make -C "$work/clone" "$target" >"$work/$target.log" 2>&1 || status=$?
    echo "$target: $(( $(date +%s) - start )) s (log: $work/$target.log)"
    if [ "$status" -ne 0 ]; then
        tail -n 30 "$work/$target.log"
        exit "$status"
    fi
done
