"""Parser for the POSIX shell subset the twin's containers run: tokens to a tree of commands."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aoi.shellsim.shell_lexer import ASSIGNMENT, NAME, REDIRECTS, Lexer, ShellSyntaxError, Token


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
class Case:
    word: str
    arms: list[tuple[list[str], Seq]]
    redirs: list = field(default_factory=list)


@dataclass
class FuncDef:
    name: str
    body: object
    redirs: list = field(default_factory=list)


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
        while self.peek().kind != "eof" and not self.is_word(*stops) and not self.is_op(")", ";;"):
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
        compound = {"if": self.if_, "for": self.for_, "while": self.while_, "until": self.while_, "{": self.group,
                    "case": self.case_}
        if self.peek().kind == "word" and self.peek().text in compound:
            node = compound[self.peek().text]()
        elif self.is_op("("):
            self.take()
            node = Group(self.seq(), True)
            if not self.is_op(")"):
                raise self.error(")")
            self.take()
        elif self.is_word("then", "else", "elif", "fi", "do", "done", "}", "in", "esac"):
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

    def case_(self) -> Case:
        """Parse `case WORD in PATTERN[|PATTERN]) LIST ;; ... esac`."""
        self.take()
        if self.peek().kind != "word":
            raise self.error()
        node = Case(self.take().text, [])
        self.skip_newlines()
        self.expect_word("in")
        self.skip_newlines()
        while not self.is_word("esac"):
            self.take() if self.is_op("(") else None
            patterns = [self.word()]
            while self.is_op("|"):
                self.take()
                patterns.append(self.word())
            if not self.is_op(")"):
                raise self.error(")")
            self.take()
            node.arms.append((patterns, self.seq(("esac",))))
            if not self.is_op(";;"):
                break
            self.take()
            self.skip_newlines()
        self.expect_word("esac")
        return node

    def word(self) -> str:
        """Consume a word token and return its text."""
        if self.peek().kind != "word":
            raise self.error()
        return self.take().text

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
