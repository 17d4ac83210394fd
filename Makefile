.PHONY: help install fmt lint test test-all check bench demo

VENV ?= .venv
BIN := $(VENV)/bin

help:  ## List the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "%-9s %s\n", $$1, $$2}'

install:  ## Create .venv and install both distributions with the dev tools
	python3 -m venv $(VENV) && $(BIN)/pip install -e ./instrumentation -e '.[dev]'

fmt:  ## Format the code
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

lint:  ## Formatting, lint, types and import rules
	$(BIN)/ruff format --check . && $(BIN)/ruff check . && $(BIN)/mypy && $(BIN)/lint-imports

test:  ## The test suite (the default tier, as the README runs it)
	$(BIN)/python -m pytest

test-all:  ## Every tier CI runs: default, second backend, quality, scale
	$(BIN)/python -m pytest && $(BIN)/python -m pytest -m second_backend \
	  && $(BIN)/python -m pytest -m quality && $(BIN)/python -m pytest -m scale

check: lint test  ## Everything CI checks

bench:  ## The benchmarks
	$(BIN)/python bench/run.py

demo:  ## The demo
	$(BIN)/faithmon demo
