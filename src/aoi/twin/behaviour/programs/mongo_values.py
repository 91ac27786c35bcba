"""Values the mongo shells handle (ObjectId, UUID, NumberLong, ISODate) and how each shell prints them."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass


class Undefined:
    """JavaScript's undefined."""

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED = Undefined()
IDENT = re.compile(r"^[A-Za-z_$][\w$]*$")


@dataclass(frozen=True)
class Special:
    """A BSON value printed as a constructor call: ObjectId("..."), UUID("..."), NumberLong(5), ISODate("...")."""

    kind: str
    value: object

    def legacy(self) -> str:
        """Return the 4.4 shell's text."""
        if self.kind == "NumberLong":
            return f"NumberLong({self.value})" if abs(int(self.value)) < 2 ** 31 else f'NumberLong("{self.value}")'
        if self.kind == "ISODate":
            return f'ISODate("{iso(float(self.value))}")'
        if self.kind == "Timestamp":
            return f"Timestamp({self.value[0]}, {self.value[1]})"
        return f'{self.kind}("{self.value}")'

    def modern(self) -> str:
        """Return mongosh's text."""
        if self.kind == "NumberLong":
            return f"Long('{self.value}')"
        if self.kind == "ISODate":
            return f"ISODate('{iso(float(self.value))}')"
        if self.kind == "UUID":
            return f"UUID('{self.value}')"
        if self.kind == "Timestamp":
            return f"Timestamp({{ t: {self.value[0]}, i: {self.value[1]} }})"
        return f"{self.kind}('{self.value}')"


def iso(t: float) -> str:
    """Format epoch seconds as the shells print dates (milliseconds, Z)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def number(x) -> str:
    """Print a JavaScript number: integers without a fraction."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e21:
        return str(int(x))
    return repr(x) if isinstance(x, float) else str(x)


def scalar(x, quote=json.dumps) -> str | None:
    """Print a non-container value, or None for objects and arrays."""
    if x is None:
        return "null"
    if x is UNDEFINED:
        return "undefined"
    if isinstance(x, (bool, int, float)):
        return number(x)
    if isinstance(x, str):
        return quote(x)
    if isinstance(x, Special):
        return x.legacy() if quote is json.dumps else x.modern()
    if not isinstance(x, (dict, list)):
        return str(x)
    return None


def tojson(x, indent: str = "", nolint: bool | None = None) -> str:
    r"""Print a value as the 4.4 shell's tojson(): tabs, and one line when short at the top level.

    Example:
        >>> tojson({"ok": 1})
        '{ "ok" : 1 }'
        >>> tojson({"user": "admin", "roles": [{"role": "readWrite", "db": "geo-db"}], "n": "x" * 30}).split("\n")[:4]
        ['{', '\t"user" : "admin",', '\t"roles" : [', '\t\t{']
    """
    simple = scalar(x)
    if simple is not None:
        return simple
    s = _array(x, indent, nolint) if isinstance(x, list) else _object(x, indent, nolint)
    if nolint in (None, True) and len(s) < 80 and not indent:
        s = re.sub(r"[\t\r\n]+", " ", s)
    return s


def _object(x: dict, indent: str, nolint) -> str:
    end, tab = (" ", "") if nolint else ("\n", "\t")
    inner = indent + tab
    fields = [f'{inner}"{k}" : {tojson(v, inner, nolint)}' for k, v in x.items()]
    body = ("," + end).join(fields) if fields else inner
    return "{" + end + body + end + indent + "}"


def _array(x: list, indent: str, nolint) -> str:
    if not x:
        return "[ ]"
    sep = " " if nolint else "\n"
    indent = "" if nolint else indent
    inner = indent + ("" if nolint else "\t")
    items = ("," + sep).join(inner + tojson(v, inner, nolint) for v in x)
    return "[" + sep + items + sep + indent + "]"


def bson(x) -> str:
    """Print a value as mongod prints commands in its errors: `{ find: "geo", limit: 1.0 }`.

    Example:
        >>> bson({"find": "geo", "filter": {}, "limit": 1.0, "$db": "geo-db"})
        '{ find: "geo", filter: {}, limit: 1.0, $db: "geo-db" }'
    """
    if isinstance(x, dict):
        return "{ " + ", ".join(f"{k}: {bson(v)}" for k, v in x.items()) + " }" if x else "{}"
    if isinstance(x, list):
        return "[ " + ", ".join(bson(v) for v in x) + " ]" if x else "[]"
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return f"{float(x):.1f}" if float(x).is_integer() else repr(x)  # the shell sends numbers as doubles
    return scalar(x) or ""


def inspect(x, indent: int = 0) -> str:
    """Print a value as mongosh (node's util.inspect) does: bare keys, single quotes, wrapped past 72 columns.

    Example:
        >>> inspect({"ok": 1, "db": "geo-db"})
        "{ ok: 1, db: 'geo-db' }"
    """
    simple = scalar(x, _single)
    if simple is not None:
        return simple
    if isinstance(x, list):
        parts, brackets = [inspect(v, indent + 2) for v in x], "[]"
    else:
        parts = [f"{k if IDENT.match(k) else _single(k)}: {inspect(v, indent + 2)}" for k, v in x.items()]
        brackets = "{}"
    if not parts:
        return brackets
    line = f"{brackets[0]} {', '.join(parts)} {brackets[1]}"
    if len(line) + indent <= 72 and "\n" not in line:
        return line
    pad = " " * (indent + 2)
    return brackets[0] + "\n" + ",\n".join(pad + p for p in parts) + "\n" + " " * indent + brackets[1]


def _single(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


def to_text(x) -> str:
    """Convert a value to a string as JavaScript's String(x) does (print's arguments)."""
    if isinstance(x, str):
        return x
    if isinstance(x, dict):
        return "[object Object]"
    if isinstance(x, list):
        return ",".join("" if v is None or v is UNDEFINED else to_text(v) for v in x)
    if isinstance(x, Special) and x.kind in ("ObjectId", "UUID"):
        return x.legacy()
    return scalar(x) or str(x)


def stringify(x) -> str:
    """Return JSON.stringify(x): compact JSON ($oid-free: specials become their string form)."""
    def plain(v):
        if isinstance(v, dict):
            return {k: plain(w) for k, w in v.items() if w is not UNDEFINED}
        if isinstance(v, list):
            return [None if w is UNDEFINED else plain(w) for w in v]
        if isinstance(v, Special):
            return iso(float(v.value)) if v.kind == "ISODate" else str(v.value)
        if isinstance(v, float) and v.is_integer():
            return int(v)
        return v
    return json.dumps(plain(x), separators=(",", ":"), ensure_ascii=False)
