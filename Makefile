# Every target creates the virtual environment first when it is missing or older than
# pyproject.toml. GNU make exits 2 when a recipe fails; the recipe's own status (pytest's
# exit code, for instance) is shown in make's "Error N" line.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
LOCOMO := ../shared/data/locomo
LONGMEMEVAL := ../shared/data/longmemeval
MEMDAILY := ../shared/data/memdaily

.PHONY: run test eval-smoke bench

$(VENV): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -e '.[dev]'
	touch $(VENV)

# The console runs as make's direct child (no shell in between) and exits 0 on Ctrl-C / Ctrl-D
# (= /quit), so make has no failure to report; at the prompt Ctrl-C is a key press, not a signal.
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
	@if [ -f $(LONGMEMEVAL)/longmemeval_oracle_shared.json ]; then \
		$(BIN)/memory-bot eval longmemeval $(LONGMEMEVAL)/longmemeval_oracle_shared.json --limit 3 \
			--out eval-smoke-longmemeval.json; \
	else \
		echo "eval-smoke: skipped, $(LONGMEMEVAL) is absent"; \
	fi
	@if [ -f $(MEMDAILY)/01_simple_items.json ]; then \
		$(BIN)/memory-bot eval memdaily $(MEMDAILY)/01_simple_items.json --out eval-smoke-memdaily.json; \
	else \
		echo "eval-smoke: skipped, $(MEMDAILY) is absent"; \
	fi

# Performance benchmark (docs/benchmarks.md): about 15 minutes on 2 cores, plus the PostgreSQL
# column's copies of the seeded stores; ARGS="--quick" for the short version. The report goes to bench.json, the table to standard output. Start-up and
# throughput are also measured for BENCH_AGAINST (a git revision; empty: not), in the same run.
BENCH_AGAINST ?= 9514400
bench: $(VENV)
	$(BIN)/memory-bot bench --out bench.json $(if $(BENCH_AGAINST),--against $(BENCH_AGAINST)) $(ARGS)
