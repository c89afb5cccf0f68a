# sds-cluster: its tests run in `cargo test --workspace` (test-core) against
# a redis-server they start (`make servers` installs it); the benchmark here.

BENCHES += bench-cluster

.PHONY: bench-cluster

bench-cluster: servers
	$(CARGO) run -q -p sds-cluster --locked --release --target $(RUST_HOST) --example bench
