"""A managed vLLM server: a base with runtime LoRA on 127.0.0.1, started, waited for, and stopped with its children.

The server runs in a process group of its own, so stopping it stops its engine and workers too; it is told to exit
when its parent dies (PR_SET_PDEATHSIG, set before vLLM is exec'd), and `start` registers `stop` for the
interpreter's exit. Ready means /v1/models answers and one token is drawn (some failures only show at the first
request: vLLM's CPU attention refuses heads under 32 dimensions then). What starting it takes: vllm_launch.py.

    with ManagedServer(base="smollm2") as server:
        server.load_adapter("sft", "runs/sft")          # its manifest must name the base (checked before sending)
        ...  requests to server.url naming "smollm2" or "sft", through aoi.models.vllm_client ...
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from aoi.models.bases import load_base
from aoi.models.local import check_adapter
from aoi.models.vllm_client import Server, ServerError
from aoi.models.vllm_launch import (
    LAUNCH,
    ServerSpec,
    VllmError,
    find_python,
    free_port,
    model_folder,
    served_name,
    start_error,
)

__all__ = ["ManagedServer", "ServerSpec", "VllmError", "load_adapter", "merge_adapter", "unload_adapter"]


class ManagedServer:
    """One vLLM server this process owns: `start()` (or `with`), `url`, `load_adapter`, `unload_adapter`, `stop()`."""

    def __init__(self, spec: ServerSpec | None = None, **fields: Any):
        self.spec = spec or ServerSpec(**fields)
        self.name = self.spec.name or served_name(self.spec.base)  # the base's model name on the server
        self.process: subprocess.Popen | None = None
        self.url, self.log, self.server = "", Path(), None

    def start(self) -> ManagedServer:
        """Start vLLM and wait until it draws a token; raise VllmError (cause and log path) if it cannot."""
        python, folder = self.spec.python or find_python(), model_folder(self.spec.base)
        port = free_port(self.spec.port)
        self.log = Path(self.spec.log or tempfile.mkstemp(prefix="aoi-vllm-", suffix=".log")[1])
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen([python, "-c", LAUNCH, str(os.getpid()), *self.spec.argv(folder, port)],
                                            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                            env=self.spec.environ(), start_new_session=True)
        atexit.register(self.stop)
        self.url = f"http://127.0.0.1:{port}/v1"
        self.server = Server(self.url, flag="the managed server's URL")
        try:
            self._wait()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait(self) -> None:
        """Wait until /v1/models answers, then draw one token; raise what the log says if the server dies first."""
        deadline = time.monotonic() + self.spec.startup_s
        while not self._answers():
            if self.process.poll() is not None:
                raise start_error(self.log, self.process.returncode)
            if time.monotonic() > deadline:
                raise VllmError(f"vLLM did not answer within {self.spec.startup_s:.0f} s; see its log {self.log}")
            time.sleep(0.5)
        try:
            self.server.request("POST", "/v1/completions", {"model": self.name, "prompt": "ok", "max_tokens": 1})
        except ServerError as err:  # the engine died at its first request: the server exits; say why
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                pass
            raise start_error(self.log, self.process.returncode) from err

    def _answers(self) -> bool:
        """Tell whether /v1/models answers yet."""
        import httpx

        try:
            return httpx.get(f"{self.url}/models", timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    def load_adapter(self, name: str, folder: str | Path) -> dict:
        """Load a LoRA adapter under `name` (its manifest must name our base); return its manifest."""
        return load_adapter(self.server, self.spec.base, name, folder, max_rank=self.spec.max_lora_rank)

    def unload_adapter(self, name: str) -> None:
        """Unload an adapter; it is no longer listed in /v1/models."""
        unload_adapter(self.server, name)

    def pids(self) -> list[int]:
        """Return the ids of the server's processes still alive (its whole process group)."""
        if self.process is None:
            return []
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if os.getpgid(int(entry.name)) == self.process.pid:
                        found.append(int(entry.name))
                except OSError:
                    pass
        return found

    def stop(self, grace: float = 30.0) -> None:
        """Stop the server and every process of its group: SIGTERM, then SIGKILL after `grace` seconds."""
        if self.process is None:
            return
        atexit.unregister(self.stop)
        _signal_group(self.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while self.pids() and time.monotonic() < deadline:
            self.process.poll()  # reap the leader so it stops counting
            time.sleep(0.2)
        _signal_group(self.process.pid, signal.SIGKILL)
        self.process.wait()
        if self.server is not None:
            self.server.close()

    def __enter__(self) -> ManagedServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _signal_group(group: int, sig: int) -> None:
    """Send a signal to a process group that may be gone already."""
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        pass


def merge_adapter(base: str, adapter: str | Path, out: str | Path, dtype: str = "bfloat16") -> Path:
    """Write the base with a LoRA adapter merged into its weights (W + BA, computed in fp32, saved in `dtype`) and
    the base's tokenizer into `out`: a model folder a server loads as a plain model. Return `out`.

    A runtime LoRA costs vLLM's CPU engine 1.9x the base's time per request, a merged one none (benchmarks/
    vllm_lora.py); an evaluation's adapter never changes, so it is served merged (aoi.models.registry)."""
    import torch
    from peft import PeftModel

    check_adapter(Path(adapter), base)
    model, tokenizer = load_base(base)
    merged = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
    merged.to(getattr(torch, dtype)).save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    return Path(out)


def load_adapter(server: Server, base: str, name: str, folder: str | Path, *, max_rank: int | None = None) -> dict:
    """Load a PEFT adapter folder into a server as `name`, after checking that its manifest names `base` and that
    its rank fits; a name loaded already is left as it is. Return the manifest ({} without one)."""
    folder = Path(folder).resolve()
    manifest = check_adapter(folder, base)
    rank = json.loads((folder / "adapter_config.json").read_text()).get("r", 0)
    if max_rank is not None and rank > max_rank:
        raise VllmError(f"adapter {folder} has rank {rank}, above the server's --max-lora-rank {max_rank}; start "
                        f"it with a larger max_lora_rank (aoi serve-model --max-lora-rank {rank})")
    try:
        server.request("POST", "/v1/load_lora_adapter", {"lora_name": name, "lora_path": str(folder)})
    except ServerError as err:
        if "already" not in str(err):  # another worker of the same run loaded it first
            raise
    return manifest


def unload_adapter(server: Server, name: str) -> None:
    """Unload the adapter `name` from a server."""
    server.request("POST", "/v1/unload_lora_adapter", {"lora_name": name})
