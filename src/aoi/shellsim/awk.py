"""A small awk: BEGIN/END, /re/ and expression patterns, print/printf, fields, variables, arithmetic, if, next.

Not modelled: arrays, loops, getline, output redirection, user functions (mawk's syntax error is printed instead).
"""

from __future__ import annotations

import re

from aoi.shellsim.exprutils import printf_format
from aoi.shellsim.textutils import posix_regex
from aoi.shellsim.util import getopt, program, read_inputs, result, split_lines, text, unescape

_TOKEN = re.compile(r"""(?P<ws>[ \t]+|\\\n|\#[^\n]*)|(?P<num>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+)
    |(?P<str>"(?:[^"\\]|\\.)*")|(?P<name>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<op>\+\+|--|[-+*/%^]=|==|!=|<=|>=|&&|\|\||!~|[-+*/%^<>!~=(){};,$\n])""", re.X)
_NUMERIC = re.compile(r"\s*[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+)\s*")
_OPERAND_END = {"num", "str", "name", "regex"}
_COMPARE = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
            "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
_ARITH = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "^": lambda a, b: a ** b,
          "/": lambda a, b: a / b if b else float("nan"), "%": lambda a, b: a % b if b else float("nan")}
_FUNCS = {"length": lambda a: float(len(to_str(a[0]))), "tolower": lambda a: to_str(a[0]).lower(),
          "toupper": lambda a: to_str(a[0]).upper(), "int": lambda a: float(int(to_num(a[0]))),
          "index": lambda a: float(to_str(a[0]).find(to_str(a[1])) + 1),
          "substr": lambda a: to_str(a[0])[max(int(to_num(a[1])) - 1, 0):][:int(to_num(a[2])) if len(a) > 2 else None]}


class AwkError(Exception):
    """A program the twin's awk cannot parse."""


class _Next(Exception):
    pass


class _Exit(Exception):
    pass


def to_num(v) -> float:
    """Return awk's numeric value of a string or number (its leading number, else 0)."""
    if isinstance(v, float):
        return v
    m = re.match(r"\s*[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+)", v)
    return float(m[0]) if m else 0.0


def to_str(v) -> str:
    """Return awk's string value (integers without a decimal point)."""
    if isinstance(v, str):
        return v
    return str(int(v)) if v == int(v) else f"{v:.6g}"


def _numeric(v) -> bool:
    return isinstance(v, float) or bool(_NUMERIC.fullmatch(v))


def truthy(v) -> bool:
    """Return awk's truth of a value."""
    return to_num(v) != 0 if _numeric(v) else v != ""


class State:
    """Variables and the current record's fields."""

    def __init__(self, fs: str, variables: dict[str, str]):
        self.vars: dict = {"FS": fs, "OFS": " ", "ORS": "\n", "NR": 0.0, **variables}
        self.fields, self.out = [""], []

    def get(self, name: str):
        """Return a variable (NF from the fields)."""
        return float(len(self.fields) - 1) if name == "NF" else self.vars.get(name, "")

    def set(self, name: str, value) -> None:
        """Set a variable."""
        self.vars[name] = value

    def record(self, line: str) -> None:
        """Split a new record into fields with FS."""
        fs = to_str(self.vars["FS"])
        parts = line.split() if fs == " " else re.split(fs if len(fs) > 1 else re.escape(fs), line) if line else []
        self.fields = [line, *parts]

    def field(self, i: int) -> str:
        """Return $i."""
        return self.fields[i] if 0 <= i < len(self.fields) else ""

    def set_field(self, i: int, value) -> None:
        """Assign $i (rebuilding $0 with OFS) or $0 (re-splitting)."""
        if i == 0:
            return self.record(to_str(value))
        self.fields += [""] * (i + 1 - len(self.fields))
        self.fields[i] = to_str(value)
        self.fields[0] = to_str(self.vars["OFS"]).join(self.fields[1:])


def tokenize(src: str) -> list[tuple[str, str]]:
    """Split an awk program into (kind, text) tokens; `/re/` is a regex where an operand may start."""
    tokens, i = [], 0
    while i < len(src):
        prev = tokens[-1] if tokens else ("op", "")
        if src[i] == "/" and prev[0] not in _OPERAND_END and prev[1] not in (")", "$", "++", "--"):
            j = i + 1
            while j < len(src) and src[j] != "/":
                j += 2 if src[j] == "\\" else 1
            tokens.append(("regex", src[i + 1:j]))
            i = j + 1
            continue
        m = _TOKEN.match(src, i)
        if not m:
            raise AwkError(src[i])
        if m.lastgroup != "ws":
            tokens.append((m.lastgroup, m[0]))
        i = m.end()
    return tokens + [("eof", "")]


