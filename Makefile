# `make check`: set up, then check every expectation file.
# `make test`: set up, then lint, type-check, build the docs, check the static claims and run the tests.
# `make test-quick`: set up, then run the tests that are neither slow nor need a GPU.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Where nothing can be measured, make check judges this recording instead (and says so).
RECORDING ?= recordings/h200

.PHONY: setup check test test-quick lint docs format gpu-suite clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

check: setup
	@$(BIN)/ncuverify check expectations/; status=$$?; \
	if [ $$status -eq 3 ]; then \
		echo "make check: nothing can be profiled here (reason above):"; \
		echo "  judging the recording in $(RECORDING)"; \
		$(BIN)/ncuverify check expectations/ --from-profile $(RECORDING); status=$$?; \
	fi; exit $$status

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The documentation, built strictly into a folder thrown away after: a broken link or anchor, or a page
# missing from the nav in mkdocs.yml, fails the build. Not --quiet: it hides the warnings strict counts.
docs: setup
	site=$$(mktemp -d -t ncuverify-docs-XXXXXX) && trap 'rm -rf "$$site"' EXIT && \
	$(BIN)/mkdocs build --strict --site-dir "$$site"

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The claims on static facts need no GPU, so every test run checks them for real, while the lint and
# the docs build run beside them (their output shown after theirs). The check and the tests share one
# fresh compile cache, so that the tests find the expectation files' kernels compiled; the tests run in
# one process per core (pytest-xdist).
test: setup
	work=$$(mktemp -d -t ncuverify-make-test-XXXXXX) && trap 'rm -rf "$$work"' EXIT && \
	export NCUVERIFY_CACHE_DIR="$$work/cache" && \
	{ $(MAKE) --no-print-directory lint docs >"$$work/lint.log" 2>&1 & } && lint=$$! && \
	{ $(BIN)/ncuverify check --static-only expectations/; checked=$$?; } && \
	{ wait $$lint; linted=$$?; } && cat "$$work/lint.log" && \
	[ $$linted -eq 0 ] && [ $$checked -eq 0 ] && \
	$(BIN)/python -m pytest -n auto

# The tests marked neither slow (over about 2 s) nor gpu, for a quick look while working.
test-quick: setup
	$(BIN)/python -m pytest -n auto -m "not slow and not gpu"

# Needs an NVIDIA GPU and Nsight Compute: the GPU tests and every expectation file, logs in gpu-logs/.
gpu-suite: setup
	PYTHON=$(BIN)/python scripts/gpu-suite.sh gpu-logs

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache gpu-logs *.egg-info
