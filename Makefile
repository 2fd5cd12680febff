# Usher — everyday commands.
#
#   make deps    check (as root: install) the system libraries the build needs
#   make build   build the `usher` command (release)
#   make run     build, then run the worker with bots/support on sqlite:usher.db
#   make test    build everything, then `make unit` and `make system` — exactly what CI runs (.ci/run)
#   make unit    the fast tests: no server, no subprocess, no real sleep (~5 s after the build)
#   make system  the tests with real servers, processes and timers, one at a time (minutes)
#   make bench   run the benchmarks in Benchmarks/ (release; BENCHMARKS.md)
#   make fuzz    short libFuzzer runs over the YAML loader and the text matcher
#
# Needs Swift 6.3 on PATH and, on Debian/Ubuntu, the -dev packages in APT_PACKAGES.

SHELL := /bin/bash
SWIFT ?= swift

# System libraries, as pkg-config names them, and the Debian packages that provide them.
# PostgreSQL: libpq to build; the server binaries (initdb, pg_ctl, postgres) only for the tests,
# which start a throwaway server of their own (no system service is used).
# What has no pkg-config file is checked by path (FILES): Snowball's libstemmer (word forms),
# and the hunspell dictionaries that typos are checked against (English and Spanish: the bots
# and tests here use them; a bot in another language needs that language's hunspell-* package).
PKG_CONFIG_MODULES := yaml-0.1 libpcre2-8 icu-uc zlib sqlite3 libmicrohttpd libpq libcurl libcrypto
FILES := /usr/include/libstemmer.h /usr/share/hunspell/en_US.dic /usr/share/hunspell/es_ES.dic
APT_PACKAGES := libyaml-dev libpcre2-dev libicu-dev zlib1g-dev libsqlite3-dev libmicrohttpd-dev libpq-dev libcurl4-openssl-dev libssl-dev libstemmer-dev hunspell-en-us hunspell-es sqlite3 python3 pkg-config
TEST_APT_PACKAGES := postgresql postgresql-client openssl

# Fuzzing: seconds per harness, seed inputs (checked in) and where new inputs and
# crashes go (not checked in, see .gitignore).
FUZZ_SECONDS ?= 60
FUZZ_SCRATCH := .build/fuzz
FUZZ_OUT := fuzz-corpus

.DEFAULT_GOAL := help
.PHONY: help deps test-deps build run test unit system bench fuzz

help:
	@sed -n '3,11s/^# \{0,1\}//p' Makefile

deps:
	@if ! command -v $(SWIFT) >/dev/null 2>&1; then \
	  echo "error: '$(SWIFT)' is not on PATH. Install Swift 6.3 (swift.org) and put its usr/bin on PATH." >&2; \
	  exit 1; \
	fi
	@missing=""; \
	if command -v pkg-config >/dev/null 2>&1; then \
	  for m in $(PKG_CONFIG_MODULES); do pkg-config --exists $$m || missing="$$missing $$m"; done; \
	  for f in $(FILES); do [ -f $$f ] || missing="$$missing $$f"; done; \
	  for c in sqlite3 python3; do command -v $$c >/dev/null 2>&1 || missing="$$missing $$c"; done; \
	else \
	  missing=" pkg-config"; \
	fi; \
	if [ -z "$$missing" ]; then \
	  echo "    ok: swift, $(PKG_CONFIG_MODULES)"; \
	elif [ "$$(id -u)" = 0 ]; then \
	  echo "    missing:$$missing — installing $(APT_PACKAGES)"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(APT_PACKAGES); \
	  pkg-config --exists $(PKG_CONFIG_MODULES) && ls $(FILES) >/dev/null || { echo "error: still missing after apt-get install" >&2; exit 1; }; \
	else \
	  echo "error: missing system libraries:$$missing. Install them with:" >&2; \
	  echo "    sudo apt-get install -y $(APT_PACKAGES)" >&2; \
	  exit 1; \
	fi

# What the tests need besides the build: PostgreSQL's server binaries (the tests run initdb
# into a temporary directory and start a server on a Unix socket there), and openssl (the TLS
# test makes a self-signed certificate; Debian's postgresql package brings it anyway).
test-deps:
	@if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v psql >/dev/null 2>&1 && command -v openssl >/dev/null 2>&1; then \
	  echo "    ok: PostgreSQL server binaries ($$(ls -d /usr/lib/postgresql/*/bin | tail -1))"; \
	elif [ "$$(id -u)" = 0 ]; then \
	  echo "    missing: PostgreSQL server binaries — installing $(TEST_APT_PACKAGES)"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(TEST_APT_PACKAGES); \
	else \
	  echo "error: the tests need PostgreSQL's server binaries. Install them with:" >&2; \
	  echo "    sudo apt-get install -y $(TEST_APT_PACKAGES)" >&2; \
	  exit 1; \
	fi
	@# The Firestore tests start Google's emulator (a JVM) themselves; it comes with the machine
	@# (google-cloud-cli-firestore-emulator and Java 17), not from Debian's archive.
	@if ls /usr/lib/google-cloud-sdk/platform/cloud-firestore-emulator/cloud-firestore-emulator.jar >/dev/null 2>&1 && command -v java >/dev/null 2>&1; then \
	  echo "    ok: the Firestore emulator and $$(java -version 2>&1 | head -1)"; \
	else \
	  echo "error: the Firestore tests need Google's Firestore emulator and Java 17: install google-cloud-cli-firestore-emulator (Google's apt repository) and openjdk-17-jre-headless" >&2; \
	  exit 1; \
	fi

