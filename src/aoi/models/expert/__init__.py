"""The expert model: deterministic analyzers in the spirit of K8sGPT, playing every AOI role.

`ExpertModel().complete(messages, role=...)` answers like an LLM would, in each role's JSON: the Probe surveys and
digs in with read-only checks, the Observer decides from the Probe's reports, the Executor runs the fix it is given.
It reasons from the evidence it is given only (what each role's prompt says, as the context its call sends:
aoi.models.expert.contract; what a sub-agent's conversation adds after it, its tool calls and their observations;
no problem ids, fault families or targets are written here) and keeps no state between calls, so a replayed call
gets the same answer.
"""

from __future__ import annotations

import time

from aoi.models.base import Completion, Message, ModelError
from aoi.models.expert.contract import CompressorContext, ObserverContext, SubAgentContext
from aoi.models.tokens import count_messages, count_tokens
from aoi.protocols import MODEL_ROLES


class ExpertModel:
    """Answer as the expert for the role that asks."""

    name = "expert"

    def __init__(self, **options):
        # Options meant for sampling models (temperature, max_tokens, timeout...) mean nothing here.
        self.options = options

    def complete(self, messages: list[Message], *, role: str, max_tokens: int | None = None,
                 temperature: float | None = None, schema: dict | None = None,
                 context: ObserverContext | SubAgentContext | CompressorContext | None = None) -> Completion:
        """Return the expert's answer to the call (what its context says, what the conversation adds), with cl100k
        token counts and latency; its replies follow the roles' schemas, so `schema` changes nothing.

        Example:
            >>> asked = SubAgentContext(budget=4, instruction="Survey namespace shop", context="namespace: shop")
            >>> reply = ExpertModel().complete([], role="probe", context=asked)
            >>> import json; json.loads(reply.text)["args"]
            {'command': 'kubectl get pods -n shop'}
        """
        started = time.perf_counter()
        text = self._answer(messages, role, context)
        return Completion(text, input_tokens=count_messages(messages), output_tokens=count_tokens(text),
                          latency=time.perf_counter() - started, meta={"role": role})

    def _answer(self, messages: list[Message], role: str, context) -> str:
        """Dispatch to the role's expert: each reads its context; the sub-agents their conversation too."""
        from aoi.models.expert import compressor, executor, observer, probe

        if role == "observer":
            return observer.respond(context)
        answer = {"probe": probe.respond, "executor": executor.respond, "compressor": compressor.respond}.get(role)
        if answer is None:
            raise ModelError(f"the expert plays {', '.join(MODEL_ROLES)}, not {role!r}; give that role another model")
        return answer(messages, context)
