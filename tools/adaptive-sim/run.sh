#!/bin/sh
# The adaptive-concurrency simulation, ours (sds-core) and the peer's
# (Netflix concurrency-limits 0.5.4 from Maven), one table under the other:
# same model, same seed, same draws (core/src/adaptive/README.md).
# Options go to both: --spread-us N, --queue N, --knee N, --seed N
# (core/examples/adaptive_sim.rs).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
sim="$root/tools/adaptive-sim"
ours=$(mktemp) peer=$(mktemp)
trap 'rm -f "$ours" "$peer"' EXIT
cargo run --quiet --release --manifest-path "$root/Cargo.toml" -p sds-core --example adaptive_sim -- "$@" >"$ours"
# Maven fetches concurrency-limits on the first run; MVN_OFFLINE=-o keeps
# later runs off the network.
mvn -q -B -ntp ${MVN_OFFLINE:-} -f "$sim/pom.xml" compile dependency:build-classpath \
    -Dmdep.outputFile="$sim/target/classpath.txt" >/dev/null
java -cp "$sim/target/classes:$(cat "$sim/target/classpath.txt")" sds.adaptivesim.AdaptiveSim "$@" 2>/dev/null >"$peer"
cat "$ours"
echo
cat "$peer"
echo
echo "side by side (sds row, then concurrency-limits row; GRADIENT is Envoy's and KNEE ours, which concurrency-limits lacks):"
grep "^limiter" "$ours"
for algo in AIMD VEGAS GRADIENT2 'fixed [0-9]+ \(4K\)' 'fixed [0-9]+ \(K/4\)'; do
    for phase in 1 2; do
        grep -E "^sds $algo +$phase " "$ours" || true
        grep -E "^peer $algo +$phase " "$peer" || true
    done
done
grep -E "^sds (GRADIENT |KNEE |AIMD refuse)" "$ours" || true
echo
echo "through a whole Point (enter refuses, exit feeds the limit; what the bindings run):"
grep -E "^point " "$ours" || true
