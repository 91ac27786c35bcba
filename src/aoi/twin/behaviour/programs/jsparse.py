"""A tokenizer and parser for the JavaScript the mongo shells are given: literals, calls, members, `+`, `=`.

Nodes are tuples: ("lit", v), ("name", n), ("get", obj, name), ("index", obj, expr), ("call", callee, args, pos),
("new", callee, args, pos), ("array", items), ("object", [(key, expr)]), ("assign", target, expr),
("var", name, expr), ("add", a, b), ("neg", a), ("not", a). Statements are expressions or ("var", ...).
"""

from __future__ import annotations

import re

TOKEN = re.compile(r"""(?P<ws>\s+)|(?P<comment>//[^\n]*|/\*.*?\*/)
    |(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
    |(?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
    |(?P<name>[A-Za-z_$][\w$]*)
    |(?P<punct>=>|===|!==|==|!=|&&|\|\||[-+*/%.,;:()\[\]{}=!<>?])""", re.X | re.S)
KEYWORDS = {"true": True, "false": False, "null": None}
ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)", re.S)
UNSUPPORTED = {"function", "if", "for", "while", "return", "=>", "try", "throw", "do", "switch"}


class JSSyntaxError(Exception):
    """A script the parser rejects; `line` and `col` are 1-based."""

    def __init__(self, message: str, line: int, col: int):
        super().__init__(message)
        self.line, self.col = line, col


def tokenize(src: str) -> list[tuple[str, object, int, int]]:
    """Split source into (kind, value, line, col) tokens, ending with ("eof", None, ...)."""
    tokens, pos, line, start = [], 0, 1, 0
    while pos < len(src):
        m = TOKEN.match(src, pos)
        if m is None:
            quote = src[pos] in "'\""
            raise JSSyntaxError("unterminated string literal" if quote else "illegal character", line, pos - start + 1)
        kind, text = m.lastgroup, m.group()
        if kind not in ("ws", "comment"):
            tokens.append((kind, _value(kind, text), line, pos - start + 1))
        line += text.count("\n")
        start = pos + text.rfind("\n") + 1 if "\n" in text else start
        pos = m.end()
    tokens.append(("eof", None, line, pos - start + 1))
    return tokens


def _value(kind: str, text: str):
    """Return a token's value: numbers as floats or ints, strings unescaped."""
    if kind == "num":
        value = float(text)
        return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value
    if kind == "str":
        return ESCAPE.sub(_unescape, text[1:-1])
    return text


def _unescape(m: re.Match) -> str:
    """Decode one JavaScript string escape."""
    code = m.group(1)
    if code[0] in "ux":
        return chr(int(code[1:], 16))
    return {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}.get(code, code)


class Parser:
    """Recursive descent over the tokens; `parse()` returns the statement list."""

    def __init__(self, src: str):
        self.tokens, self.i = tokenize(src), 0

    def peek(self, offset: int = 0):
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def take(self):
        tok, self.i = self.peek(), self.i + 1
        return tok

    def at(self, value) -> bool:
        kind, v = self.peek()[:2]
        return kind in ("punct", "name") and v == value

    def expect(self, value, message: str):
        if not self.at(value):
            self.fail(message)
        return self.take()

    def fail(self, message: str):
        _, _, line, col = self.peek()
        raise JSSyntaxError(message, line, col)

    def parse(self) -> list:
        """Parse the whole script."""
        statements = []
        while self.peek()[0] != "eof":
            if self.at(";"):
                self.take()
                continue
            statements.append(self.statement())
            if not (self.at(";") or self.peek()[0] == "eof" or self.at("}")):
                self.fail("missing ; before statement")
        return statements

    def statement(self):
        if self.at("var") or self.at("let") or self.at("const"):
            self.take()
            kind, name = self.take()[:2]
            if kind != "name":
                self.fail("missing variable name")
            value = ("lit", None) if not self.at("=") else (self.take(), self.expression())[1]
            return ("var", name, value)
        return self.expression()

    def expression(self):
        left = self.additive()
        if self.at("="):
            self.take()
            if left[0] not in ("name", "get", "index"):
                self.fail("invalid assignment left-hand side")
            return ("assign", left, self.expression())
        return left

    def additive(self):
        node = self.unary()
        while self.at("+") or self.at("-"):
            op = self.take()[1]
            right = self.unary()
            node = ("add", node, right) if op == "+" else ("add", node, ("neg", right))
        return node

    def unary(self):
        if self.at("-") or self.at("!"):
            op = self.take()[1]
            return ("neg" if op == "-" else "not", self.unary())
        if self.at("new"):
            self.take()
            node = self.postfix(self.primary(), calls=False)
            pos = self.peek()[2:]
            args = self.arguments() if self.at("(") else []
            return self.postfix(("new", node, args, pos))
        return self.postfix(self.primary())

    def postfix(self, node, calls: bool = True):
        while True:
            if self.at("."):
                self.take()
                kind, name = self.take()[:2]
                if kind != "name":
                    self.fail("missing name after . operator")
                node = ("get", node, name)
            elif self.at("["):
                self.take()
                node = ("index", node, self.expression())
                self.expect("]", "missing ] in index expression")
            elif calls and self.at("("):
                pos = self.peek()[2:]
                node = ("call", node, self.arguments(), pos)
            else:
                return node

    def arguments(self) -> list:
        self.expect("(", "missing ( before arguments")
        return self.items(")", "missing ) after argument list")

    def items(self, close: str, message: str) -> list:
        out = []
        while not self.at(close):
            out.append(self.expression())
            if not self.at(","):
                break
            self.take()
        self.expect(close, message)
        return out

    def primary(self):
        kind, value, line, col = self.peek()
        if kind in ("name", "punct") and value in UNSUPPORTED:
            raise JSSyntaxError(f"unsupported in this shell: {value}", line, col)
        self.take()
        if kind in ("num", "str"):
            return ("lit", value)
        if kind == "name":
            return ("lit", KEYWORDS[value]) if value in KEYWORDS else ("name", value)
        if value == "(":
            node = self.expression()
            self.expect(")", "missing ) in parenthetical")
            return node
        if value == "[":
            return ("array", self.items("]", "missing ] after element list"))
        if value == "{":
            return ("object", self.properties())
        self.i -= 1
        self.fail("expected expression, got end of script" if kind == "eof" else f"expected expression, got '{value}'")

    def properties(self) -> list:
        props = []
        while not self.at("}"):
            kind, key = self.take()[:2]
            if kind not in ("name", "str", "num"):
                self.i -= 1
                self.fail("missing } after property list")
            self.expect(":", "missing : after property id")
            props.append((str(key), self.expression()))
            if not self.at(","):
                break
            self.take()
        self.expect("}", "missing } after property list")
        return props


def parse(src: str) -> list:
    """Parse a script into statements.

    Example:
        >>> parse("db.getSiblingDB('admin').dropUser('admin');")[0][0]
        'call'
    """
    return Parser(src).parse()
