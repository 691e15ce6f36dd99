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

# ---------------------------------------------------------------------------
# Python wheel (issue 7) — owned by the Python binding; `make python-test`
# creates .venv/, builds the extension in place (maturin develop) and runs
# pytest (-W error, xfail_strict from pyproject.toml), the stub check and the
# binding crate's lints. Needs python3 (>= 3.9) with venv; PyPI for the
# tools. `make python-bench` builds in release mode and writes BENCHMARKS.md.
# ---------------------------------------------------------------------------

PYTHON ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python

.PHONY: python-venv python-develop python-test python-lint python-bench

$(VPY):
	$(PYTHON) -m venv $(VENV)

python-venv: $(VPY)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q "maturin>=1.9,<2" pytest mypy httpx

python-develop: python-venv
	$(VENV)/bin/maturin develop -q

python-lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy -p ssefold-python --all-targets -- -D warnings

python-test: python-develop python-lint
	$(VPY) -m pytest -W error python/tests
	$(VPY) -m mypy.stubtest ssefold._ssefold --allowlist python/stubtest-allowlist.txt
	$(VPY) -m mypy python/ssefold

python-bench: python-venv
	$(VPY) -m pip install -q httpx-sse sseclient-py matplotlib anthropic openai partial-json-parser jiter
	$(VENV)/bin/maturin develop -q --release
	$(VPY) python/bench/bench.py
