"""Resource quantities in the canonical form the API server stores (`1000m` -> `1`, `2048Mi` -> `2Gi`)."""

from __future__ import annotations

import re
from fractions import Fraction

DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
DECIMAL_SUFFIX = {v: k for k, v in DECIMAL.items()}
BINARY_SUFFIX = {v: k for k, v in BINARY.items()}
_QUANTITY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?")


def parse(text: str) -> tuple[Fraction, str] | None:
    """Return (exact value, format) of a quantity, format being 'binary', 'decimal' or 'exponent'; None if invalid.

    Example:
        >>> parse("1500m")
        (Fraction(3, 2), 'decimal')
    """
    m = _QUANTITY.fullmatch(str(text).strip())
    if not m:
        return None
    number = Fraction(m[1])
    if m[2] in BINARY:
        return number * 2 ** BINARY[m[2]], "binary"
    if m[3] is not None:
        return number * Fraction(10) ** int(m[3]), "exponent"
    return number * Fraction(10) ** DECIMAL[m[2] or ""], "decimal"


def _decimal(value: Fraction, exponent_form: bool) -> str:
    """Format as mantissa * 10^(3k) with the largest such k, rounding up below one nano."""
    nanos = -(-value.numerator * 10**9 // value.denominator)  # ceil, as the API server rounds
    mantissa, exponent = nanos, -9
    while mantissa and mantissa % 10 == 0:
        mantissa, exponent = mantissa // 10, exponent + 1
    while exponent % 3:
        mantissa, exponent = mantissa * 10, exponent - 1
    if exponent > 18:
        mantissa, exponent = mantissa * 10 ** (exponent - 18), 18
    if exponent_form:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    return f"{mantissa}{DECIMAL_SUFFIX[exponent]}"


def canonical(text) -> str:
    """Return a quantity in canonical form (invalid text is returned unchanged).

    Example:
        >>> [canonical(q) for q in ("1000m", "0.5", "100m", "2048Mi", "1000Mi", "512Ki", "1e3", "2")]
        ['1', '500m', '100m', '2Gi', '1000Mi', '512Ki', '1e3', '2']
    """
    parsed = parse(text) if isinstance(text, (str, int, float)) else None
    if parsed is None:
        return text
    value, fmt = parsed
    if value == 0:
        return "0"
    if fmt == "binary" and -1024 < value < 1024 or fmt == "binary" and value.denominator != 1:
        fmt = "decimal"
    if fmt != "binary":
        return _decimal(value, fmt == "exponent")
    mantissa, exponent = int(value), 0
    while mantissa % 1024 == 0 and exponent < 60:
        mantissa, exponent = mantissa // 1024, exponent + 10
    return f"{mantissa}{BINARY_SUFFIX.get(exponent, '')}"


def canonical_map(resources: dict | None) -> dict | None:
    """Return a resource-name -> quantity map with every value canonical."""
    if not isinstance(resources, dict):
        return resources
    return {k: canonical(v) for k, v in resources.items()}
