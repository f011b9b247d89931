# energy-index: every target sets up .venv itself from pyproject.toml (pinned by constraints.txt).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SHARED := ../shared
# The live upstream by default; FROM=<snapshot dir> builds offline, e.g.
# FROM=../shared/upstream/ml-energy-leaderboard
FROM ?= https://github.com/ml-energy/leaderboard
OUT ?= output/index.json
PUBLISHED ?= $(OUT)
TASKS := lm-arena-chat gpqa sourcegraph-fim image-chat video-chat text-to-image text-to-video

.PHONY: help setup index regenerate test audit check bench report clean shared

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "} {printf "  make %-8s %s\n", $$1, $$2}'

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@

setup: $(VENV)/.installed ## Create .venv with the pipeline and its test tools

index: $(VENV)/.installed ## Build output/index.json from the live upstream (FROM=snapshot dir to build offline)
	$(BIN)/energy-index build --from $(FROM) --out $(OUT)

regenerate: $(VENV)/.installed ## Fetch, rebuild, and rewrite output/index.json only if upstream data changed
	$(BIN)/energy-index regenerate --from $(FROM) --out $(OUT)

test: $(VENV)/.installed ## Run the test suite
	$(BIN)/python -m pytest -q

audit: $(VENV)/.installed ## Compare a published index (PUBLISHED=path, default output/index.json) with a rebuild
	$(BIN)/energy-index audit --published $(PUBLISHED) --from $(FROM)

check: $(VENV)/.installed ## Lint and type-check (ruff, mypy)
	$(BIN)/ruff check pipeline tests bench scripts
	$(BIN)/ruff format --check pipeline tests bench scripts
	$(BIN)/mypy

SNAPSHOT ?= $(SHARED)/upstream/ml-energy-leaderboard
report: $(VENV)/.installed ## Write output/report.html from the shared snapshot, and its screenshot docs/report.png
	$(BIN)/energy-index report --from $(SNAPSHOT) --out output/report.html
	$(BIN)/python scripts/screenshot.py output/report.html docs/report.png

SIZES ?= 1000,10000,100000,1000000
bench: $(VENV)/.installed ## Time pipeline vs plain-Python reference (SIZES=…); writes docs/benchmarks.md
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,bench]'
	cd bench && ../$(BIN)/python run.py --sizes $(SIZES) --out ../docs/benchmarks.md

shared: $(VENV)/.installed ## Recreate ../shared where it is missing (a snapshot of upstream master, the published copy)
	ls $(SHARED)/upstream/ml-energy-leaderboard/*/snapshot.json >/dev/null 2>&1 || \
	  $(BIN)/energy-index fetch $(addprefix --task ,$(TASKS)) --to $(SHARED)/upstream/ml-energy-leaderboard/master
	test -f $(SHARED)/published/index.json || \
	  { mkdir -p $(SHARED)/published && cp output/index.json $(SHARED)/published/index.json; }

clean: ## Remove the virtualenv and caches (output/ is committed and stays)
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