build: deps
	$(SWIFT) build -c release --product usher

# The main job: the worker on the embedded SQLite store, answering with bots/support.
# Talk to it from another terminal: usher send / usher chat / usher inbox (see README).
STORE ?= sqlite:usher.db
run: deps build
	.build/release/usher check bots/support
	.build/release/usher run bots/support --store $(STORE) --metrics 127.0.0.1:9464

# The tests in two groups, told apart by the test ids `swift test` matches (Target.Suite/test):
# SYSTEM_TESTS are the suites that start PostgreSQL, run `usher` or another program, or wait on
# real threads and timers; every other test is a unit test and must need none of that — a new
# suite is a unit test unless it is listed here. The unit tests run in parallel; the system tests
# one at a time, because they start worker processes and time their shutdown, which other tests
# running beside them on a 2-core machine would skew.
# Measured 2026-12-05 on the 2-core machine, fresh clone: build 85-92 s, then unit 3-4 s (6 s with
# two other processes spinning on the cores), system 131-161 s; `make test` about 4 minutes.
SYSTEM_TESTS := ^(UsherPostgresTests|UsherSystemTests|UsherCLITests|UsherFirestoreTests)\. \
  |^UsherRuntimeTests\.(WorkerTests|HTTPTests|HTTPServerTests|NotificationDeliveryTests|SlowWriteTests|LateNotificationTests|WorkerFaultTests)/ \
  |^UsherStoreTests\.ChangeSignalTests/ \
  |^UsherSQLiteTests\.(WaitingTests|SnapshotTests|CrashTests|FileFaultTests)/ \
  |^UsherHTTPTests\.HTTPClientWaitTests/ \
  |^UsherWebhookTests\.(WebhookStoreTests|ChatwootStoreTests)/
empty :=
SYSTEM_FILTER := $(subst $(empty) $(empty),,$(strip $(SYSTEM_TESTS)))
# `make test` builds once, then runs both groups without building again.
TEST_BUILD ?=

test:
	@echo "==> 1/4 checking swift, the system libraries and PostgreSQL (make deps test-deps)"
	@$(MAKE) --no-print-directory deps test-deps
	@echo "==> 2/4 building every target and test, debug: swift build --build-tests"
	$(SWIFT) build --build-tests
	@echo "==> 3/4 unit tests: make unit"
	@$(MAKE) --no-print-directory unit TEST_BUILD=--skip-build
	@echo "==> 4/4 system tests: make system"
	@$(MAKE) --no-print-directory system TEST_BUILD=--skip-build

unit: deps
	$(SWIFT) test $(TEST_BUILD) --skip '$(SYSTEM_FILTER)'

system: deps test-deps
	$(SWIFT) test $(TEST_BUILD) --no-parallel --filter '$(SYSTEM_FILTER)'

bench: deps test-deps
	$(SWIFT) run -c release usher-bench
	$(SWIFT) run -c release usher-store-bench
	$(SWIFT) run -c release usher-pg-bench
	$(SWIFT) run -c release usher-firestore-bench
	$(SWIFT) run -c release usher-webhook-bench

# Each harness runs FUZZ_SECONDS (default 60). New interesting inputs are written to
# $(FUZZ_OUT)/yaml and $(FUZZ_OUT)/text, crashes to $(FUZZ_OUT)/crash-*; the seeds in
# fuzz/corpus/ are only read. Reproduce a crash with: $(FUZZ_SCRATCH)/debug/FuzzYAML FILE
fuzz: deps
	$(SWIFT) build -c debug --sanitize=fuzzer --product FuzzYAML --scratch-path $(FUZZ_SCRATCH)
	$(SWIFT) build -c debug --sanitize=fuzzer --product FuzzText --scratch-path $(FUZZ_SCRATCH)
	mkdir -p $(FUZZ_OUT)/yaml $(FUZZ_OUT)/text
	$(FUZZ_SCRATCH)/debug/FuzzYAML -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$(FUZZ_OUT)/ \
	  $(FUZZ_OUT)/yaml fuzz/corpus/yaml
	$(FUZZ_SCRATCH)/debug/FuzzText -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$(FUZZ_OUT)/ \
	  $(FUZZ_OUT)/text fuzz/corpus/text
