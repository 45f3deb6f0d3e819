# Two commands do all set-up on a fresh machine:  `make demo`  and  `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint install bench docs clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first, pinned: a CPU build from a local file; an open range would fetch a multi-GB CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/extract_person.py

test: $(STAMP)
	$(BIN)/python -m pytest -x -p no:cacheprovider -n 2

# The Python tree only: ruff would also format the code blocks of the Markdown pages.
LINTED := fsm guide tests benchmarks examples

lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)

bench: $(STAMP)
	$(BIN)/pip install -q -e '.[bench]' || true
	$(BIN)/python benchmarks/bench_fsm.py

docs: $(STAMP)
	$(BIN)/pip install -q -e '.[docs]'
	$(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) build *.egg-info
