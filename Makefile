.PHONY: help install fmt lint test check bench demo

VENV ?= .venv
BIN := $(VENV)/bin

help:  ## List the targets
	@grep -E '^[a-z]+:.*##' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "%-8s %s\n", $$1, $$2}'

install:  ## Create .venv and install both distributions with the dev tools
	python3 -m venv $(VENV) && $(BIN)/pip install -e ./instrumentation -e '.[dev]'

fmt:  ## Format the code
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

lint:  ## Formatting, lint, types and import rules
	$(BIN)/ruff format --check . && $(BIN)/ruff check . && $(BIN)/mypy && $(BIN)/lint-imports

test:  ## The test suite
	$(BIN)/python -m pytest

check: lint test  ## Everything CI checks

bench:  ## The benchmarks
	$(BIN)/python bench/run.py

demo:  ## The demo
	$(BIN)/faithmon demo
