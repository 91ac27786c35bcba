"""The policy behind aoi.echo.serve's loopback server: vLLM's completion fields on the local transformers policy.

`PolicyServer.route(method, path, body)` answers `/v1/models`, `/v1/completions` (generation as aoi.models.local
samples, `n` seeded as vLLM seeds it, JSON-schema constraint, `prompt_logprobs`) and the runtime LoRA routes;
aoi.echo.serve puts it on HTTP.
Adapters are kept as state dicts and swapped into the one PEFT model per request, under a lock.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from aoi.echo.weights import CONFIG, WEIGHTS
from aoi.models.local import LocalModel, token_logprobs
from aoi.train.common import Lora

PLAIN = {"top_p": (1, 1.0), "top_k": (-1, 0), "min_p": (0, 0.0), "repetition_penalty": (1, 1.0),
         "presence_penalty": (0, 0.0), "frequency_penalty": (0, 0.0)}  # sampling settings that change nothing


class RequestError(Exception):
    """A request the server refuses: an HTTP status and a message (vLLM's error body)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class PolicyServer:
    """The routes over one policy (base + LoRA); adapters are kept as state dicts and swapped in per request."""

    def __init__(self, base: str = "tiny", *, device: str = "cpu", seed: int = 0, lora: Lora | None = None,
                 name: str | None = None, runtime_lora: bool = True):
        from aoi.echo.policy import load_policy

        self.model, self.tokenizer = load_policy(base, lora=lora, device=device, seed=seed)
        self.name, self.runtime_lora = name or base, runtime_lora
        self.adapters: dict[str, dict] = {}  # name -> LoRA state dict
        self.active: str | None = None  # the adapter whose weights are in the model now
        self.lock = threading.Lock()  # one generation at a time: the weights are swapped per request

    def route(self, method: str, path: str, body: dict) -> tuple[int, Any]:
        """Answer one request: (status, JSON body or text)."""
        routes = {("GET", "/v1/models"): self.models, ("POST", "/v1/completions"): self.completions}
        if self.runtime_lora:  # vLLM registers these only under VLLM_ALLOW_RUNTIME_LORA_UPDATING
            routes |= {("POST", "/v1/load_lora_adapter"): self.load, ("POST", "/v1/unload_lora_adapter"): self.unload}
        handler = routes.get((method, path.split("?")[0].rstrip("/")))
        if handler is None:
            return 404, {"detail": "Not Found"}
        try:
            with self.lock:
                return 200, handler(body)
        except RequestError as err:
            return err.status, {"error": {"message": str(err), "type": "BadRequestError", "code": err.status}}

    def models(self, body: dict) -> dict:
        """List the base and the loaded adapters."""
        entries = [{"id": self.name, "object": "model", "owned_by": "aoi"}]
        entries += [{"id": name, "object": "model", "owned_by": "aoi", "parent": self.name} for name in self.adapters]
        return {"object": "list", "data": entries}

    def load(self, body: dict) -> str:
        """Load a PEFT adapter folder under a name."""
        from safetensors.torch import load_file

        name, folder = body.get("lora_name"), Path(str(body.get("lora_path", "")))
        if not name or not (folder / WEIGHTS).is_file() or not (folder / CONFIG).is_file():
            raise RequestError(400, f"give lora_name and a lora_path holding {WEIGHTS} and {CONFIG} "
                                    f"(got {name!r}, {str(folder)!r})")
        if name in self.adapters:
            raise RequestError(400, f"The lora adapter '{name}' has already been loaded.")
        config, ours = json.loads((folder / CONFIG).read_text()), self.model.peft_config["default"]
        if (config.get("r"), config.get("lora_alpha")) != (ours.r, ours.lora_alpha):
            raise RequestError(400, f"adapter r={config.get('r')} alpha={config.get('lora_alpha')} differs from "
                                    f"the server's LoRA (r={ours.r} alpha={ours.lora_alpha}); serve with the "
                                    "trainer's --lora-r and --lora-alpha")
        self.adapters[name] = load_file(str(folder / WEIGHTS))
        return f"Success: LoRA adapter '{name}' added successfully."

    def unload(self, body: dict) -> str:
        """Forget a loaded adapter."""
        name = body.get("lora_name")
        if name not in self.adapters:
            raise RequestError(404, f"The lora adapter '{name}' cannot be found.")
        del self.adapters[name]
        self.active = None if self.active == name else self.active
        return f"Success: LoRA adapter '{name}' removed successfully."

    def completions(self, body: dict) -> dict:
        """Generate `n` completions, the i-th seeded `seed + i` as vLLM seeds them (and the prompt's log-probs when
        asked), vLLM's response shape."""
        ids, name = self._prompt(body.get("prompt")), body.get("model") or self.name
        n, seed = int(body.get("n") or 1), int(body.get("seed") or 0)
        choices, drawn = [], 0
        with self._weights(name):
            scored = _prompt_logprobs(self.model, ids, int(body["prompt_logprobs"])) \
                if body.get("prompt_logprobs") is not None else None
            for index in range(n):
                tokens, logprobs = self._generate(ids, {**body, "seed": seed + index})
                stop = "length" if len(tokens) >= int(body.get("max_tokens") or 16) else "stop"
                choices.append({"index": index, "text": self.tokenizer.decode(tokens, skip_special_tokens=True),
                                "logprobs": self._logprobs(tokens, logprobs, body), "finish_reason": stop,
                                "prompt_logprobs": scored})
                drawn += len(tokens)
        return {"id": f"cmpl-{time.time_ns()}", "object": "text_completion", "created": int(time.time()),
                "model": name, "choices": choices, "usage": {"prompt_tokens": len(ids), "completion_tokens": drawn,
                                                             "total_tokens": len(ids) + drawn}}

    def _prompt(self, prompt: Any) -> list[int]:
        """Return one prompt's token ids (text is tokenized with the tokenizer's specials, as vLLM does)."""
        if isinstance(prompt, str):
            return self.tokenizer(prompt)["input_ids"]
        if isinstance(prompt, list) and prompt and all(isinstance(t, int) for t in prompt):
            return prompt
        raise RequestError(400, "prompt must be one text or one list of token ids (batches are not served here)")

    def _weights(self, name: str) -> Any:
        """Return a context with the named model's weights in place (the base: the adapter disabled)."""
        import contextlib

        from peft import set_peft_model_state_dict

        if name == self.name:
            return self.model.disable_adapter()
        if name not in self.adapters:
            raise RequestError(404, f"The model `{name}` does not exist.")
        if self.active != name:
            set_peft_model_state_dict(self.model, self.adapters[name])
            self.active = name
        return contextlib.nullcontext()

    def _generate(self, ids: list[int], body: dict) -> tuple[list[int], list[float]]:
        """Sample the completion as aoi.models.local does; return its token ids and raw log-probs."""
        cuts = {key: body[key] for key, off in PLAIN.items() if body.get(key) is not None and body[key] not in off}
        if cuts:
            raise RequestError(400, f"this server samples plainly; drop {cuts}")
        schema = _schema(body)
        local = _Generator.from_loaded(self.model, self.tokenizer, name=f"local:{self.name}",
                                       max_new_tokens=int(body.get("max_tokens") or 16),
                                       temperature=float(body.get("temperature", 1.0)), seed=int(body.get("seed") or 0),
                                       logprobs=True, constrained=schema is not None, progress=False)
        return local.generate_ids(ids, schema)

    def _logprobs(self, tokens: list[int], logprobs: list[float], body: dict) -> dict | None:
        """Return the OpenAI completions `logprobs` object of the sampled tokens (None unless asked)."""
        if body.get("logprobs") is None:
            return None
        names = [f"token_id:{t}" if body.get("return_tokens_as_token_ids") else self.tokenizer.decode([t])
                 for t in tokens]
        return {"tokens": names, "token_logprobs": logprobs, "text_offset": [0] * len(tokens),
                "top_logprobs": [{n: lp} for n, lp in zip(names, logprobs)]}


class _Generator(LocalModel):
    """LocalModel drawing from token ids with a caller's schema (its sampling, steering and seeding unchanged)."""

    def generate_ids(self, ids: list[int], schema: dict | None) -> tuple[list[int], list[float]]:
        """Return the sampled token ids and their raw log-probs (temperature 1, before the schema mask)."""
        import torch

        prompt = torch.tensor([ids], device=self.device)
        options = self._sampling(self.max_new_tokens, self.temperature) | self._steering(
            "request", len(ids), self.max_new_tokens, schema=schema)
        with torch.random.fork_rng(devices=[]), torch.no_grad():  # LocalModel.complete's seeding, call 0
            torch.manual_seed(self.seed)
            out = self.model.generate(prompt, attention_mask=torch.ones_like(prompt), **options)
        new = out.sequences[0, len(ids):]
        return new.tolist(), token_logprobs(out.logits, new, 1.0) if len(new) else []


def _schema(body: dict) -> dict | None:
    """Return the request's JSON schema: structured_outputs.json, guided_json or response_format's json_schema."""
    structured = body.get("structured_outputs") or {}
    if structured.get("json") is not None:
        return structured["json"]
    if body.get("guided_json") is not None:
        return body["guided_json"]
    response = body.get("response_format") or {}
    return (response.get("json_schema") or {}).get("schema") if response.get("type") == "json_schema" else None


def _prompt_logprobs(model: Any, ids: list[int], top: int) -> list:
    """Return vLLM's prompt_logprobs: None for the first token, then {token id: {logprob, rank}} for each other."""
    import torch

    tensor = torch.tensor([ids], device=next(model.parameters()).device)
    with torch.no_grad():
        logits = model(input_ids=tensor, attention_mask=torch.ones_like(tensor)).logits[0, :-1].float()
    logprobs = torch.log_softmax(logits, dim=-1)
    chosen = logprobs.gather(1, tensor[0, 1:].view(-1, 1))
    ranks = (logprobs > chosen).sum(dim=-1) + 1
    best = logprobs.topk(top, dim=-1) if top > 0 else None
    rows: list = [None]
    for i, token in enumerate(ids[1:]):
        row = {str(int(t)): {"logprob": float(v), "rank": r + 1} for r, (v, t) in
               enumerate(zip(best.values[i], best.indices[i]))} if best is not None else {}
        row[str(token)] = {"logprob": float(chosen[i]), "rank": int(ranks[i])}
        rows.append(row)
    return rows
