"""Shell tokenizer: words (quotes kept for the expander), operators and here-documents."""

from __future__ import annotations

import re
from dataclasses import dataclass

OPERATORS = ("&&", "||", ";;", "<<-", "<<", ">>", ">&", "<&", "&>", ">|", "|", "&", ";", "(", ")", "<", ">", "\n")
REDIRECTS = {"<", ">", ">>", ">&", "<&", "&>", ">|", "<<", "<<-"}
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_META = set(" \t\n;&|<>()")


class ShellSyntaxError(Exception):
    """A script the shell cannot parse; `token` is the offender ("" for an unexpected end of file)."""

    def __init__(self, token: str, line: int, expecting: str = ""):
        super().__init__(token)
        self.token, self.line, self.expecting = token, line, expecting


@dataclass
class Token:
    kind: str  # "word", "op", "io" (a redirection's fd number) or "eof"
    text: str
    line: int
    body: str | None = None  # a here-document's text, on its delimiter word


def scan_quote(s: str, i: int) -> int:
    """Return the index after the single quote closing the string opened before `i`."""
    j = s.find("'", i)
    if j < 0:
        raise ShellSyntaxError("Unterminated quoted string", 0)
    return j + 1


def scan_dquote(s: str, i: int) -> int:
    """Return the index after the double quote closing the string opened before `i`."""
    while i < len(s):
        c = s[i]
        if c == '"':
            return i + 1
        i = i + 2 if c == "\\" else scan_dollar(s, i) if c in "$`" else i + 1
    raise ShellSyntaxError("Unterminated quoted string", 0)


def scan_dollar(s: str, i: int) -> int:
    """Return the index after the $(...), ${...} or `...` starting at `i` (i + 1 for a plain `$`)."""
    if s[i] == "`":
        j = i + 1
        while j < len(s) and s[j] != "`":
            j += 2 if s[j] == "\\" else 1
        if j >= len(s):
            raise ShellSyntaxError("", 0, "`")
        return j + 1
    opener = s[i + 1:i + 2]
    if opener not in ("(", "{"):
        return i + 1
    closer, depth, j = ")" if opener == "(" else "}", 1, i + 2
    while j < len(s):
        c = s[j]
        if c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return j + 1
        j = (scan_quote(s, j + 1) if c == "'" else scan_dquote(s, j + 1) if c == '"' else j + 2 if c == "\\"
             else scan_dollar(s, j) if c in "$`" and s[j + 1:j + 2] in ("(", "{") or c == "`" else j + 1)
    raise ShellSyntaxError("", 0, closer)


class Lexer:
    """Split shell source into words and operators, reading here-documents after their line."""

    def __init__(self, src: str):
        self.src, self.i, self.line = src, 0, 1
        self.tokens: list[Token] = []
        self.heredocs: list[tuple[Token, bool]] = []

    def run(self) -> list[Token]:
        """Return the tokens, ending with an "eof" token."""
        src = self.src
        while self.i < len(src):
            c = src[self.i]
            if c in " \t":
                self.i += 1
            elif src.startswith("\\\n", self.i):
                self.i, self.line = self.i + 2, self.line + 1
            elif c == "#":
                end = src.find("\n", self.i)
                self.i = len(src) if end < 0 else end
            elif c in _META:
                self.operator()
            else:
                self.word()
        self.tokens.append(Token("eof", "", self.line))
        return self.tokens

    def operator(self) -> None:
        """Read the longest operator at the cursor."""
        op = next(o for o in OPERATORS if self.src.startswith(o, self.i))
        self.tokens.append(Token("op", op, self.line))
        self.i += len(op)
        if op == "\n":
            self.line += 1
            self.read_heredocs()

    def word(self) -> None:
        """Read one word, keeping its quotes for the expander."""
        start, src = self.i, self.src
        try:
            while self.i < len(src) and src[self.i] not in _META:
                c = src[self.i]
                self.i = (scan_quote(src, self.i + 1) if c == "'" else scan_dquote(src, self.i + 1) if c == '"'
                          else self.i + 2 if c == "\\" else scan_dollar(src, self.i) if c in "$`" else self.i + 1)
        except ShellSyntaxError as e:
            raise ShellSyntaxError(e.token, self.line, e.expecting) from None
        text = src[start:self.i]
        kind = "io" if text.isdigit() and src[self.i:self.i + 1] in ("<", ">") else "word"
        self.tokens.append(Token(kind, text, self.line))
        if len(self.tokens) > 1 and self.tokens[-2].text in ("<<", "<<-") and self.tokens[-2].kind == "op":
            self.heredocs.append((self.tokens[-1], self.tokens[-2].text == "<<-"))
        self.line += text.count("\n")

    def read_heredocs(self) -> None:
        """Read the bodies of the here-documents opened on the line just ended."""
        for token, strip_tabs in self.heredocs:
            delimiter, lines = re.sub(r"[\"'\\]", "", token.text), []
            while self.i < len(self.src):
                end = self.src.find("\n", self.i)
                end = len(self.src) if end < 0 else end
                line, self.i, self.line = self.src[self.i:end], end + 1, self.line + 1
                line = line.lstrip("\t") if strip_tabs else line
                if line == delimiter:
                    break
                lines.append(line + "\n")
            token.body = "".join(lines)
        self.heredocs = []
