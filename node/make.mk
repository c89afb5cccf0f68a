# Node binding (npm package sds-native). Included by the root Makefile; paths
# are relative to the repository root.
TESTS += test-node
DEMOS += demo-node
BENCHES += bench-node

.PHONY: node-install test-node demo-node bench-node

# Pinned devDependencies from package-lock.json; the package's install hook
# then builds the addon with cargo (workspace target/, --locked) and
# regenerates lib/native.d.ts.
node-install:
	cd node && npm ci --no-audit --no-fund

# The generated typings of the addon are committed: fail when the build
# changed them. Then the node:test suite, which also type-checks index.d.ts
# with tsc and packs the package and installs the tarball into an empty
# project under build/. (The addon's Rust unit tests run in test-core.)
test-node: node-install
	git diff --exit-code -- node/lib/native.d.ts
	cd node && node --test test/

demo-node: node-install
	node examples/node/guard.js
	node examples/node/shared.js
	node examples/node/express-cluster.js
	node examples/node/web-app.js
	node examples/node/pacing.js
	node examples/node/adaptive.js

# The benchmarks load an addon built with the cargo feature bench-hooks (the
# floor case's emptyCall and readClock), kept apart from the package's addon.
# shared-table.js and cluster.js start their own redis-server (make servers
# installs it; node/testing/redis-server.js, shared with the tests).
NODE_BENCH_DIR := $(CURDIR)/build/node-bench
bench-node: node-install
	cd node && npx napi build --platform --release --no-js --features bench-hooks \
		-o $(NODE_BENCH_DIR) --dts native.d.ts -- --locked
	cd node && SDS_NATIVE_ADDON=$$(ls $(NODE_BENCH_DIR)/sds-native.*.node) node bench/enter-exit.js
	cd node && SDS_NATIVE_ADDON=$$(ls $(NODE_BENCH_DIR)/sds-native.*.node) node bench/shared-table.js
	cd node && SDS_NATIVE_ADDON=$$(ls $(NODE_BENCH_DIR)/sds-native.*.node) node bench/cluster.js
	cd node && node bench/keyed.js
	cd node && node bench/keyed-stores.js
	cd node && node bench/web-overhead.js
