# energy-index: every target sets up .venv itself from pyproject.toml (pinned by constraints.txt).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The vendored snapshot by default (offline, the committed bytes); FROM=live builds from the
# live upstream, FROM=<snapshot dir> from another snapshot.
SNAPSHOT := snapshots/ml-energy-leaderboard
FROM ?= $(SNAPSHOT)
OUT ?= output/index.json
PUBLISHED ?= $(OUT)

.PHONY: help setup index regenerate refresh-carbon test test-quick fuzz audit check docs bench report site clean mutate

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "} {printf "  make %-15s %s\n", $$1, $$2}'

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@

setup: $(VENV)/.installed ## Create .venv with the pipeline and its test tools

index: $(VENV)/.installed ## Build output/index.json from the vendored snapshot, offline (FROM=live: the live upstream)
	$(BIN)/energy-index build --from $(FROM) --out $(OUT)

regenerate: $(VENV)/.installed ## Fetch the live upstream; on change replace the vendored snapshot, rebuild, changelog
	$(BIN)/energy-index regenerate --out $(OUT) --vendored $(SNAPSHOT)

refresh-carbon: $(VENV)/.installed ## Fetch CodeCarbon's grid intensities; on change replace snapshots/codecarbon-energy-mix, changelog
	$(BIN)/energy-index refresh-carbon --changelog-dir $(dir $(OUT))

# The browser tests' Debian packages are installed first where this can (root with apt-get);
# elsewhere the tests that need them skip, naming the package.
test: $(VENV)/.installed ## Run the whole test suite, browser tests too (what CI runs; about 9 minutes)
	bash scripts/browser_packages.sh || true
	$(BIN)/python -m pytest -q

test-quick: $(VENV)/.installed ## Run the tests that drive no browser (-m "not slow"): the edit loop (about 3½ minutes)
	$(BIN)/python -m pytest -q -m "not slow"

# The readers of outside JSON fuzzed longer than make test does (100 inputs each there), and the
# 100 MB per-model file; prints how many inputs each reader was given. FUZZ_EXAMPLES=N to change.
FUZZ_EXAMPLES ?= 5000
fuzz: $(VENV)/.installed ## Fuzz every reader of outside JSON (hypothesis, 5000 inputs each)
	ENERGY_INDEX_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest -q -s -p no:cacheprovider \
		tests/test_fuzz.py tests/test_hostile_model_files.py

# What is mutated and which tests run: [tool.mutmut] in pyproject.toml (only_mutate, one list);
# scripts/mutate.py runs mutmut with pipeline/ as the source root.
mutate: $(VENV)/.installed ## Mutation testing of the pure steps (mutmut), from scratch; prints the score
	rm -rf mutants
	$(BIN)/python scripts/mutate.py run
	$(BIN)/python scripts/mutation_score.py

audit: $(VENV)/.installed ## Compare a published index (PUBLISHED=path, default output/index.json) with a rebuild
	$(BIN)/energy-index audit --published $(PUBLISHED) --from $(FROM)

check: $(VENV)/.installed ## Lint and type-check (ruff, mypy); audit the workflows (zizmor, offline)
	$(BIN)/ruff check pipeline tests bench scripts
	$(BIN)/ruff format --check pipeline tests bench scripts
	$(BIN)/mypy
	$(BIN)/zizmor --offline --min-severity medium .github/workflows

docs: $(VENV)/.installed ## Regenerate docs/cli.md (from --help), the index row's schema part, the sweeps' rows by field and docs/design.md's field table (from steps/row_fields.py)
	$(BIN)/python scripts/cli_reference.py
	$(BIN)/python scripts/row_reference.py

# The page documents the index at OUT (its build report beside it), from the snapshot FROM.
REPORT ?= $(dir $(OUT))report.html
PNG ?= docs/report.png
SITE ?= site
report: $(VENV)/.installed ## Write report.html beside the index OUT (from FROM) and its charts as docs/report.png
	$(BIN)/energy-index report --index $(OUT) --from $(FROM) --out $(REPORT) --png $(PNG)

site: $(VENV)/.installed ## Write site/ (SITE=): every task's report and the JSON API of the index OUT, from FROM
	$(BIN)/energy-index site --index $(OUT) --from $(FROM) --out $(SITE)

SIZES ?= 1000,10000,100000,1000000
# The pipeline is timed as a user installs it, with no dev or bench extras: pandera imports
# pandas and hypothesis whenever they are installed, which would add a second to its start.
# And from its wheel, reinstalled at every run: pip compiles the bytecode at install, as for a
# user, where an editable install under PYTHONDONTWRITEBYTECODE=1 compiled the package's ~35
# modules from source in every timed process (about 0.1 s of cpu, a fifth of a real-file build).
BENCH_VENV := bench/.venv
BENCH_WHEELS := bench/.data/wheel
$(BENCH_VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet -c constraints.txt .
	touch $@

bench: $(VENV)/.installed $(BENCH_VENV)/.installed ## Time the pipeline against its peers (SIZES=…, empty: real file only), the report page and the site by size; writes docs/benchmarks.md, docs/report-benchmarks.md
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,bench]'
	rm -rf $(BENCH_WHEELS)
	$(BIN)/python -m pip wheel --quiet --no-deps --no-build-isolation --wheel-dir $(BENCH_WHEELS) .
	$(BENCH_VENV)/bin/python -m pip install --quiet --no-deps --force-reinstall $(BENCH_WHEELS)/*.whl
	cd bench && ../$(BIN)/python run.py --sizes=$(SIZES) --pipeline-python .venv/bin/python \
		--out ../docs/benchmarks.md
	cd bench && .venv/bin/python report.py --out ../docs/report-benchmarks.md

clean: ## Remove the virtualenv and caches (output/ is committed and stays)
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
