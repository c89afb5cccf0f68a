# Node binding (npm package sds-native). Included by the root Makefile; paths
# are relative to the repository root.
TESTS += test-node
DEMOS += demo-node
BENCHES += bench-node

.PHONY: node-install test-node demo-node bench-node

# Pinned devDependencies from package-lock.json; the package's install hook
# then builds the addon with cargo (workspace target/, --locked) and
# regenerates index.d.ts.
node-install:
	cd node && npm ci --no-audit --no-fund

# The typings are committed: fail when the build changed them. Then the
# node:test suite, which also packs the package and installs the tarball
# into an empty project under build/ (test/package.test.js).
test-node: node-install
	git diff --exit-code -- node/index.d.ts
	cd node && node --test test/

demo-node: node-install
	node examples/node/guard.js

bench-node: node-install
	cd node && node bench/enter-exit.js
