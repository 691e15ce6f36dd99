# ssefold: one entry point per job. `make test` is the whole test suite (the
# README's second command, and what .ci/run runs): it first installs what a
# fresh Debian machine lacks (tools/setup.sh; SSEFOLD_SKIP_SETUP=1 skips it).

CARGO ?= cargo

.PHONY: test setup lint rust-test demo install-cli bench js-test

# Everything: Rust lints and tests, the C ABI (header drift, install,
# C/C++ GoogleTest under valgrind, libcurl examples), the Python wheel (on the
# machine's CPython and on a free-threaded 3.13t), the Go package (vet, race
# detector, gofmt, and the GC-stress build), the browser-side judges, and the
# release artifacts (make dist-test: built, then used with no Rust on PATH). After
# the Rust tests, two chains run side by side (make -j2): the Python side
# (pytest is single-threaded, so it leaves a core), and the native side, which
# builds the free-threaded interpreter (~2 minutes, cached per source tarball)
# before the Python side needs it. The C, Go and browser suites link or run
# what `rust-test` built (the test profile), so nothing is compiled twice.
# The suite is bound by CPU time (30-35 CPU-minutes, 15 minutes or more of
# wall time on two cores, whatever the order: a schedule that starts each
# stage as a slot frees measured no faster, see BENCHMARKS.md "Test suite").
test: setup
	$(MAKE) lint rust-test
	$(MAKE) -j2 --output-sync=recurse test-python-side test-native-side

.PHONY: test-python-side test-native-side
# One target per line: under the -j2 above, a sub-make given two targets
# would run them at once (go-test and go-test-debug both relink target/capi).
# go-test-debug runs on the Python side: the native side's release builds
# (make dist-test) are the longest stage.
test-python-side:
	$(MAKE) python-test
	$(MAKE) js-test
	$(MAKE) python-test-free-threaded
	$(MAKE) go-test-debug

test-native-side:
	$(MAKE) c-test
	$(MAKE) free-threaded-python
	$(MAKE) go-test
	$(MAKE) dist-test

setup:
	@if [ -z "$$SSEFOLD_SKIP_SETUP" ]; then tools/setup.sh; fi

