#!/usr/bin/env bash
# Fails if sds-core stops being no_std or starts using alloc outside its tests.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -q '^#!\[no_std\]$' core/src/lib.rs || { echo "core/src/lib.rs lost #![no_std]"; exit 1; }
if grep -rnE 'extern crate alloc|\balloc::' core/src; then
  echo "sds-core must not use alloc"; exit 1
fi
# A no_std staticlib with its own panic handler: linking std would clash with it.
cargo rustc -q -p nostd-check --release --locked -- -C panic=abort
echo "sds-core is no_std and alloc-free"
