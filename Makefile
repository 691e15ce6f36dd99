# ssefold: one entry point per job. `make test` is the whole test suite
# (the README's second command; .ci/run calls it after installing what a
# fresh machine lacks).

CARGO ?= cargo

.PHONY: test lint rust-test demo bench

test: lint rust-test

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings

rust-test:
	$(CARGO) test

demo:
	$(CARGO) run --release -- demo

bench:
	$(CARGO) bench
