"""What every state-aware program shares: results from text and ids drawn from seeded generators."""

from __future__ import annotations

import random

from aoi.shellsim.context import ExecResult
from aoi.twin.core.ids import fnv32a


def out(stdout: str = "", stderr: str = "", code: int = 0) -> ExecResult:
    """Return an ExecResult from text."""
    return ExecResult(stdout.encode(), stderr.encode(), code)



def rng_for(*parts) -> random.Random:
    """Return a generator seeded from stable strings (never from the wall clock)."""
    return random.Random(fnv32a("\x1f".join(str(p) for p in parts).encode()))



def hex_id(rng: random.Random, digits: int) -> str:
    """Return `digits` hex digits from rng."""
    return f"{rng.getrandbits(digits * 4):0{digits}x}"



def uuid_text(rng: random.Random) -> str:
    """Return a version-4-shaped UUID from rng."""
    h = hex_id(rng, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:]}"

