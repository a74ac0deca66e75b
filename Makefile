# Two commands on a fresh machine: `make run` and `make test`. Everything they need is
# installed into .venv from here.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv lock browser run test test-unit test-integration test-e2e lint typecheck protos check-protos wheel-check bench clean

$(STAMP): pyproject.toml setup.py constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@# The versions the benchmarks and CI were measured with (constraints.txt, `make lock`).
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]'
	@# The int8 embedding network, derived once from the shipped weights (a few seconds).
	$(PY) -m mithril.services.embedding.network
	@touch $(STAMP)

venv: $(STAMP)

# Re-resolve every dependency from pyproject.toml alone, in a scratch venv, and pin what it
# installed into constraints.txt (a few minutes); `make venv` then installs exactly that.
LOCK_VENV := .lock-venv
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LOCK_VENV)/bin/python -m pip install --quiet -e '.[dev]'
	$(LOCK_VENV)/bin/python scripts/lock.py $(LOCK_VENV)/bin/python
	rm -rf $(LOCK_VENV)

# The dashboard's browser test drives Debian's chromium (never a downloaded browser).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
		else echo "chromium missing: sudo apt-get install chromium (the browser test will skip)"; fi; }

run: venv
	$(VENV)/bin/mithril up

test: venv browser check-protos lint typecheck
	$(PY) -m pytest -q

test-unit: venv
	$(PY) -m pytest -q tests/unit

test-integration: venv
	$(PY) -m pytest -q tests/integration

test-e2e: venv
	$(PY) -m pytest -q tests/e2e

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: venv
	$(VENV)/bin/mypy mithril services gateway benchmark

protos: venv
	$(VENV)/bin/buf lint
	$(PY) scripts/gen_protos.py

check-protos: venv
	$(VENV)/bin/buf lint
	$(PY) scripts/gen_protos.py --check

bench: venv
	$(VENV)/bin/mithril bench detection
	$(VENV)/bin/mithril bench latency

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .mypy_cache
