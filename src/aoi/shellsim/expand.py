"""Word expansion for the twin's shell: parameters, command substitution, arithmetic, field splitting, globs."""

from __future__ import annotations

import fnmatch
import re

from aoi.shellsim.limits import WORD_LIMIT, StepLimit
from aoi.shellsim.shell_lexer import NAME, scan_dollar, scan_dquote, scan_quote

_BLANKS = re.compile(r"[ \t\n]+")
_PARAM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*|\d+|[?#@*$!0-])(:?[-=+?]|##?|%%?)?(.*)", re.S)
_GLOB = re.compile(r"[*?[]")


class ExpansionError(Exception):
    """An expansion that stops the command, such as ${VAR:?message}."""


class Fields:
    """Collect the fields a word expands to; chunks remember whether they were quoted (for globbing)."""

    def __init__(self, split: bool = True):
        self.split, self.fields, self.cur = split, [], None

    def add(self, text: str, quoted: bool) -> None:
        """Append literal text to the current field (starting one)."""
        if self.cur is None:
            self.cur = []
        self.cur.append((text, quoted))

    def add_expansion(self, text: str) -> None:
        """Append the result of an unquoted expansion, splitting it on blanks (one at a time: a huge expansion
        stops at WORD_LIMIT words, not after making them all)."""
        if not self.split:
            return self.add(text, True)
        start = 0
        for blank in _BLANKS.finditer(text):
            if blank.start() > start:
                self.add(text[start:blank.start()], True)
            self.end()
            start = blank.end()
        if start < len(text):
            self.add(text[start:], True)

    def end(self) -> None:
        """Close the current field."""
        if self.cur is not None:
            self.fields.append(self.cur)
            self.cur = None
            check_words(len(self.fields))

    def done(self) -> list[list[tuple[str, bool]]]:
        """Return the fields."""
        self.end()
        return self.fields


class Expander:
    """Expand words against a shell (its variables, positional parameters and command substitution)."""

    def __init__(self, shell):
        self.sh = shell

    def words(self, words: list[str]) -> list[str]:
        """Expand command words: split fields and match globs against the container's files."""
        out = []
        for word in words:
            for chunks in self.fields(word, split=True):
                out.extend(self.glob(chunks))
            check_words(len(out))
        return out

    def string(self, word: str) -> str:
        """Expand a word to one string (assignments, redirection targets, case words)."""
        return "".join(t for chunks in self.fields(word, split=False) for t, _ in chunks)

    def pattern(self, word: str) -> str:
        """Expand a word into an fnmatch pattern: quoted parts match literally."""
        chunks = [c for field in self.fields(word, split=False) for c in field]
        return "".join(t if not q else _escape_glob(t) for t, q in chunks)

    def fields(self, word: str, split: bool) -> list[list[tuple[str, bool]]]:
        """Expand a word into fields of (text, quoted) chunks."""
        f, i = Fields(split), 0
        while i < len(word):
            c = word[i]
            if c == "'":
                j = scan_quote(word, i + 1)
                f.add(word[i + 1:j - 1], True)
            elif c == '"':
                j = scan_dquote(word, i + 1)
                self.dquote(word[i + 1:j - 1], f)
            elif c == "\\":
                j = i + 2
                f.add(word[i + 1:j].replace("\n", ""), True)  # backslash-newline joins lines
            elif word.startswith("$@", i):
                j = i + 2
                self.at(f, False)
            elif c in "$`":
                value, j = self.dollar(word, i)
                f.add_expansion(value)
            elif c == "~" and i == 0 and word[1:2] in ("", "/"):
                j = i + 1
                f.add(self.sh.get("HOME") or "/root", True)
            else:
                j = min([k for k in (word.find(ch, i) for ch in "'\"\\$`") if k >= 0] + [len(word)])
                f.add(word[i:j], False)
            i = j
        return f.done()

    def dquote(self, inner: str, f: Fields) -> None:
        """Expand the inside of double quotes: no splitting, "$@" one field per argument."""
        if inner in ("$@", "${@}"):
            return self.at(f, True)
        f.add("", True)
        i = 0
        while i < len(inner):
            c = inner[i]
            if c == "\\" and inner[i + 1:i + 2] in ("$", "`", '"', "\\", "\n"):
                f.add(inner[i + 1].replace("\n", ""), True)
                i += 2
            elif c in "$`":
                value, i = self.dollar(inner, i)
                f.add(value, True)
            else:
                j = min([k for k in (inner.find(ch, i + 1) for ch in "\\$`") if k >= 0] + [len(inner)])
                f.add(inner[i:j], True)
                i = j

    def at(self, f: Fields, quoted: bool) -> None:
        """Add the positional parameters as separate fields."""
        for n, arg in enumerate(self.sh.args):
            if n:
                f.end()
            f.add(arg, True) if quoted else f.add_expansion(arg)

    def dollar(self, s: str, i: int) -> tuple[str, int]:
        """Expand the $-construct (or backquote) at `i`; return its value and the index after it."""
        if s[i] == "`":
            j = scan_dollar(s, i)
            return self.sh.substitute(re.sub(r"\\([$`\\])", r"\1", s[i + 1:j - 1])), j
        nxt = s[i + 1:i + 2]
        if nxt in ("(", "{"):
            j = scan_dollar(s, i)
            if s.startswith("$((", i) and s[j - 2:j] == "))":
                return self.arith(s[i + 3:j - 2]), j
            return (self.sh.substitute(s[i + 2:j - 1]) if nxt == "(" else self.param(s[i + 2:j - 1])), j
        m = NAME.match(s, i + 1)
        if m:
            return self.sh.get(m[0]) or "", m.end()
        if nxt and (nxt.isdigit() or nxt in "?#@*$!-"):
            return self.sh.get(nxt) or "", i + 2
        return "$", i + 1

    def param(self, expr: str) -> str:
        """Expand ${...}: ${#V}, ${V:-w}, ${V-w}, ${V:=w}, ${V:+w}, ${V:?w}, ${V#p}, ${V##p}, ${V%p}, ${V%%p}."""
        if expr.startswith("#") and len(expr) > 1:
            return str(len(self.sh.get(expr[1:]) or ""))
        bash = self.bash_param(expr) if self.sh.bash else None
        if bash is not None:
            return bash
        m = _PARAM.fullmatch(expr)
        if not m or (m[3] and not m[2]):
            raise ExpansionError(f"${{{expr}}}: Bad substitution")
        name, op, word = m[1], m[2] or "", m[3]
        value = self.sh.get(name)
        unset = value is None or (op.startswith(":") and value == "")
        if op in ("-", ":-"):
            return self.string(word) if unset else value
        if op in ("=", ":="):
            if unset:
                self.sh.assign(name, self.string(word))
            return self.sh.get(name) or ""
        if op in ("+", ":+"):
            return "" if unset else self.string(word)
        if op in ("?", ":?"):
            if unset:
                raise ExpansionError(f"{name}: {self.string(word) or 'parameter not set'}")
            return value
        return _trim(value or "", op, self.string(word)) if op else value or ""

    def bash_param(self, expr: str) -> str | None:
        """Expand bash's ${V/p/r}, ${V//p/r} and ${V:offset[:length]}; None for other forms."""
        m = re.fullmatch(r"([A-Za-z_]\w*)(//?)([^/]*)(?:/(.*))?", expr, re.S)
        if m:
            pattern = fnmatch.translate(self.pattern(m[3])).removesuffix(r"\Z")
            replacement = self.string(m[4] or "")
            return re.sub(pattern, lambda _: replacement, self.sh.get(m[1]) or "", count=0 if m[2] == "//" else 1)
        m = re.fullmatch(r"([A-Za-z_]\w*):(\d+|\s+-\d+)(?::(\d+))?", expr)
        if m:
            value, start = self.sh.get(m[1]) or "", int(m[2])
            return value[start:][:int(m[3])] if m[3] else value[start:]
        return None

    def arith(self, expr: str) -> str:
        """Evaluate $((...)) with integer arithmetic, as far as Python's operators agree with C's."""
        text = self.string(expr.replace('"', ""))
        text = NAME.sub(lambda m: str(_int(self.sh.get(m[0]))), text)
        if not re.fullmatch(r"[\d\s+\-*/%()<>=!&|^~]*", text) or "**" in text or re.search(r"\d{19}", text):
            raise ExpansionError(f"arithmetic expression: expecting primary: \"{expr.strip()}\"")
        py = re.sub(r"!(?!=)", " not ", text.replace("&&", " and ").replace("||", " or ")).replace("/", "//")
        try:
            value = int(eval(py, {"__builtins__": {}}, {}))
        except ZeroDivisionError:
            raise ExpansionError("arithmetic expression: division by zero") from None
        except Exception:  # noqa: BLE001 - any malformed expression is a shell error
            raise ExpansionError(f"arithmetic expression: expecting primary: \"{expr.strip()}\"") from None
        return str((value + 2**63) % 2**64 - 2**63)

    def glob(self, chunks: list[tuple[str, bool]]) -> list[str]:
        """Match an unquoted pattern against the container's files; no match leaves the word as written."""
        text = "".join(t for t, _ in chunks)
        if not any(not q and _GLOB.search(t) for t, q in chunks):
            return [text]
        pattern = "".join(t if not q else _escape_glob(t) for t, q in chunks)
        found = ["/" if pattern.startswith("/") else ""]
        for segment in (s for s in pattern.split("/") if s):
            found = [_join(base, name) for base in found for name in self.matches(base, segment)]
        hits = sorted(f for f in found if self.sh.ctx.exists(f))
        return hits or [text]

    def matches(self, base: str, segment: str) -> list[str]:
        """Return the names in directory `base` matching one path segment (a literal segment as it is)."""
        if not _GLOB.search(segment):
            return [segment]
        ctx = self.sh.ctx
        names = ctx.list_dir(base or ".") if ctx.is_dir(base or ".") else []
        hidden = segment.startswith(".")
        return [n for n in names if fnmatch.fnmatchcase(n, segment) and (hidden or not n.startswith("."))]


def check_words(count: int) -> None:
    """Stop the script when an expansion makes more than WORD_LIMIT words."""
    if count > WORD_LIMIT:
        raise StepLimit(f"stopped: an expansion made more than {WORD_LIMIT} words: Argument list too long (the "
                        "simulated shell's limit: narrow what the command prints)")


def _join(base: str, name: str) -> str:
    return name if not base else base + name if base.endswith("/") else f"{base}/{name}"


def _escape_glob(text: str) -> str:
    return re.sub(r"([*?[])", r"[\1]", text)


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


def _trim(value: str, op: str, pattern: str) -> str:
    """Remove the shortest/longest prefix (#, ##) or suffix (%, %%) matching a glob pattern."""
    cuts = range(len(value) + 1)
    if op == "#" or op == "##":
        for k in (reversed(cuts) if op == "##" else cuts):
            if fnmatch.fnmatchcase(value[:k], pattern):
                return value[k:]
        return value
    for k in (cuts if op == "%%" else reversed(cuts)):
        if fnmatch.fnmatchcase(value[k:], pattern):
            return value[:k]
    return value
