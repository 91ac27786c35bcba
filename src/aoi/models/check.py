"""`check_model`: whether a model spec can be used, told before any episode runs, without a completion or a download.

`aoi run` and `aoi eval` call it once at start (through aoi.agents.runtime.check_models), so a missing key, a spec
of no known form, a local base or adapter that is not there, or a server on this machine that is not listening
ends the command with one line instead of failing every episode. What it cannot know without asking the model (a
key the provider refuses, a model name a server does not serve) still shows in the episodes. Servers on other
machines are not contacted: a check never leaves this machine.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import socket
from pathlib import Path
from urllib.parse import urlsplit

from aoi.models.base import ModelError
from aoi.models.registry import load_model, local_parts

CONNECT_SECONDS = 2.0  # a server on this machine that listens answers a connect at once


def check_model(spec: str, **options) -> None:
    """Raise ModelError (or ValueError for a malformed spec) when the model `spec` names cannot be used.

    API models are built (their name and key are checked; no request is sent) and a server on this machine is
    connected to; local models have their base, adapter and libraries checked without loading any weights.

    Example:
        >>> check_model("expert")
        >>> check_model("vllm:m@http://127.0.0.1:9")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        aoi.models.base.ModelError: no model server answers at http://127.0.0.1:9/v1 ...
    """
    kind, _, rest = spec.partition(":")
    if kind == "local" and rest:
        _check_local(rest)
        return
    model = load_model(spec, **options)
    url = getattr(model, "base_url", None)
    if isinstance(url, str):
        listening(url)


def _check_local(rest: str) -> None:
    """Check a local spec: its parts, then the server it names, or its base, adapter and libraries."""
    base, parts = local_parts(rest)
    if "server" in parts:
        listening(parts["server"], fix="start it (`aoi serve-model`) or fix +server= in the spec")
        return
    from aoi.models.bases import check_base
    from aoi.models.local import check_adapter

    check_base(base)
    if parts.get("engine") != "vllm":
        for module in ("torch", "transformers"):
            if importlib.util.find_spec(module) is None:
                raise ModelError(f"local:{rest} needs `{module}`, which is not installed; install the extra: "
                                 "`pip install torch==2.13.0` then `pip install -e '.[local]'`")
    if "adapter" in parts:
        check_adapter(Path(parts["adapter"]), base)


def listening(url: str, fix: str = "start it (e.g. `ollama serve`, vLLM, llama.cpp) or point the spec or "
              "model.base_url at a running one") -> None:
    """Raise ModelError when nothing listens at a URL on this machine; a URL elsewhere is not contacted.

    Example:
        >>> listening("https://api.openai.com/v1")  # not on this machine: not checked
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not _on_this_machine(host):
        return
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((host, port), timeout=CONNECT_SECONDS).close()
    except OSError as exc:
        raise ModelError(f"no model server answers at {url} ({exc.strerror or type(exc).__name__}); {fix}") from None


def _on_this_machine(host: str) -> bool:
    """Return whether a host name or address is this machine (localhost, loopback, 0.0.0.0).

    Example:
        >>> [_on_this_machine(h) for h in ("localhost", "127.0.0.2", "::1", "0.0.0.0", "10.0.0.5", "gpu")]
        [True, True, True, True, False, False]
    """
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified
