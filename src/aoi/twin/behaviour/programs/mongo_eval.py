"""Evaluate parsed shell JavaScript: variables, members, calls into host objects, and the shell's globals."""

from __future__ import annotations

from collections.abc import Callable

from aoi.twin.behaviour.programs.basics import hex_id, rng_for, uuid_text
from aoi.twin.behaviour.programs.mongo_values import UNDEFINED, Special, stringify, to_text


class JSError(Exception):
    """An exception thrown in the script; `shown` overrides 'Name: message' (e.g. WriteCommandError(...))."""

    def __init__(self, message: str, name: str = "Error", stack: tuple[str, ...] = (), shown: str = "",
                 response: dict | None = None):
        super().__init__(message)
        self.name, self.stack, self.shown, self.response = name, stack, shown, response
        self.pos: tuple[int, int] | None = None

    def text(self) -> str:
        """Return what `uncaught exception: ...` shows."""
        return self.shown or f"{self.name}: {self}"


class Quit(Exception):
    """quit(n) ends the shell with exit code n."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


class Fn:
    """A function value: a builtin or a bound host method."""

    def __init__(self, name: str, impl: Callable[[list], object]):
        self.name, self.impl = name, impl

    def __call__(self, args: list):
        return self.impl(args)


class Host:
    """A host object (db, a collection, a cursor...): members come from `member`."""

    def member(self, name: str):
        """Return a property or method (UNDEFINED when there is none)."""
        method = getattr(self, f"js_{name}", None)
        return Fn(name, method) if method else UNDEFINED


def arg(args: list, i: int, default=UNDEFINED):
    """Return argument i, or default when missing."""
    return args[i] if i < len(args) else default


def describe(node) -> str:
    """Render an expression back as SpiderMonkey names it in TypeErrors (`db.foo.bar`, `db.getUser(...)`)."""
    kind = node[0]
    if kind == "name":
        return node[1]
    if kind == "get":
        return f"{describe(node[1])}.{node[2]}"
    if kind == "call":
        return f"{describe(node[1])}(...)"
    if kind == "index":
        return f"{describe(node[1])}[...]"
    return "expression"


class Interp:
    """Run statements against the shell's globals; returns the completion value (the last expression's)."""

    def __init__(self, globals_: dict):
        self.vars = globals_

    def run(self, statements: list):
        """Evaluate statements in order and return the completion value."""
        value = UNDEFINED
        for node in statements:
            result = self.eval(node)
            if node[0] != "var":
                value = result
        return value

    def eval(self, node):
        """Evaluate one node."""
        return getattr(self, f"_{node[0]}")(node)

    def _lit(self, node):
        return node[1]

    def _name(self, node):
        if node[1] == "undefined":
            return UNDEFINED
        if node[1] not in self.vars:
            raise JSError(f"{node[1]} is not defined", "ReferenceError")
        return self.vars[node[1]]

    def _var(self, node):
        self.vars[node[1]] = self.eval(node[2])
        return UNDEFINED

    def _assign(self, node):
        target, value = node[1], self.eval(node[2])
        if target[0] == "name":
            self.vars[target[1]] = value
        else:
            holder = self.eval(target[1])
            key = target[2] if target[0] == "get" else to_text(self.eval(target[2]))
            if isinstance(holder, dict):
                holder[key] = value
        return value

    def _get(self, node):
        return self.member(self.eval(node[1]), node[2], node[1])

    def _index(self, node):
        holder, key = self.eval(node[1]), self.eval(node[2])
        if isinstance(holder, list) and isinstance(key, (int, float)):
            return holder[int(key)] if 0 <= int(key) < len(holder) else UNDEFINED
        return self.member(holder, to_text(key), node[1])

    def member(self, holder, name: str, node):
        """Return holder[name] as JavaScript would (TypeError on null and undefined)."""
        if holder is None or holder is UNDEFINED:
            raise JSError(f"{describe(node)} is {'null' if holder is None else 'undefined'}", "TypeError")
        if isinstance(holder, Host):
            return holder.member(name)
        if isinstance(holder, dict):
            return holder.get(name, UNDEFINED)
        if isinstance(holder, (list, str)) and name == "length":
            return len(holder)
        if isinstance(holder, list) and name in ("forEach", "map"):
            return Fn(name, lambda a: _each(holder, a, name))
        return UNDEFINED

    def _call(self, node):
        callee = self.eval(node[1])
        if not isinstance(callee, Fn):
            raise JSError(f"{describe(node[1])} is not a function", "TypeError")
        try:
            return callee([self.eval(a) for a in node[2]])
        except JSError as e:
            e.pos = e.pos or node[3]
            raise

    _new = _call

    def _array(self, node):
        return [self.eval(item) for item in node[1]]

    def _object(self, node):
        return {key: self.eval(value) for key, value in node[1]}

    def _add(self, node):
        a, b = self.eval(node[1]), self.eval(node[2])
        if isinstance(a, str) or isinstance(b, str) or not _numeric(a) or not _numeric(b):
            return to_text(a) + to_text(b)
        return a + b

    def _neg(self, node):
        value = self.eval(node[1])
        return -value if _numeric(value) else float("nan")

    def _not(self, node):
        value = self.eval(node[1])
        return value in (None, UNDEFINED, False, 0, "") or value != value


def _numeric(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) or isinstance(x, bool)


def _each(items: list, args: list, name: str):
    fn = arg(args, 0)
    if not isinstance(fn, Fn):
        raise JSError(f"{name} requires a function argument", "TypeError")
    results = [fn([item, i]) for i, item in enumerate(items)]
    return results if name == "map" else UNDEFINED


def constructors(seed: str) -> dict:
    """Return ObjectId, UUID, NumberLong, NumberInt, ISODate and Date, deterministic per shell run."""
    rng = rng_for("shell-values", seed)
    def date(args):
        text = arg(args, 0, None)
        return Special("ISODate", _parse_date(text) if isinstance(text, str) else float(seed.split("|")[-1]))
    return {
        "ObjectId": Fn("ObjectId", lambda a: Special("ObjectId", arg(a, 0, None) or "683d6a50" + hex_id(rng, 16))),
        "UUID": Fn("UUID", lambda a: Special("UUID", arg(a, 0, None) or uuid_text(rng))),
        "NumberLong": Fn("NumberLong", lambda a: Special("NumberLong", int(float(arg(a, 0, 0))))),
        "NumberInt": Fn("NumberInt", lambda a: int(float(arg(a, 0, 0)))),
        "ISODate": Fn("ISODate", date), "Date": Fn("Date", date),
        "JSON": {"stringify": Fn("stringify", lambda a: stringify(arg(a, 0, None))),
                 "parse": Fn("parse", lambda a: _json_parse(arg(a, 0, "null")))},
    }


def _parse_date(text: str) -> float:
    from datetime import datetime

    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise JSError("invalid ISO date: " + text) from None


def _json_parse(text) -> object:
    import json

    try:
        return json.loads(str(text))
    except ValueError:
        raise JSError("JSON.parse: unexpected character", "SyntaxError") from None