# The shell scripts (shellcheck), then formatting and clippy over the default
# members (the library and the command line, cli/); the Rust API docs build without a warning (broken or private
# links, missing docs), with and without the C ABI (`capi`, a default feature).
lint:
	shellcheck .ci/run tools/*.sh tests/c/*.sh tests/dist/*.sh
	$(CARGO) fmt --all --check
	$(CARGO) clippy --all-targets -- -D warnings
	$(CARGO) check --no-default-features
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --no-default-features

# The library's tests, the command line's (cli/tests, one of them under a
# pseudo-terminal through python3) and the corpus generator's, in one build
# (the PyO3 binding is tested by python-test).
rust-test:
	$(CARGO) test --workspace --exclude ssefold-python

demo:
	$(CARGO) run --release -p ssefold-cli -- demo

# `ssefold` into ~/.cargo/bin (on PATH with rustup).
install-cli:
	$(CARGO) install --locked --path cli

bench:
	$(CARGO) bench

# ---- C ABI -----------------------------------------------------------------
# Targets:
#   make capi                       build libssefold.{so,a} (CAPI_PROFILE=release|debug|test)
#                                   and copy them into target/capi/ (what the Go package links)
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
# release: the shipped build (fat LTO, one codegen unit). test: the profile
# `cargo test` builds with (opt-level 2, line tables), so the suite's C and Go
# tests link the library `make rust-test` already compiled instead of building
# it once more. debug: cargo's dev profile.
CAPI_PROFILE ?= release
CAPI_CARGO_PROFILE := $(if $(filter debug,$(CAPI_PROFILE)),dev,$(CAPI_PROFILE))
# Where cargo puts a profile's output: dev and test share target/debug.
CAPI_TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)/$(if $(filter debug dev test,$(CAPI_PROFILE)),debug,$(CAPI_PROFILE))
CAPI_VERSION := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' Cargo.toml | head -n 1)
CAPI_MAJOR := $(word 1,$(subst ., ,$(CAPI_VERSION)))
CAPI_MINOR := $(word 2,$(subst ., ,$(CAPI_VERSION)))
# The ABI version in the SONAME (build.rs): the major, `0.<minor>` before 1.0.
CAPI_SOVERSION := $(if $(filter 0,$(CAPI_MAJOR)),0.$(CAPI_MINOR),$(CAPI_MAJOR))
# What a static libssefold.a needs from the system (rustc --print native-static-libs).
CAPI_NATIVE_LIBS := -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
# The same for pkg-config's Libs.private, less -lgcc_s: the compiler driver
# links the unwinder itself (libgcc_s, or libgcc_eh with -static, where
# -lgcc_s does not exist).
CAPI_PC_NATIVE_LIBS := $(filter-out -lgcc_s,$(CAPI_NATIVE_LIBS))
HEADER_TOOL := target/header-tool/debug/ssefold-header
C_TEST_DIR ?= target/c-test

.PHONY: capi install header header-check header-tool c-test c-bench

capi:
	$(CARGO) build --lib --profile $(CAPI_CARGO_PROFILE)
	mkdir -p target/capi
	@# Copied under a temporary name and renamed: a build linking the old
	@# file never reads a half-written one.
	for f in libssefold.a libssefold.so; do \
	  cp -f $(CAPI_TARGET_DIR)/$$f target/capi/.$$f.tmp && mv -f target/capi/.$$f.tmp target/capi/$$f || exit 1; done

# Libraries are installed without their debug info (INSTALL_STRIP=0 keeps it).
INSTALL_STRIP ?= 1
STRIP ?= strip
# RPATH=auto: when LIBDIR is not a directory the dynamic linker searches (not
# /usr/local/lib, /usr/lib/<multiarch>, ...), the pkg-config and CMake files
# add -Wl,-rpath,LIBDIR so that programs start without LD_LIBRARY_PATH;
# yes/no force it. Installing into a searched directory (DESTDIR empty, as
# root) runs ldconfig.
RPATH ?= auto

# CAPI_LIB_DIR=DIR installs the libssefold.{so,a} found in DIR instead of
# building them (tools/dist.sh: the release libraries, linked by zig).
# RELOCATABLE=1 writes the pkg-config file's paths relative to where it lies
# (`${pcfiledir}`), for an archive unpacked anywhere (needs the default
# LIBDIR and INCLUDEDIR: PREFIX/lib, PREFIX/include); the CMake package is
# relocatable either way.
CAPI_LIB_DIR ?=
RELOCATABLE ?= 0
CAPI_INSTALL_FROM := $(or $(CAPI_LIB_DIR),$(CAPI_TARGET_DIR))

install: $(if $(CAPI_LIB_DIR),,capi)
	@if [ "$(RELOCATABLE)" = 1 ] && { [ "$(LIBDIR)" != "$(PREFIX)/lib" ] || [ "$(INCLUDEDIR)" != "$(PREFIX)/include" ]; }; then \
	  echo "RELOCATABLE=1 needs LIBDIR=PREFIX/lib and INCLUDEDIR=PREFIX/include" >&2; exit 2; fi
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(LIBDIR)/cmake/ssefold $(DESTDIR)$(INCLUDEDIR)
	install -m 644 include/ssefold.h include/ssefold.hpp $(DESTDIR)$(INCLUDEDIR)/
	install -m 755 $(CAPI_INSTALL_FROM)/libssefold.so $(DESTDIR)$(LIBDIR)/libssefold.so.$(CAPI_VERSION)
	ln -sf libssefold.so.$(CAPI_VERSION) $(DESTDIR)$(LIBDIR)/libssefold.so.$(CAPI_SOVERSION)
	ln -sf libssefold.so.$(CAPI_SOVERSION) $(DESTDIR)$(LIBDIR)/libssefold.so
	install -m 644 $(CAPI_INSTALL_FROM)/libssefold.a $(DESTDIR)$(LIBDIR)/libssefold.a
	@if [ "$(INSTALL_STRIP)" = 1 ]; then \
	  $(STRIP) --strip-unneeded $(DESTDIR)$(LIBDIR)/libssefold.so.$(CAPI_VERSION) && \
	  $(STRIP) --strip-debug $(DESTDIR)$(LIBDIR)/libssefold.a; fi
	@searched=no; libdir=$$(realpath -m "$(LIBDIR)"); \
	for d in $$(ldconfig -N -v 2>/dev/null | sed -n 's/^\([^\t][^:]*\):.*/\1/p') /lib /usr/lib; do \
	  [ "$$(realpath -m "$$d")" = "$$libdir" ] && searched=yes; done; \
	case "$(RPATH)" in yes) rpath=ON;; no) rpath=OFF;; *) [ $$searched = yes ] && rpath=OFF || rpath=ON;; esac; \
	if [ $$rpath = ON ]; then pc_rpath='-Wl,-rpath,$${libdir}'; else pc_rpath=; fi; \
	include_rel=$$(realpath -m --relative-to="$(LIBDIR)/cmake/ssefold" "$(INCLUDEDIR)"); \
	if [ "$(RELOCATABLE)" = 1 ]; then pc_prefix='$${pcfiledir}/../..'; pc_libdir='$${prefix}/lib'; pc_incdir='$${prefix}/include'; \
	else pc_prefix='$(PREFIX)'; pc_libdir='$(LIBDIR)'; pc_incdir='$(INCLUDEDIR)'; fi; \
	sed -e "s|@PREFIX@|$$pc_prefix|" -e "s|@LIBDIR@|$$pc_libdir|" -e "s|@INCLUDEDIR@|$$pc_incdir|" \
	    -e 's|@VERSION@|$(CAPI_VERSION)|' -e 's|@NATIVE_LIBS@|$(CAPI_PC_NATIVE_LIBS)|' -e "s|@RPATH_FLAGS@|$$pc_rpath|" \
	    bindings/c/ssefold.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/ssefold.pc && \
	sed -e 's|@VERSION@|$(CAPI_VERSION)|g' -e 's|@SOVERSION@|$(CAPI_SOVERSION)|g' -e "s|@INCLUDEDIR_REL@|$$include_rel|" \
	    -e "s|@RPATH@|$$rpath|" \
	    -e 's|@CMAKE_NATIVE_LIBS@|$(subst $(eval) ,;,$(patsubst -l%,%,$(CAPI_NATIVE_LIBS)))|' \
	    bindings/c/ssefold-config.cmake.in > $(DESTDIR)$(LIBDIR)/cmake/ssefold/ssefold-config.cmake && \
	sed -e 's|@VERSION@|$(CAPI_VERSION)|g' -e 's|@MAJOR@|$(CAPI_MAJOR)|g' -e 's|@MINOR@|$(CAPI_MINOR)|g' \
	    bindings/c/ssefold-config-version.cmake.in > $(DESTDIR)$(LIBDIR)/cmake/ssefold/ssefold-config-version.cmake && \
	if [ $$searched = yes ] && [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; fi

