#!/usr/bin/env bash
# Fails when the four bindings' libraries would ask different features of a
# crate they share, which makes cargo compile that crate (and every crate
# above it) again for each binding: tools/workspace-hack/Cargo.toml must
# then ask for the union. Reads cargo's resolution only; compiles nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
host=$(rustc -vV | sed -n 's/^host: //p')
bindings="sds-ffi sds-jni sds-py sds-node"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for b in $bindings; do
    # One line per (crate version, feature) and per crate version, normal
    # and build edges (the proc-macro side resolves apart), as built.
    cargo tree -p "$b" --target "$host" -e features,normal,build --prefix none --locked \
        | sed -n 's/^\([A-Za-z0-9_-]* v[0-9][^ ]*\).*/\1/p; s/^\([A-Za-z0-9_-]*\) feature \("[^"]*"\).*/\1 \2/p' \
        | sort -u > "$work/$b"
    cargo tree -p "$b" --target "$host" -e normal,build --prefix none --locked \
        | awk '{ print $1 }' | sort -u > "$work/$b.crates"
done
cat "$work"/*.crates | sort | uniq -c | awk -v n=4 '$1 == n { print $2 }' > "$work/shared"
status=0
while read -r crate; do
    seen=""
    for b in $bindings; do
        features=$(grep "^$crate \"" "$work/$b" | tr '\n' ' ' || true)
        seen="$seen$features"$'\n'
    done
    if [ "$(printf '%s' "$seen" | sort -u | wc -l)" -gt 1 ]; then
        echo "features of $crate differ between the bindings:"
        for b in $bindings; do echo "  $b: $(grep "^$crate \"" "$work/$b" | tr '\n' ' ' || true)"; done
        status=1
    fi
done < "$work/shared"
if [ "$status" -ne 0 ]; then
    echo "add the union to tools/workspace-hack/Cargo.toml"
    exit 1
fi
echo "the bindings ask the same features of the $(wc -l < "$work/shared") crates they share"