class Parser:
    """Parse tokens into rules of (pattern, action) closures over a State."""

    def __init__(self, tokens: list[tuple[str, str]]):
        self.toks, self.pos, self.in_print = tokens, 0, False

    def peek(self, offset: int = 0) -> str:
        """Return the text of a coming token."""
        return self.toks[self.pos + offset][1]

    def take(self, expected: str | None = None) -> tuple[str, str]:
        """Consume a token (checking it is `expected`)."""
        tok = self.toks[self.pos]
        if expected is not None and tok[1] != expected or tok[0] == "eof" and expected != "":
            raise AwkError(tok[1] or "end of file")
        self.pos += 1
        return tok

    def skip(self, *texts: str) -> None:
        """Skip separators."""
        while self.peek() in texts and self.toks[self.pos][0] != "eof":
            self.pos += 1

    def program(self) -> list[tuple[str, object, object]]:
        """Parse rules: (kind "BEGIN"/"END"/"main", pattern or None, action or None)."""
        rules = []
        self.skip("\n", ";")
        while self.toks[self.pos][0] != "eof":
            kind = self.take()[1] if self.peek() in ("BEGIN", "END") else "main"
            pattern = self.expr() if kind == "main" and self.peek() != "{" else None
            action = self.block() if self.peek() == "{" else None
            rules.append((kind, pattern, action))
            self.skip("\n", ";")
        return rules

    def block(self):
        """Parse `{ statements }`."""
        self.take("{")
        stmts = []
        self.skip("\n", ";")
        while self.peek() != "}":
            stmts.append(self.statement())
            self.skip("\n", ";")
        self.take("}")
        return lambda st: [s(st) for s in stmts]

    def statement(self):
        """Parse print, printf, if, next, exit, a block or an expression."""
        word = self.peek()
        if word == "{":
            return self.block()
        if word in ("print", "printf"):
            self.take()
            self.in_print = True
            args = [] if self.peek() in (";", "\n", "}") else self.expr_list()
            self.in_print = False
            return _print(args) if word == "print" else _printf(args)
        if word == "if":
            self.take()
            self.take("(")
            cond = self.expr()
            self.take(")")
            self.skip("\n")
            then, other = self.statement(), None
            if self.peek() == "else" or (self.peek() in (";", "\n") and self.peek(1) == "else"):
                self.skip(";", "\n")
                self.take()
                self.skip("\n")
                other = self.statement()
            return lambda st: then(st) if truthy(cond(st)) else other(st) if other else None
        if word in ("next", "exit"):
            self.take()
            return _raiser(_Next if word == "next" else _Exit)
        return self.expr()

    def expr_list(self) -> list:
        """Parse `expr, expr, ...`."""
        args = [self.expr()]
        while self.peek() == ",":
            self.take()
            args.append(self.expr())
        return args

    def expr(self):
        """Parse an assignment or a ternary-free expression."""
        left = self.binary(0)
        op = self.peek()
        if op in ("=", "+=", "-=", "*=", "/=", "%=", "^=") and hasattr(left, "assign"):
            self.take()
            right = self.expr()
            apply = (lambda a, b: b) if op == "=" else lambda a, b: _ARITH[op[0]](to_num(a), to_num(b))
            return lambda st: left.assign(st, apply(left(st), right(st)))
        return left

    LEVELS = (("||",), ("&&",), ("~", "!~"), ("==", "!=", "<", "<=", ">", ">="), ("concat",), ("+", "-"),
              ("*", "/", "%"))

    def binary(self, level: int):
        """Parse the binary operators of precedence `level` and tighter."""
        if level == len(self.LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        ops = self.LEVELS[level]
        while True:
            op = self.peek()
            if ops == ("concat",):
                if not self.starts_operand():
                    return left
                right = self.binary(level + 1)
                left = (lambda a, b: lambda st: to_str(a(st)) + to_str(b(st)))(left, right)
                continue
            if op not in ops or (op == ">" and self.in_print):
                return left
            self.take()
            left = _binop(op, left, self.binary(level + 1))

    def starts_operand(self) -> bool:
        """Return whether the next token can begin a concatenated operand."""
        kind, word = self.toks[self.pos]
        return kind in ("num", "str", "regex") or word in ("$", "(", "!") or (kind == "name" and word not in (
            "in", "getline", "else"))

    def unary(self):
        """Parse `!x`, `-x`, `+x`, `++x`, then postfix `x++`."""
        op = self.peek()
        if op in ("!", "-", "+"):
            self.take()
            inner = self.unary()
            return {"!": lambda st: float(not truthy(inner(st))), "-": lambda st: -to_num(inner(st)),
                    "+": lambda st: to_num(inner(st))}[op]
        if op in ("++", "--"):
            self.take()
            target, step = self.unary(), 1.0 if op == "++" else -1.0
            return lambda st: target.assign(st, to_num(target(st)) + step)
        node = self.power()
        if self.peek() in ("++", "--") and hasattr(node, "assign"):
            step = 1.0 if self.take()[1] == "++" else -1.0
            return lambda st: (lambda old: (node.assign(st, old + step), old)[1])(to_num(node(st)))
        return node

    def power(self):
        """Parse `a ^ b` (right-associative)."""
        base = self.primary()
        if self.peek() == "^":
            self.take()
            exponent = self.unary()
            return lambda st: to_num(base(st)) ** to_num(exponent(st))
        return base

    def primary(self):
        """Parse a number, string, regex, field, variable, call or parenthesised expression."""
        kind, word = self.take()
        if kind == "num":
            return lambda st: float(word)
        if kind == "str":
            value = unescape(word[1:-1].replace('\\"', '"'))[0]
            return lambda st: value
        if kind == "regex":
            rx = re.compile(posix_regex(word, extended=True))
            node = lambda st: float(bool(rx.search(st.field(0))))  # noqa: E731
            node.regex = rx
            return node
        if word == "$":
            index = self.primary()
            return _lvalue(lambda st: st.field(int(to_num(index(st)))),
                           lambda st, v: st.set_field(int(to_num(index(st))), v))
        if word == "(":
            inner = self.expr()
            self.take(")")
            return inner
        if kind == "name" and word in _FUNCS:
            return self.call(word)
        if kind == "name":
            return _lvalue(lambda st: st.get(word), lambda st, v: st.set(word, v))
        raise AwkError(word or "end of file")

    def call(self, name: str):
        """Parse a builtin function call (`length` may go without parentheses)."""
        if self.peek() != "(":
            return lambda st: float(len(st.field(0)))
        self.take("(")
        args = [] if self.peek() == ")" else self.expr_list()
        self.take(")")
        fn = _FUNCS[name]
        return lambda st: fn([a(st) for a in args] or [st.field(0)])


def _raiser(exc: type[Exception]):
    def run(st):
        raise exc()
    return run


def _lvalue(get, set_):
    def node(st):
        return get(st)

    def assign(st, value):
        set_(st, value)
        return value
    node.assign = assign
    return node


def _binop(op: str, a, b):
    if op in ("~", "!~"):
        rx = getattr(b, "regex", None)
        want = op == "~"
        pattern = lambda st: rx or re.compile(posix_regex(to_str(b(st)), True))  # noqa: E731
        return lambda st: float(bool(pattern(st).search(to_str(a(st)))) == want)
    if op == "&&":
        return lambda st: float(truthy(a(st)) and truthy(b(st)))
    if op == "||":
        return lambda st: float(truthy(a(st)) or truthy(b(st)))
    if op in _COMPARE:
        def compare(st):
            x, y = a(st), b(st)
            both = _numeric(x) and _numeric(y)
            return float(_COMPARE[op](to_num(x), to_num(y)) if both else _COMPARE[op](to_str(x), to_str(y)))
        return compare
    return lambda st: _ARITH[op](to_num(a(st)), to_num(b(st)))


def _print(args):
    def run(st):
        values = [to_str(a(st)) for a in args] or [st.field(0)]
        st.out.append(to_str(st.vars["OFS"]).join(values) + to_str(st.vars["ORS"]))
    return run


def _printf(args):
    def run(st):
        values = [to_str(a(st)) for a in args]
        st.out.append(printf_format(values[0], values[1:], []) if values else "")
    return run


def run_program(src: str, lines: list[str], fs: str = " ", variables: dict[str, str] | None = None) -> str:
    """Run an awk program over lines; return its output.

    Example:
        >>> run_program('$2 > 1 {s += $2} END {print "sum", s}', ["a 1", "b 2", "c 3"])
        'sum 5\\n'
    """
    rules, st = Parser(tokenize(src)).program(), State(fs, variables or {})
    try:
        for kind, _, action in rules:
            if kind == "BEGIN" and action:
                action(st)
        for line in lines:
            st.vars["NR"] = to_num(st.vars["NR"]) + 1
            st.record(line)
            try:
                for kind, pattern, action in rules:
                    if kind == "main" and (pattern is None or truthy(pattern(st))):
                        action(st) if action else st.out.append(st.field(0) + to_str(st.vars["ORS"]))
            except _Next:
                continue
        for kind, _, action in rules:
            if kind == "END" and action:
                action(st)
    except _Exit:
        pass
    return "".join(st.out)


@program("awk", "mawk", "gawk", usage=2)
def awk(argv, ctx):
    """Run an awk program: awk [-F SEP] [-v VAR=VALUE] 'PROGRAM' [FILE]..."""
    opts, operands = getopt(argv, "", valued="Fvf")
    if not operands:
        return result("", ["usage: awk [-F value] [-v var=value] [--] 'program text' [file ...]"], code=2)
    variables = dict(v.split("=", 1) for v in opts.get("v") or [] if "=" in v)
    fs = opts.value("F", " ")
    fs = "\t" if fs == "t" else unescape(fs)[0]
    errors = []
    lines = [line for _, d in read_inputs("awk", operands[1:], ctx, errors, "{prog}: cannot open {name} (No such file "
                                          "or directory)") for line in split_lines(text(d))]
    try:
        return result(run_program(operands[0], lines, fs, variables), errors, fail=2)
    except AwkError as e:
        return result("", [f"awk: line 1: syntax error at or near {e}"], code=2)
