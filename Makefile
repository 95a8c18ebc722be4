# The two commands of the README. Both create .venv with the machine's python3 when needed,
# and both can be run again and again.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The demo writes a .env (DEBUG on, a random SECRET_KEY) once, so every manage.py command
# run by hand afterwards sees the same settings. Its webhooks go to the receiver the demo
# serves on this machine over plain http, which the two WEBHOOK_ settings allow (a .env
# written before they were is given them).
.env:
	$(PY) -c "import secrets; print('DEBUG=true'); print('SECRET_KEY=' + secrets.token_urlsafe(50))" > .env

demo: $(STAMP) .env
	grep -q '^WEBHOOK_ALLOW_HTTP=' .env || echo 'WEBHOOK_ALLOW_HTTP=true' >> .env
	grep -q '^WEBHOOK_ALLOW_HOSTS=' .env || echo 'WEBHOOK_ALLOW_HOSTS=127.0.0.1' >> .env
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo
	$(PY) manage.py rundemo 127.0.0.1:8000

# The floors of docs/architecture.md first (import-linter), then the suite.
test: $(STAMP)
	$(VENV)/bin/lint-imports --no-cache
	DEBUG=$${DEBUG:-true} $(PY) -m pytest $(ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache

clean:
	rm -rf $(VENV) db.sqlite3 .pytest_cache
