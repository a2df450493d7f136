# Every target creates the virtual environment first when it is missing or older than
# pyproject.toml. GNU make exits 2 when a recipe fails; the recipe's own status (pytest's
# exit code, for instance) is shown in make's "Error N" line.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
LOCOMO := ../shared/data/locomo

.PHONY: run test eval-smoke bench

$(VENV): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -e '.[dev]'
	touch $(VENV)

run: $(VENV)
	@$(BIN)/memory-bot console $(ARGS)

test: $(VENV)
	$(BIN)/lint-imports
	$(BIN)/python -m pytest

eval-smoke: $(VENV)
	@if [ -d $(LOCOMO) ]; then \
		$(BIN)/memory-bot eval locomo $(LOCOMO)/30.json --limit 40 --out eval-smoke.json; \
	else \
		echo "eval-smoke: skipped, $(LOCOMO) is absent"; \
	fi

bench:
	@echo "bench: not implemented yet, see issue 11"
