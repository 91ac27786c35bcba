"""The expert model: deterministic analyzers in the spirit of K8sGPT, playing every AOI role.

`ExpertModel().complete(messages, role=...)` answers like an LLM would, in each role's JSON: the Probe surveys and
digs in with read-only checks, the Observer decides from the Probe's reports, the Executor runs the fix it is given.
It reasons from the evidence it is given only (the sub-agents' conversations; what the Observer's prompt says, as
the ObserverContext its call sends; no problem ids, fault families or targets are written here) and keeps no state
between calls, so a replayed call gets the same answer.
"""

from __future__ import annotations

import time

from aoi.models.base import Completion, Message, ModelError
from aoi.models.expert.contract import ObserverContext
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
                 context: ObserverContext | None = None) -> Completion:
        """Return the expert's answer to the conversation (the Observer's: to its context), with cl100k token counts
        and latency; its replies follow the roles' schemas, so `schema` changes nothing.

        Example:
            >>> reply = ExpertModel().complete([{"role": "system", "content": "at most 4 tool calls"},
            ...     {"role": "user", "content": "Investigate: Survey namespace shop\\nContext: namespace: shop"}],
            ...     role="probe")
            >>> import json; json.loads(reply.text)["args"]
            {'command': 'kubectl get pods -n shop'}
        """
        started = time.perf_counter()
        text = self._answer(messages, role, context)
        return Completion(text, input_tokens=count_messages(messages), output_tokens=count_tokens(text),
                          latency=time.perf_counter() - started, meta={"role": role})

    def _answer(self, messages: list[Message], role: str, context: ObserverContext | None) -> str:
        """Dispatch to the role's expert: the Observer reads its context, the sub-agents their conversation."""
        from aoi.models.expert import compressor, executor, observer, probe

        if role == "observer":
            return observer.respond(context)
        answer = {"probe": probe.respond, "executor": executor.respond, "compressor": compressor.respond}.get(role)
        if answer is None:
            raise ModelError(f"the expert plays {', '.join(MODEL_ROLES)}, not {role!r}; give that role another model")
        return answer(messages)
