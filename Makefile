# The two commands of the Quick start. Both create .venv and install into it on first use:
# `make demo` (and serve, bench) only what the package needs to run; `make test` adds the test
# extras (pytest, Playwright, schemathesis, psycopg for the PostgreSQL leg, …) on top.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.installed-runtime
TESTING := $(VENV)/.installed-test
CHROMIUM ?= /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test bench browser postgres serve clean

$(RUNTIME): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUNTIME)

# Made again whenever the runtime install is, so a changed pyproject.toml reaches both.
$(TESTING): $(RUNTIME)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(TESTING)

demo: $(RUNTIME)
	$(BIN)/persona-memory demo --config config.toml

# The browser tests drive Debian's Chromium; Playwright never downloads a browser of its own.
browser:
	@[ -x $(CHROMIUM) ] || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends \
	    chromium fonts-dejavu-core >/dev/null; }
	@[ -x $(CHROMIUM) ] || { echo "make browser: could not install Debian's chromium at $(CHROMIUM)"; exit 1; }

# The suite starts a throw-away PostgreSQL of its own (tests/pg_server.py) from Debian's server
# binaries; they are installed here when missing. Nothing is installed when
# PERSONA_MEMORY_TEST_POSTGRES_URL names a server to use instead.
PG_BINARIES := command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
postgres:
	@[ -n "$$PERSONA_MEMORY_TEST_POSTGRES_URL" ] || $(PG_BINARIES) || { $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends \
	    postgresql >/dev/null; }
	@[ -n "$$PERSONA_MEMORY_TEST_POSTGRES_URL" ] || $(PG_BINARIES) || \
	  { echo "make postgres: could not install Debian's postgresql (initdb not found)"; exit 1; }

test: $(TESTING) browser postgres
	$(BIN)/python -m pytest

bench: $(RUNTIME)
	$(BIN)/python bench/block_bench.py

serve: $(RUNTIME)
	$(BIN)/persona-memory serve --config config.toml

clean:
	rm -rf $(VENV) persona-memory.db persona-memory.db-wal persona-memory.db-shm
