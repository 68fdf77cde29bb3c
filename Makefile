# The README's commands. Each sets up what it needs first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

# The test commands' settings. They run through scripts/with_test_services.py: with
# TEST_DATABASE_URL / TEST_REDIS_URL empty (the default) it starts a PostgreSQL / Valkey of
# the command's own and stops it afterwards; a URL given is used as it is.
TEST_DATABASE_URL ?=
TEST_REDIS_URL ?=
TEST_ENV := DEBUG=0 DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) \
	SECRET_KEY=test-only-secret-key-0123456789abcdef0123456789 \
	API_KEY_SECRET=test-only-api-key-secret-0123456789abcdef0123 \
	EXPOSURE_HASH_SECRET=test-only-exposure-secret-0123456789abcdef \
	CACHE_KEY_PREFIX=phoneintel-test
WITH_TEST_SERVICES := $(TEST_ENV) $(PY) -m scripts.with_test_services

.PHONY: run test lint check bench instructions layers schemathesis chromium install clean typescript-client

$(INSTALLED): requirements.txt requirements-dev.txt clients/python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

install: $(INSTALLED)

# The TypeScript client's tools (openapi-typescript, tsc, Spectral), as its lock file pins
# them, with the machine's Node and npm. The package itself needs none of them at run time.
TS_CLIENT := clients/typescript
TS_TOOLS := $(TS_CLIENT)/node_modules/.package-lock.json
$(TS_TOOLS): $(TS_CLIENT)/package.json $(TS_CLIENT)/package-lock.json
	@# No package here needs an install script; one of Spectral's would report usage home.
	cd $(TS_CLIENT) && npm ci --ignore-scripts --no-audit --no-fund
	touch $@

# The browser tests drive Debian's Chromium: Playwright never downloads a browser.
CHROMIUM := /usr/bin/chromium
$(CHROMIUM):
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium \
	  || (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)

chromium: $(CHROMIUM)

.env:
	$(PYTHON) scripts/write_dev_env.py .env

# Log lines for a person at a terminal; `LOG_FORMAT=json make run` for what production writes.
# With no DATABASE_URL / REDIS_URL it starts PostgreSQL and Valkey of its own (scripts/run.py).
run: export LOG_FORMAT ?= plain
run: $(INSTALLED) .env
	$(PY) -m scripts.run

# pytest-xdist processes: 2 by default (conftest.py keeps their stores apart). `--dist load`
# (no work stealing) hands each one its tests in the suite's order, which pytest-django keeps
# as Django does: the tests rolled back before the transactional ones that flush the tables.
# `make test TEST_WORKERS=0` runs in one process, as `ARGS="-n 0"` does.
TEST_WORKERS ?= 2

test: $(INSTALLED) $(CHROMIUM) $(TS_TOOLS)
	$(WITH_TEST_SERVICES) --no-disk-waits sh -c '$(PY) manage.py collectstatic --noinput -v0 \
	  && exec $(PY) -m pytest -n $(TEST_WORKERS) --dist load "$$@"' pytest $(ARGS)

lint: $(INSTALLED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The last step: the document /v1/data/openapi.json serves, against Spectral's OpenAPI
# ruleset, with no warnings.
check: $(INSTALLED) lint $(TS_TOOLS)
	$(WITH_TEST_SERVICES) sh -ec ' \
	  $(PY) manage.py makemigrations --check --dry-run; \
	  $(PY) manage.py check --deploy --database default --fail-level ERROR; \
	  $(PY) manage.py spectacular --validate --fail-on-warn --file /dev/null; \
	  document=$$(mktemp --suffix=.json); trap "rm -f $$document" EXIT; \
	  $(PY) manage.py spectacular --format openapi-json --file $$document; \
	  $(TS_CLIENT)/node_modules/.bin/spectral lint --ruleset .spectral.yaml \
	    --fail-severity warn $$document'

# After a change to the contract: the TypeScript client's types from the OpenAPI document,
# and its build (dist/, committed so that `npm install ./clients/typescript` needs no tools).
typescript-client: $(INSTALLED) $(TS_TOOLS)
	$(WITH_TEST_SERVICES) sh -ec ' \
	  document=$$(mktemp --suffix=.json); trap "rm -f $$document" EXIT; \
	  $(PY) manage.py spectacular --format openapi-json --file $$document; \
	  $(TS_CLIENT)/node_modules/.bin/openapi-typescript $$document \
	    --output $(TS_CLIENT)/src/openapi.ts'
	rm -rf $(TS_CLIENT)/dist
	cd $(TS_CLIENT) && npm run --silent build

bench: $(INSTALLED)
	$(WITH_TEST_SERVICES) sh -ec '$(PY) -m bench.cpu; $(PY) -m bench.run; $(PY) -m bench.import_bench; $(PY) -m bench.bulk_job_bench'

# Instructions per request under valgrind: steady from run to run (bench/README.md).
instructions: $(INSTALLED)
	$(WITH_TEST_SERVICES) $(PY) -m bench.instructions

# A request's CPU layer by layer, in one process (bench/README.md).
layers: $(INSTALLED)
	$(WITH_TEST_SERVICES) $(PY) -m bench.layers

schemathesis: $(INSTALLED)
	$(WITH_TEST_SERVICES) $(PY) -m scripts.run_schemathesis

clean:
	rm -rf $(VENV) staticfiles .dev-services $(TS_CLIENT)/node_modules
