"""The expert Compressor: keep the header, every line that signals trouble, and counts of the rest."""

from __future__ import annotations

import re

from aoi.models.expert import contract
from aoi.models.tokens import count_tokens

SIGNAL = re.compile(r"error|warn|fail|fatal|panic|refused|denied|crash|backoff|pending|not ready|unhealthy|"
                    r"timeout|unavailable|killed|0/\d|released|not authorized|no such|unreachable", re.IGNORECASE)


def respond(messages: list[dict]) -> str:
    """Condense the output in the compressor prompt to its budget.

    Example:
        >>> msgs = [{"role": "system", "content": "at most 50 tokens"},
        ...         {"role": "user", "content": "Command: x\\nOutput:\\nNAME\\n" + "a ok\\n" * 40 + "b Error\\n"}]
        >>> print(respond(msgs))
        NAME
        b Error
        [40 other lines left out]
    """
    system = messages[0]["content"] if messages else ""
    budget = int((contract.TOKEN_BUDGET.search(system) or re.search(r"(\d+)", "1500")).group(1))
    output = messages[-1]["content"].split(contract.OUTPUT, 1)[-1] if messages else ""
    if count_tokens(output) <= budget:
        return output
    lines = output.splitlines()
    kept = lines[:1] + [line for line in lines[1:] if SIGNAL.search(line)]
    text = "\n".join(kept) + f"\n[{len(lines) - len(kept)} other lines left out]"
    return text if count_tokens(text) <= budget else text[: budget * 3]
