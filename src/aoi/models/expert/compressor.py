"""The expert Compressor: keep the header, every line that signals trouble, and counts of the rest.

The budget and the output come from the context its call sends (contract.CompressorContext).
"""

from __future__ import annotations

import re

from aoi.models.expert import contract
from aoi.models.tokens import count_tokens

SIGNAL = re.compile(r"error|warn|fail|fatal|panic|refused|denied|crash|backoff|pending|not ready|unhealthy|"
                    r"timeout|unavailable|killed|0/\d|released|not authorized|no such|unreachable", re.IGNORECASE)


def respond(messages: list[dict], context: contract.CompressorContext | None) -> str:
    """Condense the output the context holds to its budget.

    Example:
        >>> print(respond([], contract.CompressorContext(budget=50, output="NAME\\n" + "a ok\\n" * 40 + "b Error\\n")))
        NAME
        b Error
        [40 other lines left out]
    """
    given = contract.expect(context, contract.CompressorContext, "compressor")
    budget, output = given.budget, given.output
    if count_tokens(output) <= budget:
        return output
    lines = output.splitlines()
    kept = lines[:1] + [line for line in lines[1:] if SIGNAL.search(line)]
    text = "\n".join(kept) + f"\n[{len(lines) - len(kept)} other lines left out]"
    return text if count_tokens(text) <= budget else text[: budget * 3]
