# Entry points the README names: demo, test, bench, lint.
# Each binding adds its own targets from its make.mk (TESTS, DEMOS, BENCHES).
CARGO ?= cargo
export CARGO_TERM_COLOR ?= never
# A fresh clone gains nothing from cargo's incremental cache (it only speeds
# a rebuild after an edit) and pays for it: ~1.3 GB under target/debug and
# slower compiles. CARGO_INCREMENTAL=1 in the environment keeps it.
export CARGO_INCREMENTAL ?= 0

# Every release artifact (libsds, the wheel, the Node addon, the JNI library,
# the demo) is built for the host's triple named explicitly, as napi's CLI
# always does: they then share target/<triple>/release, and the dependency
# tree is compiled once for all of them (see README, "Two commands").
RUST_HOST := $(shell rustc -vV | sed -n 's/^host: //p')
RUST_RELEASE := target/$(RUST_HOST)/release

TESTS := test-core
DEMOS := demo-core
BENCHES := bench-core

-include ffi-c/make.mk
-include py/make.mk
-include node/make.mk
-include jvm/make.mk
-include crosslang/make.mk
-include cluster/make.mk

.PHONY: demo test bench lint servers test-core demo-core bench-core loom nostd sim-adaptive

demo: $(DEMOS)

test: lint servers $(TESTS)

bench: servers $(BENCHES)

# The real servers tests and benchmarks start on loopback (redis-server),
# from the distribution's packages.
servers:
	tools/install-servers.sh

# nostd-check builds only with panic=abort (see tools/check-nostd.sh), so clippy skips it.
# The wheel and the npm package ship copies of LICENSE (neither packs a file
# from outside its folder): they must not drift.
# check-features: the bindings ask the same features of their shared tree
# (tools/workspace-hack), so it is compiled once for all of them.
lint:
	tools/check-features.sh
	cmp LICENSE py/LICENSE && cmp LICENSE node/LICENSE
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --exclude nostd-check --all-targets --locked -- -D warnings

# Every crate's Rust tests (the bindings' unit tests too); nostd-check is
# built by its own script.
test-core: nostd loom
	$(CARGO) test --workspace --exclude nostd-check --locked

nostd:
	tools/check-nostd.sh

loom:
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom $(CARGO) test -p sds-core --locked --release --test loom --test keyed_loom

demo-core:
	$(CARGO) run -q -p sds-core --locked --release --target $(RUST_HOST) --example traffic

bench-core:
	$(CARGO) bench -p sds-core --locked

# Adaptive concurrency: our four algorithms and concurrency-limits' (Java,
# from Maven) in one deterministic simulation, side by side
# (core/src/adaptive/README.md). A program, not a test.
sim-adaptive:
	tools/adaptive-sim/run.sh
