# fairtalk: `make demo` installs into .venv and runs the main job; `make test` runs the suite but its slow tests (`make
# test-slow` runs those; CI runs both); `make lint` runs ruff and mypy;
# `make docs` builds the documentation site into site/.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# torch is pinned to the local CPU build; an unpinned torch pulls gigabytes of CUDA.
TORCH := torch==2.13.0

.PHONY: demo test test-slow lint docs install install-dev chromium clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install -q $(TORCH)
	$(BIN)/pip install -q -e .

install-dev: $(BIN)/python
	$(BIN)/pip install -q $(TORCH)
	$(BIN)/pip install -q -e '.[dev]'

# The main job: a bare audit (built-in chitchat contexts, gender and race, builtin:minilm-retrieval).
demo: install
	$(BIN)/fairtalk audit

# Headless Chromium for the HTML-safety test; best effort, the test skips without it.
chromium:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && \
	  (apt-get update -qq >/dev/null 2>&1; apt-get install -y -qq chromium >/dev/null 2>&1) || true; }

# On every core (pytest-xdist); the tests that start Ray run on one worker, one at a time (tests/conftest.py).
# `make test` leaves out the tests listed in tests/slow_tests.txt (3 s or more each: the docs examples, end-to-end
# audits, Ray, Chromium, simulations); `make test-slow` runs just those. .ci/run runs both.
test: install-dev chromium
	$(BIN)/python -m pytest -n auto --dist loadgroup -m "not slow"

test-slow: install-dev chromium
	$(BIN)/python -m pytest -n auto --dist loadgroup -m slow

# Static checks, kept apart from the tests: ruff and mypy come with the dev extra (`make install-dev` or `make test` first).
lint:
	$(BIN)/python -m ruff check src tests bench
	$(BIN)/python -m ruff format --check src tests bench
	$(BIN)/python -m mypy

# The documentation site, offline, into site/ (mkdocs-material and mkdocstrings come with the dev extra). First a fresh
# audit of the built-in model is drawn into docs/img/report.png by headless Chromium (kept as it is without Chromium),
# then `mkdocs build --strict` fails on any warning: a broken link, a stale reference, a docstring mkdocstrings cannot read.
docs: install-dev
	$(BIN)/python tools/docs_screenshot.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info fairtalk-report fairtalk-pairs site
