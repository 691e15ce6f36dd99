# ssefold: one entry point per job. `make test` is the whole test suite
# (the README's second command; .ci/run calls it after installing what a
# fresh machine lacks).

CARGO ?= cargo

.PHONY: test lint rust-test demo bench

# Everything: Rust lints and tests, the C ABI (header drift, install,
# C/C++ GoogleTest under valgrind, libcurl examples), the Python wheel, the
# Go package (vet, race detector, gofmt, and the GC-stress build).
test: lint rust-test c-test python-test go-test go-test-debug

# The Rust API docs build without a warning (broken or private links, missing
# docs), with and without the C ABI (`capi`, a default feature).
lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings
	$(CARGO) build --no-default-features
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --no-default-features

rust-test:
	$(CARGO) test
	$(CARGO) test -p ssefold-corpus

demo:
	$(CARGO) run --release -- demo

bench:
	$(CARGO) bench

# ---- C ABI (issue 6) -------------------------------------------------------
# Kept in one block; owned by the C ABI work. Targets:
#   make capi                       build libssefold.{so,a} (CAPI_PROFILE=release|debug)
#   make install PREFIX=/usr/local  header(s), libs (.so.X.Y.Z, .so.X, .so), .a,
#                                   pkg-config file, CMake package config
#   make header / header-check      regenerate include/ssefold.h / fail when stale
#   make c-test                     header check + C/C++ GoogleTest suite (CTest,
#                                   valgrind when installed) + examples + install test
#   make c-bench                    C ABI vs Rust API throughput (BENCHMARKS.md)
PREFIX ?= /usr/local
DESTDIR ?=
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
CAPI_PROFILE ?= release
CAPI_TARGET_DIR := target/$(CAPI_PROFILE)
CAPI_VERSION := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' Cargo.toml | head -n 1)
CAPI_MAJOR := $(word 1,$(subst ., ,$(CAPI_VERSION)))
CAPI_MINOR := $(word 2,$(subst ., ,$(CAPI_VERSION)))
# What a static libssefold.a needs from the system (rustc --print native-static-libs).
CAPI_NATIVE_LIBS := -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
HEADER_TOOL := target/header-tool/release/ssefold-header
C_TEST_DIR ?= target/c-test

.PHONY: capi install header header-check header-tool c-test c-bench

capi:
	$(CARGO) build --lib $(if $(filter release,$(CAPI_PROFILE)),--release,)

install: capi
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(LIBDIR)/cmake/ssefold $(DESTDIR)$(INCLUDEDIR)
	install -m 644 include/ssefold.h include/ssefold.hpp $(DESTDIR)$(INCLUDEDIR)/
	install -m 755 $(CAPI_TARGET_DIR)/libssefold.so $(DESTDIR)$(LIBDIR)/libssefold.so.$(CAPI_VERSION)
	ln -sf libssefold.so.$(CAPI_VERSION) $(DESTDIR)$(LIBDIR)/libssefold.so.$(CAPI_MAJOR)
	ln -sf libssefold.so.$(CAPI_MAJOR) $(DESTDIR)$(LIBDIR)/libssefold.so
	install -m 644 $(CAPI_TARGET_DIR)/libssefold.a $(DESTDIR)$(LIBDIR)/libssefold.a
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(CAPI_VERSION)|' -e 's|@NATIVE_LIBS@|$(CAPI_NATIVE_LIBS)|' \
	    bindings/c/ssefold.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/ssefold.pc
	sed -e 's|@VERSION@|$(CAPI_VERSION)|g' -e 's|@MAJOR@|$(CAPI_MAJOR)|g' \
	    -e 's|@CMAKE_NATIVE_LIBS@|$(subst $(eval) ,;,$(patsubst -l%,%,$(CAPI_NATIVE_LIBS)))|' \
	    bindings/c/ssefold-config.cmake.in > $(DESTDIR)$(LIBDIR)/cmake/ssefold/ssefold-config.cmake
	sed -e 's|@VERSION@|$(CAPI_VERSION)|g' -e 's|@MAJOR@|$(CAPI_MAJOR)|g' -e 's|@MINOR@|$(CAPI_MINOR)|g' \
	    bindings/c/ssefold-config-version.cmake.in > $(DESTDIR)$(LIBDIR)/cmake/ssefold/ssefold-config-version.cmake

header-tool:
	cd tools/header && $(CARGO) build --release --locked --target-dir ../../target/header-tool

header: header-tool
	$(HEADER_TOOL) .

header-check: header-tool
	$(HEADER_TOOL) --check .

c-test: header-check
	$(MAKE) install CAPI_PROFILE=debug PREFIX=$(abspath $(C_TEST_DIR)/prefix)
	cmake -S tests/c -B $(C_TEST_DIR)/build -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	    -DCMAKE_PREFIX_PATH=$(abspath $(C_TEST_DIR)/prefix) -DSSEFOLD_ROOT=$(CURDIR)
	cmake --build $(C_TEST_DIR)/build
	ctest --test-dir $(C_TEST_DIR)/build --output-on-failure

c-bench:
	tests/c/bench.sh
# ---- end of C ABI block ----------------------------------------------------

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

.PHONY: python-venv python-develop python-test python-lint python-bench sdk-oracle-report

$(VPY):
	$(PYTHON) -m venv $(VENV)

python-venv: $(VPY)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q "maturin>=1.9,<2" pytest mypy httpx
	$(VPY) -m pip install -q -r python/requirements-test.txt

python-develop: python-venv
	$(VENV)/bin/maturin develop -q

python-lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy -p ssefold-python --all-targets -- -D warnings

python-test: python-develop python-lint
	$(VPY) -m pytest -W error python/tests
	$(VPY) -m mypy.stubtest ssefold._ssefold --allowlist python/stubtest-allowlist.txt
	$(VPY) -m mypy python/ssefold

# The official SDKs (python/requirements-test.txt) against ssefold's fold on
# every stream, differences grouped (python/tests/sdk_oracle.py; the pytest
# side is python/tests/test_sdk_oracle.py). SSEFOLD_RECORDINGS=<dir> adds
# recordings kept elsewhere.
sdk-oracle-report: python-develop
	$(VPY) python/tests/sdk_oracle_report.py

python-bench: python-venv
	$(VPY) -m pip install -q httpx-sse sseclient-py matplotlib anthropic openai partial-json-parser jiter
	$(VENV)/bin/maturin develop -q --release
	$(VPY) python/bench/bench.py

# ---------------------------------------------------------------------------
# Go binding (issue 8): bindings/go links target/release/libssefold.a (cgo).
# go-test builds the static library with `make capi`, then vets, runs the
# tests under the race detector and checks gofmt. go-bench runs the
# side-by-side benchmark in bindings/go/bench (its own module).
# ---------------------------------------------------------------------------

GO ?= go
GO_FUZZTIME ?= 20s

.PHONY: go-test go-test-debug go-fuzz go-bench

go-test: capi
	cd bindings/go && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	@out="$$(gofmt -l bindings/go)"; if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi

# GC before every C call (debug_on.go): a missing runtime.KeepAlive shows up (~75 s).
go-test-debug: capi
	cd bindings/go && $(GO) test -tags debug -count=1 ./...

go-fuzz: capi
	cd bindings/go && for f in FuzzDecoder FuzzStream FuzzPartialJSON; do \
		$(GO) test -run XXX -fuzz=$$f -fuzztime=$(GO_FUZZTIME) . || exit 1; done

go-bench: capi
	cd bindings/go/bench && $(GO) test -run XXX -bench . -benchtime=3x -count=1 .
