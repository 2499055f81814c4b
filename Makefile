# Every target creates (once) and reuses a local virtual environment in .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
BENCH_STAMP := $(VENV)/.installed-bench

.PHONY: demo test check lint bench proto clean node-bot go-bot cpp-bot sandbox-deps browser-deps bench-deps

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install --quiet -e '.[dev,dask,workbench]'
	touch $@

$(BENCH_STAMP): $(STAMP)
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install --quiet -e '.[dev,dask,workbench,bench]'
	touch $@

# The Node.js sample bot's dependencies (npm ci, again only when its lock file changes). CI needs
# node and npm (Node 20+); without them this fails loudly rather than skipping the Node tests.
NODE_BOT_DIR   := sample_bots/node
NODE_BOT_STAMP := $(NODE_BOT_DIR)/node_modules/.installed-stamp

$(NODE_BOT_STAMP): $(NODE_BOT_DIR)/package-lock.json $(NODE_BOT_DIR)/package.json
	@command -v node >/dev/null 2>&1 || { echo "make node-bot: 'node' not found: install Node.js 20+ (the Node sample bot and its tests need it)" >&2; exit 1; }
	@command -v npm >/dev/null 2>&1 || { echo "make node-bot: 'npm' not found: install npm (it comes with Node.js 20+)" >&2; exit 1; }
	cd $(NODE_BOT_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

node-bot: $(NODE_BOT_STAMP)

# The Go sample bot: protoc generates the Go code of the .proto (its go_package) into a GOPATH
# under build/, and `go build` links ./gin-go-bot (static, no cgo), offline, in GOPATH mode, from
# Debian's Go packages only (no module proxy). As root this installs whichever of those packages
# is missing; otherwise a missing one fails loudly rather than skipping the Go tests.
GO_BOT_DIR   := sample_bots/go
GO_BOT_BIN   := $(GO_BOT_DIR)/gin-go-bot
GO_BOT_BUILD := build/go-bot
GO_BOT_DEBS  := golang-go golang-google-grpc-dev golang-github-golang-protobuf-1-5-dev \
                protoc-gen-go protoc-gen-go-grpc protobuf-compiler

$(GO_BOT_BIN): $(GO_BOT_DIR)/main.go protocol/hollywood_gin.proto
	@missing=""; \
	for package in $(GO_BOT_DEBS); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "make go-bot: installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else \
	    echo "make go-bot: missing Debian packages:$$missing (as root: apt-get install$$missing)" >&2; exit 1; \
	  fi; \
	fi
	rm -rf $(GO_BOT_BUILD)/gopath && mkdir -p $(GO_BOT_BUILD)/gopath/src
	protoc -Iprotocol --go_out=$(GO_BOT_BUILD)/gopath/src --go-grpc_out=$(GO_BOT_BUILD)/gopath/src \
	  protocol/hollywood_gin.proto
	cd $(GO_BOT_DIR) && GO111MODULE=off GOFLAGS= CGO_ENABLED=0 \
	  GOPATH=/usr/share/gocode:$(CURDIR)/$(GO_BOT_BUILD)/gopath GOCACHE=$(CURDIR)/$(GO_BOT_BUILD)/cache \
	  go build -ldflags='-s -w' -o gin-go-bot .

go-bot: $(GO_BOT_BIN)

# The C++ sample bot: protoc and grpc_cpp_plugin generate the C++ code of the .proto into
# build/cpp-bot/, and g++ links ./gin-cpp-bot statically (gRPC without TLS, protobuf, abseil,
# c-ares, re2, zlib, glibc) from Debian's packages, offline: the binary needs no library in the
# sandbox. The generated code is compiled once (the slow part); editing main.cc rebuilds only
# main.o. glibc warns that getaddrinfo in a static binary needs its own libraries at run time:
# harmless, the bot dials the referee's unix socket, never a host name. As root this installs
# whichever of the packages is missing; otherwise a missing one fails loudly.
CPP_BOT_DIR   := sample_bots/cpp
CPP_BOT_BIN   := $(CPP_BOT_DIR)/gin-cpp-bot
CPP_BOT_BUILD := build/cpp-bot
CPP_BOT_DEBS  := g++ pkg-config libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
CPP_BOT_GEN   := $(CPP_BOT_BUILD)/hollywood_gin.pb.cc $(CPP_BOT_BUILD)/hollywood_gin.grpc.pb.cc
CPP_BOT_OBJS  := $(CPP_BOT_BUILD)/main.o $(CPP_BOT_GEN:.cc=.o)
CPP_BOT_FLAGS := -std=c++17 -O2 -I$(CPP_BOT_BUILD)

$(CPP_BOT_BUILD)/generated: protocol/hollywood_gin.proto
	@missing=""; \
	for package in $(CPP_BOT_DEBS); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "make cpp-bot: installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else \
	    echo "make cpp-bot: missing Debian packages:$$missing (as root: apt-get install$$missing)" >&2; exit 1; \
	  fi; \
	fi
	rm -rf $(CPP_BOT_BUILD) && mkdir -p $(CPP_BOT_BUILD)
	protoc -Iprotocol --cpp_out=$(CPP_BOT_BUILD) --grpc_out=$(CPP_BOT_BUILD) \
	  --plugin=protoc-gen-grpc=$$(command -v grpc_cpp_plugin) protocol/hollywood_gin.proto
	touch $@

$(CPP_BOT_GEN): $(CPP_BOT_BUILD)/generated

$(CPP_BOT_BUILD)/%.o: $(CPP_BOT_BUILD)/%.cc $(CPP_BOT_BUILD)/generated
	g++ $(CPP_BOT_FLAGS) -c $< -o $@

$(CPP_BOT_BUILD)/main.o: $(CPP_BOT_DIR)/main.cc $(CPP_BOT_BUILD)/generated
	g++ $(CPP_BOT_FLAGS) -Wall -Wextra -c $< -o $@

$(CPP_BOT_BIN): $(CPP_BOT_OBJS)
	g++ -static -s -o $@ $(CPP_BOT_OBJS) \
	  $$(pkg-config --static --libs grpc++_unsecure protobuf) -lupb -lcares -lre2 -laddress_sorting -lz

cpp-bot: $(CPP_BOT_BIN)

# System tools of the bot sandbox (referee/sandbox): bubblewrap and libseccomp. As root this installs
# whichever is missing; otherwise it only says that the sandbox tests will skip the root-only layers.
sandbox-deps:
	@if [ "$$(id -u)" = 0 ]; then \
	  missing=""; \
	  command -v bwrap >/dev/null 2>&1 || missing="$$missing bubblewrap"; \
	  ls /usr/lib/*/libseccomp.so.2 /lib/*/libseccomp.so.2 >/dev/null 2>&1 || missing="$$missing libseccomp2"; \
	  if [ -n "$$missing" ]; then \
	    echo "make sandbox-deps: installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  fi; \
	else \
	  echo "make sandbox-deps: not root: the sandbox tests will skip the layers that need root (per-bot users, cgroups)."; \
	  command -v bwrap >/dev/null 2>&1 || echo "make sandbox-deps: bubblewrap is missing: as root, apt-get install bubblewrap"; \
	fi

# The end of a recipe that put the Debian packages it lacks in $$missing: as root, install them;
# otherwise say what is missing and what it costs ($(1)).
define install_missing
if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
	  echo "make $@: installing$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing \
	    || echo "make $@: could not install$$missing: $(1)"; \
	else \
	  echo "make $@: not root and$$missing missing: $(1) (as root: apt-get install$$missing)"; \
	fi
endef

# Debian's Chromium, for the replay page's browser tests (tests/test_replay_html.py), and Debian's
# nginx, for the published tree's test (tests/test_arena_published.py). As root this installs
# them when missing; otherwise it only says that those tests will skip.
browser-deps:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing="$$missing nginx-light"; \
	$(call install_missing,their tests will skip)

demo: $(STAMP) node-bot sandbox-deps
	$(BIN)/gin league demo

test: $(STAMP) node-bot go-bot cpp-bot sandbox-deps browser-deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python -m pytest

# The fast inner loop: the same checks as `test` but without the tests marked slow (real leagues,
# bot processes over gRPC, the Dask cluster, the wheel install, the Go and Node bots, Chromium),
# so it needs neither node, go nor chromium. `make test`, the whole suite, is what CI runs.
check: $(STAMP) sandbox-deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(BENCH_STAMP) bench-deps
	$(BIN)/python -m benchmarks.rules_bench

# wrk and Debian's nginx, for the arena's page benchmarks (benchmarks/arena_bench.py --pages,
# benchmarks/arena_readers.py). As root this installs them when missing; otherwise it says so.
bench-deps:
	@missing=""; \
	command -v wrk >/dev/null 2>&1 || missing="$$missing wrk"; \
	command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing="$$missing nginx-light"; \
	$(call install_missing,the arena's page benchmarks need them)

# Regenerate the committed protobuf/gRPC code (pinned grpcio-tools and mypy-protobuf).
proto: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m protocol.codegen .

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis $(GO_BOT_BUILD) $(GO_BOT_BIN) \
	  $(CPP_BOT_BUILD) $(CPP_BOT_BIN)
