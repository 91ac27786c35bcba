"""Tokenizer and parser for the POSIX shell subset the twin's containers run."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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


@dataclass
class Redir:
    op: str
    fd: int
    target: str  # a word, or a here-document's body
    quoted: bool = False  # a here-document whose delimiter was quoted is not expanded


@dataclass
class Simple:
    words: list[str]
    assigns: list[str]
    redirs: list[Redir]
    line: int


@dataclass
class Pipeline:
    cmds: list
    negate: bool = False


@dataclass
class AndOr:
    parts: list[tuple[str, Pipeline]]  # (operator before it: "", "&&" or "||", pipeline)


@dataclass
class Seq:
    items: list


@dataclass
class If:
    branches: list[tuple[Seq, Seq]]
    orelse: Seq | None
    redirs: list = field(default_factory=list)


@dataclass
class For:
    var: str
    words: list[str] | None  # None: the positional parameters
    body: Seq
    redirs: list = field(default_factory=list)


@dataclass
class While:
    cond: Seq
    body: Seq
    until: bool
    redirs: list = field(default_factory=list)


@dataclass
class Group:
    body: Seq
    subshell: bool
    redirs: list = field(default_factory=list)


@dataclass
class FuncDef:
    name: str
    body: object
    redirs: list = field(default_factory=list)


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


class Parser:
    """Recursive-descent parser from tokens to a tree of Seq, AndOr, Pipeline, Simple and compound nodes."""

    def __init__(self, tokens: list[Token]):
        self.tokens, self.pos = tokens, 0

    def peek(self) -> Token:
        """Return the next token."""
        return self.tokens[self.pos]

    def take(self) -> Token:
        """Consume and return the next token."""
        self.pos += 1
        return self.tokens[self.pos - 1]

    def is_op(self, *ops: str) -> bool:
        """Return whether the next token is one of `ops`."""
        return self.peek().kind == "op" and self.peek().text in ops

    def is_word(self, *words: str) -> bool:
        """Return whether the next token is the (unquoted) reserved word among `words`."""
        return self.peek().kind == "word" and self.peek().text in words

    def expect_word(self, word: str) -> None:
        """Consume reserved word `word` or fail as the shell would."""
        if not self.is_word(word):
            raise self.error(word)
        self.take()

    def error(self, expecting: str = "") -> ShellSyntaxError:
        """Return the syntax error for the next token."""
        tok = self.peek()
        return ShellSyntaxError("" if tok.kind == "eof" else tok.text, tok.line, expecting)

    def skip_newlines(self) -> None:
        """Skip blank lines."""
        while self.is_op("\n"):
            self.take()

    def seq(self, stops: tuple[str, ...] = ()) -> Seq:
        """Parse commands up to a reserved word in `stops`, a `)` or the end."""
        items = []
        self.skip_newlines()
        while self.peek().kind != "eof" and not self.is_word(*stops) and not self.is_op(")"):
            items.append(self.and_or())
            if not self.is_op(";", "&", "\n"):
                break
            self.take()
            self.skip_newlines()
        return Seq(items)

    def and_or(self) -> AndOr:
        """Parse pipelines joined by && and ||."""
        parts = [("", self.pipeline())]
        while self.is_op("&&", "||"):
            op = self.take().text
            self.skip_newlines()
            parts.append((op, self.pipeline()))
        return AndOr(parts)

    def pipeline(self) -> Pipeline:
        """Parse `[!] cmd | cmd ...`."""
        negate = self.is_word("!") and bool(self.take())
        cmds = [self.command()]
        while self.is_op("|"):
            self.take()
            self.skip_newlines()
            cmds.append(self.command())
        return Pipeline(cmds, negate)

    def command(self):
        """Parse a compound or simple command with its redirections."""
        compound = {"if": self.if_, "for": self.for_, "while": self.while_, "until": self.while_, "{": self.group}
        if self.peek().kind == "word" and self.peek().text in compound:
            node = compound[self.peek().text]()
        elif self.is_op("("):
            self.take()
            node = Group(self.seq(), True)
            if not self.is_op(")"):
                raise self.error(")")
            self.take()
        elif self.is_word("then", "else", "elif", "fi", "do", "done", "}", "in"):
            raise self.error()
        else:
            return self.simple()
        while self.peek().kind == "io" or self.is_op(*REDIRECTS):
            node.redirs.append(self.redirect())
        return node

    def simple(self):
        """Parse assignments, words and redirections (or a function definition)."""
        node = Simple([], [], [], self.peek().line)
        while True:
            tok = self.peek()
            if tok.kind == "io" or self.is_op(*REDIRECTS):
                node.redirs.append(self.redirect())
            elif tok.kind == "word" and not node.words and ASSIGNMENT.match(tok.text):
                node.assigns.append(self.take().text)
            elif tok.kind == "word":
                node.words.append(self.take().text)
                if len(node.words) == 1 and not node.assigns and self.is_op("(") and NAME.fullmatch(tok.text):
                    return self.function(tok.text)
            else:
                break
        if not (node.words or node.assigns or node.redirs):
            raise self.error()
        return node

    def function(self, name: str) -> FuncDef:
        """Parse `name() body` after its name."""
        self.take()
        if not self.is_op(")"):
            raise self.error(")")
        self.take()
        self.skip_newlines()
        return FuncDef(name, self.command())

    def redirect(self) -> Redir:
        """Parse `[n]op target`."""
        fd = int(self.take().text) if self.peek().kind == "io" else None
        op = self.take().text
        if self.peek().kind != "word":
            raise self.error()
        target = self.take()
        fd = fd if fd is not None else 0 if op in ("<", "<&", "<<", "<<-") else 1
        if op in ("<<", "<<-"):
            return Redir(op, fd, target.body or "", quoted=bool(re.search(r"[\"'\\]", target.text)))
        return Redir(op, fd, target.text)

    def if_(self) -> If:
        """Parse if/elif/else/fi."""
        branches, orelse = [], None
        self.take()
        while True:
            cond = self.seq(("then",))
            self.expect_word("then")
            branches.append((cond, self.seq(("elif", "else", "fi"))))
            if not self.is_word("elif"):
                break
            self.take()
        if self.is_word("else"):
            self.take()
            orelse = self.seq(("fi",))
        self.expect_word("fi")
        return If(branches, orelse)

    def for_(self) -> For:
        """Parse `for NAME [in WORDS]; do ...; done`."""
        self.take()
        if self.peek().kind != "word" or not NAME.fullmatch(self.peek().text):
            raise self.error()
        var, words = self.take().text, None
        self.skip_newlines()
        if self.is_word("in"):
            self.take()
            words = []
            while self.peek().kind == "word":
                words.append(self.take().text)
        if self.is_op(";"):
            self.take()
        return For(var, words, self.do_block())

    def while_(self) -> While:
        """Parse `while|until COND; do ...; done`."""
        until = self.take().text == "until"
        cond = self.seq(("do",))
        return While(cond, self.do_block(), until)

    def do_block(self) -> Seq:
        """Parse `do ...; done`."""
        self.skip_newlines()
        self.expect_word("do")
        body = self.seq(("done",))
        self.expect_word("done")
        return body

    def group(self) -> Group:
        """Parse `{ ...; }`."""
        self.take()
        body = self.seq(("}",))
        self.expect_word("}")
        return Group(body, False)


def parse(src: str) -> Seq:
    """Parse shell source into a Seq; raise ShellSyntaxError.

    Example:
        >>> parse("echo hi | wc -l").items[0].parts[0][1].cmds[1].words
        ['wc', '-l']
    """
    parser = Parser(Lexer(src).run())
    tree = parser.seq()
    if parser.peek().kind != "eof":
        raise parser.error()
    return tree
