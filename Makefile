# Targets for the Prickle toolchain. `make check` is what CI gates on.
GO ?= go

.PHONY: all generate check test bench fuzz lint fmt

all: check test

# Regenerate the typed API and the docs from the bundled pages.
generate:
	$(GO) generate ./...

# The gates: formatting, vet, generated files in sync, pages lint clean.
check:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) run ./cmd/prickle-gen check
	$(GO) run ./cmd/prickle-gen lint

# The README's test command.
test:
	$(GO) test -race ./...

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzParse -fuzztime=60s ./spec/
	$(GO) test -run='^$$' -fuzz=FuzzValidateDecode -fuzztime=60s ./gen/rt/
	$(GO) test -run='^$$' -fuzz=FuzzToolsCall -fuzztime=60s ./server/

lint:
	$(GO) run ./cmd/prickle-gen lint

fmt:
	$(GO) run ./cmd/prickle-gen fmt -l spec/reference
