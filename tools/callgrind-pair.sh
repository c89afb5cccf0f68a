#!/bin/sh
# Instructions per enter + exit pair (5 rules), counted by callgrind: each
# mode of core/examples/pair_count.rs runs N and 2N pairs, and a pair is
# (count(2N) - count(N)) / N, so set-up costs cancel out. Deterministic, so
# it holds on a loaded machine where nanoseconds do not.
#   tools/callgrind-pair.sh [MODE...]   (default: every mode)
set -eu
cd "$(dirname "$0")/.."
N=${N:-20000}
MODES=${*:-point cluster id name ledger governor warm pace slow adaptive knee}
${CARGO:-cargo} build -q -p sds-core --release --locked --example pair_count
BIN=${CARGO_TARGET_DIR:-target}/release/examples/pair_count
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
count() {
    valgrind --tool=callgrind --callgrind-out-file="$OUT/out" "$BIN" "$1" "$2" 2>/dev/null
    sed -n 's/^\(summary\|totals\): *//p' "$OUT/out" | head -n 1
}
for mode in $MODES; do
    one=$(count "$mode" "$N")
    two=$(count "$mode" $((2 * N)))
    echo "$mode: $(( (two - one) / N )) instructions per pair"
done
