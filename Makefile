# Targets for the Prickle toolchain. `make check` is what CI gates on;
# `make help` lists the targets.
GO ?= go

.PHONY: all help generate check test bench bench-compare bench-gate account replicas fuzz lint fmt

all: check test

help: ## list the targets
	@awk -F':.*## ' '/^[a-z-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

generate: ## regenerate api/ and docs/ from the bundled pages
	$(GO) generate ./...

check: ## the CI gates: gofmt, vet, generated files in sync, pages lint without errors
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) run ./cmd/prickle-gen check
	$(GO) run ./cmd/prickle-gen lint

test: ## the README's test command, then the race detector (as CI runs them)
	$(GO) test ./...
	bash .ci/race

bench: ## every benchmark, once
	$(GO) test -run='^$$' -bench=. -benchmem ./...

# BASE is the commit to compare with; BENCHFLAGS passes more flags
# (-count, -benchtime, -bench REGEXP, -out DIR).
BASE ?= main
bench-compare: ## the generator's benchmarks on BASE (default main) and the work tree, interleaved, with ratios
	$(GO) run ./tools/bench-compare -base $(BASE) $(BENCHFLAGS)

# CI_BENCH_BASE is the commit CI's benchmark gate compares the work tree
# with. Move it forward by hand after a change that costs more on purpose.
CI_BENCH_BASE = e340716
bench-gate: ## CI's gate: bench-compare with CI_BENCH_BASE in instructions at 100 pages; fails below 0.9×
	$(MAKE) --no-print-directory bench-compare BASE=$(CI_BENCH_BASE) BENCHFLAGS='-instructions -fail-below 0.9'

# ACCOUNTFLAGS passes more flags to prickle-load compare (-run, -runs,
# -calls, -clients, -json FILE); PROFILES is where the profiles go.
PROFILES ?= profiles
account: ## prickled's CPU per call beside the bare server, by cause (CPU profiles of both, out of process)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(GO) build -tags pprof -o "$$tmp/prickled" ./cmd/prickled && \
	$(GO) build -o "$$tmp/prickle-load" ./cmd/prickle-load && \
	"$$tmp/prickle-load" compare -sustain 0 -profile $(PROFILES) \
	  -run '^(claim_task|claim_task_fresh|discover_team_agents), 1 client' $(ACCOUNTFLAGS) \
	  -server-cmd "exec '$$tmp/prickled' --addr \$$PRICKLE_ADDR --db \$$PRICKLE_STATE_DIR/db.sqlite --world \$$PRICKLE_WORLD"

# REPLICASFLAGS passes more flags to prickle-load replicas (-rounds,
# -clients, -d, -deployments, -server-flags, -json FILE, -keep).
replicas: ## claims/s and CPU per claim of prickled on SQLite and as replicas on PostgreSQL (this machine's binaries)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(GO) build -o "$$tmp/prickled" ./cmd/prickled && \
	$(GO) build -o "$$tmp/prickle-load" ./cmd/prickle-load && \
	"$$tmp/prickle-load" replicas -prickled "$$tmp/prickled" $(REPLICASFLAGS)

fuzz: ## every fuzz target for a minute each
	$(GO) test -run='^$$' -fuzz=FuzzParse -fuzztime=60s ./spec/
	$(GO) test -run='^$$' -fuzz=FuzzCompile -fuzztime=60s ./internal/ecmaregex/
	$(GO) test -run='^$$' -fuzz=FuzzValidateDecode -fuzztime=60s ./rt/
	$(GO) test -run='^$$' -fuzz=FuzzFormats -fuzztime=60s ./internal/schemacompile/
	$(GO) test -run='^$$' -fuzz='^FuzzValidateClaimTask$$' -fuzztime=60s ./gen/internal/validatordiff/
	$(GO) test -run='^$$' -fuzz='^FuzzValidateClaimDiscussion$$' -fuzztime=60s ./gen/internal/validatordiff/
	$(GO) test -run='^$$' -fuzz='^FuzzValidateDiscoverTeamAgents$$' -fuzztime=60s ./gen/internal/validatordiff/
	$(GO) test -run='^$$' -fuzz=FuzzToolsCall -fuzztime=60s ./server/
	$(GO) test -run='^$$' -fuzz=FuzzStdioSession -fuzztime=60s -fuzzminimizetime=100x ./server/
	$(GO) test -run='^$$' -fuzz=FuzzReadMessagesAsTheGoSDK -fuzztime=60s ./server/
	$(GO) test -run='^$$' -fuzz=FuzzPlainEnvelope -fuzztime=60s ./server/
	$(GO) test -run='^$$' -fuzz=FuzzUnmarshal -fuzztime=60s ./internal/validation/
	$(GO) test -run='^$$' -fuzz=FuzzPropertyItemsEnums -fuzztime=60s ./internal/jsonschema/
	$(GO) test -run='^$$' -fuzz='^FuzzString$$' -fuzztime=60s ./internal/jsonschema/
	$(GO) test -run='^$$' -fuzz='^FuzzStrings$$' -fuzztime=60s ./internal/jsonschema/
	$(GO) test -run='^$$' -fuzz=FuzzCollapseSpace -fuzztime=60s ./spec/
	$(GO) test -run='^$$' -fuzz=FuzzIndex -fuzztime=60s ./internal/jsonpointer/

lint: ## lint the bundled pages
	$(GO) run ./cmd/prickle-gen lint

# The bundled pages are Prickle's, byte for byte, so fmt formats the Go
# code only; `prickle-gen fmt -d PATH` shows how a page would change.
fmt: ## gofmt the Go code
	gofmt -w $$(git ls-files '*.go')