header-tool:
	cd tools/header && $(CARGO) build --locked --target-dir ../../target/header-tool

header: header-tool
	$(HEADER_TOOL) .

header-check: header-tool
	$(HEADER_TOOL) --check .

c-test: header-check
	$(MAKE) install CAPI_PROFILE=test INSTALL_STRIP=0 PREFIX=$(abspath $(C_TEST_DIR)/prefix)
	cmake -S tests/c -B $(C_TEST_DIR)/build -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	    -DCMAKE_PREFIX_PATH=$(abspath $(C_TEST_DIR)/prefix) -DSSEFOLD_ROOT=$(CURDIR)
	cmake --build $(C_TEST_DIR)/build
	CAPI_PROFILE=test ctest --test-dir $(C_TEST_DIR)/build --output-on-failure --parallel 2

c-bench:
	tests/c/bench.sh
# ---- end of C ABI block ----------------------------------------------------

# ---- Release artifacts ------------------------------------------------------
# make dist         the wheels (manylinux_2_17: one built for each interpreter of
#                   DIST_PYTHONS, default python3; abi3 for the other versions;
#                   free-threaded when a 3.13t is at hand), the sdist, the C
#                   tarball and the Go module with
#                   its prebuilt library, into dist/ (tools/dist.sh says what each is)
# make dist-test    the above, then each artifact installed and used with no
#                   Rust toolchain on PATH (tests/dist/check.sh), and the
#                   release workflow checked by actionlint
.PHONY: dist dist-test workflow-lint
dist:
	tools/dist.sh

dist-test: dist workflow-lint
	tests/dist/check.sh dist

ACTIONLINT_VERSION := v1.7.12
ACTIONLINT := target/tools/actionlint-$(ACTIONLINT_VERSION)
$(ACTIONLINT):
	mkdir -p target/tools
	GOBIN=$(abspath target/tools/gobin) $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)
	mv target/tools/gobin/actionlint $@

