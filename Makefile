# metric-catalog: every target bootstraps .venv itself, so a fresh clone needs
# only `make generate` and `make test`. `make help` lists the targets.
# Targets whose output is meant to be piped (resolve, diff, live-check, check)
# do not echo their commands, and the bootstrap writes to stderr, so
# `make resolve > catalog.json` is valid JSON.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help setup generate check diff live-check resolve dashboards lint fmt test bench bench-smoke docs demo clean

help: ## List the targets and what they do.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@echo "make: creating $(VENV) with the dev and otel extras (first run only)" >&2
	@$(PYTHON) -m venv $(VENV) >&2
	@$(PY) -m pip install --quiet --upgrade pip >&2
	@$(PY) -m pip install --quiet -e '.[dev,otel]' >&2
	@touch $(STAMP)

setup: $(STAMP) ## Create .venv and install the package with its dev and otel extras.

generate: $(STAMP) ## Render catalog/*.yaml into generated modules, docs pages and dashboards, and the diagnostics and CLI reference pages.
	$(PY) -m codegen generate
	$(PY) -m codegen.codes --write
	$(PY) -m codegen.cli_reference --write

check: $(STAMP) ## Validate and lint the catalog, prove generated files are current, diff against a baseline.
	@$(PY) -m codegen lint
	@$(PY) -m codegen check --hide-warnings
	@if [ -n "$(CATALOG_BASELINE)" ]; then $(PY) -m codegen diff --hide-warnings --against "$(CATALOG_BASELINE)"; fi

diff: $(STAMP) ## Breaking-change report against AGAINST=<git ref or dir> (default: HEAD); FORMAT=json.
	@$(PY) -m codegen diff --against "$(or $(AGAINST),HEAD)" $(if $(FORMAT),--format $(FORMAT))

live-check: $(STAMP) ## Compare a run's JSONL log (RUN=path or quoted glob) with the catalog; FAIL_ON=undeclared,... to gate; LOOP=grpo_sync overrides the logged loop; FORMAT=json.
	@test -n "$(RUN)" || { echo "usage: make live-check RUN=run.jsonl [FAIL_ON=undeclared,missing] [LOOP=grpo_sync] [FORMAT=json]" >&2; exit 2; }
	@$(PY) -m codegen live-check "$(RUN)" $(if $(FAIL_ON),--fail-on $(FAIL_ON)) $(if $(LOOP),--loop $(LOOP)) $(if $(FORMAT),--format $(FORMAT))

resolve: $(STAMP) ## Print the resolved catalog as JSON (keys, constants, Prometheus names, sources).
	@$(PY) -m codegen resolve --format json

dashboards: $(STAMP) ## Write the Grafana dashboards only (make generate writes them too).
	$(PY) -m codegen dashboards

lint: $(STAMP) ## ruff check, ruff format --check, mypy --strict and the import contract (lint-imports).
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy src codegen examples bench
	$(VENV)/bin/lint-imports

fmt: $(STAMP) ## Apply ruff's fixes and formatting.
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

test: $(STAMP) ## Run the whole test suite (integration tests need prometheus and chromium; .ci/run installs them).
	$(PY) -m pytest

bench: $(STAMP) ## Run the benchmarks and rewrite bench/RESULTS.md (minutes; not part of test).
	$(PY) -m bench

bench-smoke: $(STAMP) ## Run each benchmark for about a second, without timing claims.
	$(PY) -m bench --smoke

docs: $(STAMP) ## Build the HTML docs site into docs/_build/html, warnings as errors.
	$(VENV)/bin/sphinx-build -W --keep-going -b html docs docs/_build/html

demo: $(STAMP) ## Simulated GRPO run teed to Prometheus on 127.0.0.1:9464; SERVE=1 keeps serving until Ctrl-C.
	$(PY) -m examples.demo $(if $(SERVE),--serve)

clean: ## Remove build output (keeps .venv).
	rm -rf docs/_build test-artifacts bench/out .mypy_cache .ruff_cache .pytest_cache
