# energy-index: every target sets up .venv itself from pyproject.toml (pinned by constraints.txt).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SHARED := ../shared
FROM ?= $(SHARED)/upstream/ml-energy-leaderboard
OUT ?= output/index.json
PUBLISHED ?= $(OUT)

.PHONY: help index test audit check clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "} {printf "  make %-8s %s\n", $$1, $$2}'

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@

index: $(VENV)/.installed ## Build output/index.json (FROM=snapshot dir, OUT=path)
	$(BIN)/energy-index build --from $(FROM) --out $(OUT)

test: $(VENV)/.installed ## Run the test suite
	$(BIN)/python -m pytest -q

audit: $(VENV)/.installed ## Compare a published index (PUBLISHED=path, default output/index.json) with a rebuild
	$(BIN)/energy-index audit --published $(PUBLISHED) --from $(FROM)

check: $(VENV)/.installed ## Lint and type-check (ruff, mypy)
	$(BIN)/ruff check pipeline tests
	$(BIN)/ruff format --check pipeline tests
	$(BIN)/mypy

clean: ## Remove the virtualenv and caches (output/ is committed and stays)
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