workflow-lint: $(ACTIONLINT)
	$(ACTIONLINT) -no-color .github/workflows/*.yml

# ---------------------------------------------------------------------------
# Python wheel: `make python-test`
# creates .venv/, builds the extension in place (maturin develop) and runs
# pytest (-W error, xfail_strict from pyproject.toml), the stub check and the
# binding crate's lints. Needs python3 (>= 3.9) with venv; PyPI for the
# tools. `make python-bench` builds in release mode, with the benchmarks'
# core-only hooks (cargo feature `bench`), and writes BENCHMARKS.md.
# ---------------------------------------------------------------------------

PYTHON ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python

.PHONY: python-venv python-develop python-test python-lint python-bench sdk-oracle-report
.PHONY: free-threaded-python python-test-free-threaded

$(VPY):
	$(PYTHON) -m venv $(VENV)

python-venv: $(VPY)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q "maturin>=1.9,<2" pytest mypy pyright httpx
	$(VPY) -m pip install -q -r python/requirements-test.txt

# The extension is built in the `python-test` profile (the test profile's
# opt-level 2 and line tables, under a name of its own: `--profile test` would
# build cargo's test harness): the suite runs ~40 % faster than on a debug build.
PY_PROFILE ?= python-test

python-develop: python-venv
	$(VENV)/bin/maturin develop -q --profile $(PY_PROFILE)

python-lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy -p ssefold-python --all-targets -- -D warnings

python-test: python-develop python-lint
	$(VPY) -m pytest -W error python/tests
	$(VPY) -m mypy.stubtest ssefold._ssefold --allowlist python/stubtest-allowlist.txt
	$(VPY) -m mypy python/ssefold

# The same suite on a free-threaded CPython 3.13 (python3.13t, built once from
# Debian's source package into target/python3.13t by
# tools/free-threaded-python.sh; SSEFOLD_FT_PYTHON=<python3.13t> uses yours): clippy over the free-threaded cfg, the
# extension built for it (version-specific: free-threaded builds have no
# stable ABI), and pytest with the test dependencies that install there
# (python/requirements-free-threaded.txt; the others' tests skip).
FT_VENV := target/venv-3.13t
FT_VPY := $(FT_VENV)/bin/python

free-threaded-python:
	tools/free-threaded-python.sh >/dev/null

python-test-free-threaded: free-threaded-python
	[ -x $(FT_VPY) ] || "$$(tools/free-threaded-python.sh)" -m venv $(FT_VENV)
	$(FT_VPY) -m pip install -q "maturin>=1.9,<2" -r python/requirements-free-threaded.txt
	PYO3_PYTHON=$(CURDIR)/$(FT_VPY) $(CARGO) clippy -p ssefold-python --all-targets -- -D warnings
	VIRTUAL_ENV=$(CURDIR)/$(FT_VENV) $(FT_VENV)/bin/maturin develop -q --profile $(PY_PROFILE)
	$(FT_VPY) -m pytest -W error python/tests

# The official SDKs (python/requirements-test.txt) against ssefold's fold on
# every stream, differences grouped (python/tests/sdk_oracle.py; the pytest
# side is python/tests/test_sdk_oracle.py). SSEFOLD_RECORDINGS=<dir> adds
# recordings kept elsewhere.
sdk-oracle-report: python-develop
	$(VPY) python/tests/sdk_oracle_report.py

python-bench: python-venv
	$(VPY) -m pip install -q httpx-sse sseclient-py matplotlib anthropic openai partial-json-parser jiter
	$(VPY) -m pip install -q google-genai==3.3.0 botocore==1.44.5 ollama==0.6.3
	$(VENV)/bin/maturin develop -q --release --features bench
	$(VPY) python/bench/bench.py

# ---------------------------------------------------------------------------
# Go binding: bindings/go links target/capi/libssefold.a (cgo; `make capi`
# copies it there). go-test builds it in the test profile (the build
# `make rust-test` already made: opt-level 2, not the shipped fat-LTO release;
# go-bench builds the release), then vets, runs the
# tests under the race detector and checks gofmt, for the package and for
# its OpenTelemetry instrumentation in bindings/go/otel (a module of its own,
# which requires go.opentelemetry.io/otel), and for the Redis replay store in
# bindings/go/redisstore (its own module too, on go-redis; its tests start a
# redis-server, which tools/setup.sh installs). go-bench runs the side-by-side
# benchmark in bindings/go/bench (its own module).
# ---------------------------------------------------------------------------

GO ?= $(or $(shell command -v go),/usr/local/go/bin/go)
GO_FUZZTIME ?= 20s

.PHONY: go-test go-test-debug go-fuzz go-bench

go-test:
	$(MAKE) capi CAPI_PROFILE=test
	cd bindings/go && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd bindings/go/otel && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd bindings/go/redisstore && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	@out="$$(gofmt -l bindings/go)"; if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi

# A GC before every C call (debug_on.go; gcstress_test.go checks that every call
# has one): a missing runtime.KeepAlive shows up as a use-after-free (~50-150 s).
go-test-debug:
	$(MAKE) capi CAPI_PROFILE=test
	cd bindings/go && $(GO) test -tags debug -count=1 ./...

go-fuzz:
	$(MAKE) capi CAPI_PROFILE=test
	cd bindings/go && for f in FuzzDecoder FuzzStream FuzzPartialJSON; do \
		$(GO) test -run XXX -fuzz=$$f -fuzztime=$(GO_FUZZTIME) . || exit 1; done

go-bench:
	$(MAKE) capi CAPI_PROFILE=release
	cd bindings/go/bench && $(GO) test -run XXX -bench . -benchtime=3x -count=1 .

# ---------------------------------------------------------------------------
# Browser-side clients as judges of the relay (tests/js): the `ai` npm
# package rebuilds the UI message from the relayed stream of every fixture,
# and a headless Chromium EventSource reads the catalog format, reconnecting
# with Last-Event-ID; and the same browser resumes a stream kept in Redis on a
# second server process after the first is killed (resumable_chromium, run
# with the venv's Python: `make python-develop` first, as `make test` does).
# npm ci installs the pinned packages (package-lock.json). The examples run in
# the test profile: `make rust-test` built them so (target/debug).
# ---------------------------------------------------------------------------

# Where cargo builds (CARGO_TARGET_DIR when set, as cargo reads it).
RELAY_TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
RELAY_CASES := $(RELAY_TARGET_DIR)/relay-cases

js-test: python-develop
	cd tests/js && npm ci --no-audit --no-fund --loglevel=error
	$(CARGO) run -q --profile test --example relay_cases -- $(RELAY_CASES)
	$(CARGO) build -q --profile test --example relay_server
	cd tests/js && RELAY_CASES=$(abspath $(RELAY_CASES)) RELAY_SERVER=$(abspath $(RELAY_TARGET_DIR)/debug/examples/relay_server) \
	    SSEFOLD_ROOT=$(CURDIR) SSEFOLD_PYTHON=$(abspath $(VPY)) node --test

# The browser's time to take a 320 KB tool argument relayed with and without
# tool-input coalescing (headless Chromium, the real `ai` package; BENCHMARKS.md).
.PHONY: js-bench
js-bench:
	cd tests/js && npm ci --no-audit --no-fund --loglevel=error
	$(CARGO) run -q --example bench_tool_input -- $(RELAY_TARGET_DIR)/bench-tool-input
	cd tests/js && BENCH_DIR=$(abspath $(RELAY_TARGET_DIR)/bench-tool-input) node bench_tool_input.mjs

# The demo page (examples/web) served by python/examples/demo_web.py on
# http://127.0.0.1:8000/: a relayed agent turn from recorded streams, no API
# key. demo-web-screenshot renews the README's picture (headless Chromium).
.PHONY: demo-web demo-web-screenshot
demo-web: python-develop
	$(VPY) python/examples/demo_web.py

demo-web-screenshot: python-develop
	cd tests/js && npm ci --no-audit --no-fund --loglevel=error
	$(CARGO) run -q --profile test --example relay_cases -- $(RELAY_CASES)
	cd tests/js && RELAY_CASES=$(abspath $(RELAY_CASES)) SSEFOLD_ROOT=$(CURDIR) SSEFOLD_PYTHON=$(abspath $(VPY)) \
	    DEMO_SCREENSHOT=$(CURDIR)/examples/web/screenshot.png node --test demo_web.test.mjs
