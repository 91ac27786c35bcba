"""The shell interpreter: variables, control flow, pipelines, functions and command lookup."""

from __future__ import annotations

import copy
import fnmatch
import shlex

from aoi.shellsim import shell_builtins as builtins
from aoi.shellsim.context import ExecContext
from aoi.shellsim.expand import Expander, ExpansionError, check_words
from aoi.shellsim.limits import DEPTH_LIMIT, SIZE_LIMIT, STEP_LIMIT, SUBST_LIMIT, StepLimit, size
from aoi.shellsim.shell_builtins import LoopControl, ReturnSignal, ShellExit
from aoi.shellsim.shell_io import IO, Stdin, redirected
from aoi.shellsim.shell_lexer import ASSIGNMENT, NAME
from aoi.shellsim.shell_syntax import (
    AndOr,
    Case,
    For,
    FuncDef,
    Group,
    If,
    Pipeline,
    Seq,
    ShellSyntaxError,
    Simple,
    While,
    parse,
)

__all__ = ["STEP_LIMIT", "Shell", "StepLimit"]  # the limits live in aoi.shellsim.limits; these stay importable here
DECLARATIONS = ("export", "local", "readonly", "declare", "typeset")  # their NAME=value arguments are not split


class Shell:
    """Interpreter state: variables, positional parameters, options, functions and the current directory."""

    def __init__(self, ctx: ExecContext, arg0: str, args: list[str], bash: bool, command_mode: bool = True):
        self.ctx, self.arg0, self.args, self.bash, self.command_mode = ctx, arg0, list(args), bash, command_mode
        self.vars = {k: v for k, v in ctx.env.items() if NAME.fullmatch(k)}
        self.exported = set(self.vars)
        self.passthrough = {k: v for k, v in ctx.env.items() if k not in self.vars}  # e.g. CFG_app.yaml: no variable
        self.vars.setdefault("PWD", ctx.cwd)
        self.funcs: dict[str, object] = {}
        self.status, self.line, self.conditional, self.depth, self.subst_status = 0, 1, 0, 0, 0
        self.errexit = self.xtrace = self.pipefail = False
        self.out_limit, self.out_name = SIZE_LIMIT, "the output"  # a command substitution captures less
        self.io, self.expander = IO(Stdin(), bytearray(), bytearray()), Expander(self)

    # --- variables -------------------------------------------------------------------------------------------
    def get(self, name: str) -> str | None:
        """Return a variable or special parameter ($?, $#, $1...), None when unset."""
        if name.isdigit():
            n = int(name)
            return self.arg0 if n == 0 else self.args[n - 1] if n <= len(self.args) else None
        special = {"?": str(self.status), "#": str(len(self.args)), "@": " ".join(self.args), "*": " ".join(self.args),
                   "$": str(max([p for p, _, _ in self.ctx.processes] + [0]) + 1), "!": "", "-": self.flags()}
        return special[name] if name in special else self.vars.get(name)

    def flags(self) -> str:
        """Return $- (the option letters set)."""
        return "e" * self.errexit + "x" * self.xtrace + "h"

    def assign(self, name: str, value: str, export: bool = False) -> None:
        """Set a variable (and export it); stop the script when the value grows past SIZE_LIMIT."""
        if len(value) > SIZE_LIMIT:
            raise StepLimit(f"stopped: variable {name} grew past {size(SIZE_LIMIT)}: Cannot allocate memory (does a "
                            "loop never end?)")
        self.vars[name] = value
        if export:
            self.exported.add(name)

    def environ(self) -> dict[str, str]:
        """Return the environment exported to programs."""
        return self.passthrough | {k: v for k, v in self.vars.items() if k in self.exported}

    def prefix(self) -> str:
        """Return how the shell starts an error message: `sh: 3: ` or `bash: line 3: `."""
        return f"{self.arg0}: line {self.line}: " if self.bash else f"{self.arg0}: {self.line}: "

    def error(self, io: IO, message: str) -> None:
        """Write an error message with the shell's prefix."""
        io.err += f"{self.prefix()}{message}\n".encode()

    # --- running ---------------------------------------------------------------------------------------------
    def run_source(self, src: str, io: IO, catch_exit: bool = True) -> int:
        """Parse and run `src`; return its status (2 on a syntax error); `exit` ends it unless `catch_exit` is off."""
        try:
            tree = parse(src)
        except ShellSyntaxError as e:
            io.err += self.syntax_message(e).encode()
            self.status = 2
            return 2
        try:
            return self.run_tree(tree, io)
        except (ShellExit, ReturnSignal, LoopControl) as e:
            if not catch_exit:
                raise
            self.status = e.status if not isinstance(e, LoopControl) else self.status  # stray break: ignored
            return self.status

    def run_tree(self, tree, io: IO) -> int:
        """Run a parsed script; an expansion error outside a simple command (a `for` list, a `case` word) exits the
        shell, as it does inside one."""
        try:
            return self.execute(tree, io)
        except ExpansionError as e:
            self.error(io, str(e))
            raise ShellExit(2 if not self.bash else 1) from None

    def syntax_message(self, e: ShellSyntaxError) -> str:
        """Word a syntax error as dash or bash would."""
        line = e.line or self.line
        if self.bash:
            where = f"{self.arg0}: -c: line {line}: " if self.command_mode else f"{self.arg0}: line {line}: "
            return where + (f"syntax error near unexpected token `{e.token}'\n" if e.token
                            else "syntax error: unexpected end of file\n")
        what = (f'"{e.token}" unexpected' if e.token and "quoted" not in e.token else e.token if e.token
                else "end of file unexpected" + (f' (expecting "{e.expecting}")' if e.expecting else ""))
        return f"{self.arg0}: {line}: Syntax error: {what}\n"

    def tick(self) -> None:
        """Count one command against the step limit."""
        self.ctx.steps[0] += 1
        if self.ctx.watchdog is not None:
            self.ctx.watchdog()
        if self.ctx.steps[0] > STEP_LIMIT:
            raise StepLimit()
        self.check_output(self.io.out)
        if len(self.io.err) > SIZE_LIMIT:
            raise StepLimit(f"stopped: the error output grew past {size(SIZE_LIMIT)}")

    def check_output(self, out: bytearray) -> None:
        """Stop the script once an output passes its limit (SIZE_LIMIT; SUBST_LIMIT for a substitution)."""
        if len(out) > self.out_limit:
            raise StepLimit(f"stopped: {self.out_name} grew past {size(self.out_limit)}: Cannot allocate memory "
                            "(the simulated shell's limit: narrow what the command prints)")

    def execute(self, node, io: IO) -> int:
        """Run any node, applying its redirections."""
        handler = getattr(self, "exec_" + type(node).__name__.lower())
        redirs = getattr(node, "redirs", None)
        if not redirs or isinstance(node, Simple):
            return handler(node, io)
        return redirected(self, redirs, io, lambda rio: handler(node, rio))

    def exec_seq(self, node: Seq, io: IO) -> int:
        """Run commands one after another."""
        for item in node.items:
            self.execute(item, io)
        return self.status

    def exec_andor(self, node: AndOr, io: IO) -> int:
        """Run `a && b || c`; all but the last pipeline are conditions (set -e ignores them)."""
        status = 0
        for i, (op, pipe) in enumerate(node.parts):
            if (op == "&&" and status != 0) or (op == "||" and status == 0):
                continue
            status = self.exec_pipeline(pipe, io, condition=i < len(node.parts) - 1)
        return status

    def exec_pipeline(self, pipe: Pipeline, io: IO, condition: bool = False) -> int:
        """Run `a | b | c`, each stage's output the next one's input; honour `!` and set -e."""
        guarded = condition or pipe.negate
        self.conditional += guarded
        try:
            statuses, data = [], io.stdin
            for i, cmd in enumerate(pipe.cmds):
                out = io.out if i == len(pipe.cmds) - 1 else bytearray()
                statuses.append(self.execute(cmd, IO(data, out, io.err)))
                data = Stdin(bytes(out))
        finally:
            self.conditional -= guarded
        status = next((s for s in reversed(statuses) if s), 0) if self.pipefail else statuses[-1]
        self.status = int(status == 0) if pipe.negate else status
        if self.status and self.errexit and not self.conditional and not guarded:
            raise ShellExit(self.status)
        return self.status

    def exec_simple(self, node: Simple, io: IO) -> int:
        """Expand and run one command with its prefix assignments and redirections."""
        self.line, self.io = node.line, io
        self.tick()
        self.subst_status = 0
        try:
            argv = self.expand_argv(node.words)
            assigns = [(a.split("=", 1)[0], self.expander.string(a.split("=", 1)[1])) for a in node.assigns]
        except ExpansionError as e:
            self.error(io, str(e))
            raise ShellExit(2 if not self.bash else 1) from None
        if not argv:
            for name, value in assigns:
                self.assign(name, value)
            self.status = redirected(self, node.redirs, io, lambda rio: self.subst_status)
            return self.status
        self.status = redirected(self, node.redirs, io, lambda rio: self.invoke(argv, dict(assigns), rio))
        return self.status

    def expand_argv(self, words: list[str]) -> list[str]:
        """Expand a command's words; `export X=$v` keeps its value whole, as assignments do."""
        declaration, argv = bool(words) and words[0] in DECLARATIONS, []
        for word in words:
            if declaration and ASSIGNMENT.match(word):
                argv.append(self.expander.string(word))
            else:
                argv.extend(self.expander.words([word]))
                check_words(len(argv))
        return argv

    def exec_if(self, node: If, io: IO) -> int:
        """Run the first branch whose condition succeeds."""
        for cond, body in node.branches:
            if self.condition(cond, io) == 0:
                return self.execute(body, io)
        self.status = self.execute(node.orelse, io) if node.orelse else 0
        return self.status

    def exec_for(self, node: For, io: IO) -> int:
        """Run the body once per word."""
        self.io = io  # the word list's substitutions write their errors here
        words = self.expander.words(node.words) if node.words is not None else list(self.args)
        self.status = 0
        for word in words:
            self.tick()
            self.assign(node.var, word)
            if self.loop_body(node.body, io) == "break":
                break
        return self.status

    def exec_while(self, node: While, io: IO) -> int:
        """Run the body while (or until) the condition succeeds."""
        status = 0
        while True:
            self.tick()
            if (self.condition(node.cond, io) == 0) == node.until:
                break
            if self.loop_body(node.body, io) == "break":
                break
            status = self.status
        self.status = status
        return status

    def exec_group(self, node: Group, io: IO) -> int:
        """Run `{ ...; }` here or `( ... )` in a subshell."""
        if not node.subshell:
            return self.execute(node.body, io)
        sub = self.subshell()
        try:
            self.status = sub.execute(node.body, io)
        except ShellExit as e:
            self.status = e.status
        return self.status

    def exec_case(self, node: Case, io: IO) -> int:
        """Run the first arm with a pattern matching the word."""
        word = self.expander.string(node.word)
        for patterns, body in node.arms:
            if any(fnmatch.fnmatchcase(word, self.expander.pattern(p)) for p in patterns):
                return self.execute(body, io)
        self.status = 0
        return 0

    def exec_funcdef(self, node: FuncDef, io: IO) -> int:
        """Define a function."""
        self.funcs[node.name] = node.body
        self.status = 0
        return 0

    def condition(self, cond: Seq, io: IO) -> int:
        """Run a condition list (set -e does not apply inside it)."""
        self.conditional += 1
        try:
            return self.execute(cond, io)
        finally:
            self.conditional -= 1

    def loop_body(self, body: Seq, io: IO) -> str:
        """Run a loop body; return "break" or "" as break/continue ask."""
        try:
            self.execute(body, io)
        except LoopControl as e:
            if e.levels > 1:
                raise LoopControl(e.kind, e.levels - 1) from None
            return e.kind if e.kind == "break" else ""
        return ""

    def subshell(self) -> Shell:
        """Return a copy whose variable changes do not leak back."""
        sub = copy.copy(self)
        sub.vars, sub.exported, sub.funcs = dict(self.vars), set(self.exported), dict(self.funcs)
        sub.args, sub.expander = list(self.args), Expander(sub)  # its expansions read its own variables
        return sub

    def substitute(self, src: str) -> str:
        """Run $(...) in a subshell; return its output without trailing newlines (StepLimit past SUBST_LIMIT)."""
        sub = self.subshell()
        sub.out_limit, sub.out_name = min(self.out_limit, SUBST_LIMIT), "a command substitution's output"
        sub.io = IO(Stdin(), bytearray(), self.io.err)  # what its limit checks, from the first command on
        status = sub.run_source(src, sub.io)
        sub.check_output(sub.io.out)
        self.subst_status = self.status = status
        return sub.io.out.decode("utf-8", "surrogateescape").rstrip("\n")

    # --- commands --------------------------------------------------------------------------------------------
    def invoke(self, argv: list[str], env: dict[str, str], io: IO) -> int:
        """Run a function, builtin or program with `env` added to its environment."""
        if self.xtrace:
            io.err += ("+ " + " ".join(shlex.quote(a) if self.bash else a for a in argv) + "\n").encode()
        name = argv[0]
        if name in self.funcs:
            return self.call_function(argv, io)
        builtin = builtins.lookup(name, self.bash)
        if builtin is not None:
            saved = {name: self.vars.get(name) for name in env}
            self.vars.update(env)  # `IFS=/ read a b`: the assignments hold for this builtin only
            try:
                self.status = builtin(self, argv, io)
            finally:
                for name, value in saved.items():
                    self.vars.pop(name) if value is None else self.vars.__setitem__(name, value)
            return self.status
        program = self.ctx.resolve(name)
        if program is None:
            return self.missing(name, io)
        ctx = self.ctx.with_(env=self.environ() | env, stdin=io.stdin.rest())
        result = program(argv, ctx)
        io.out += result.stdout
        io.err += result.stderr
        self.status = result.exit_code
        return self.status

    def missing(self, name: str, io: IO) -> int:
        """Report a command that cannot be found (127) or run (126)."""
        if "/" in name and self.ctx.is_file(name):
            self.error(io, f"{name}: Permission denied")
            self.status = 126
            return 126
        slash = "/" in name
        self.error(io, f"{name}: " + ("No such file or directory" if self.bash and slash else
                                      "command not found" if self.bash else "not found"))
        self.status = 127
        return 127

    def call_function(self, argv: list[str], io: IO) -> int:
        """Run a shell function with its own positional parameters."""
        if self.depth >= DEPTH_LIMIT:
            self.error(io, f"{argv[0]}: maximum function nesting level exceeded ({DEPTH_LIMIT})")
            raise ShellExit(2)
        saved, self.args = self.args, argv[1:]
        self.depth += 1
        try:
            self.status = self.execute(self.funcs[argv[0]], io)
        except ReturnSignal as r:
            self.status = r.status
        finally:
            self.args, self.depth = saved, self.depth - 1
        return self.status

