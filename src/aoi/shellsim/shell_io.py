"""Shell I/O: standard input, output buffers and redirections (`<`, `>`, `>>`, `2>&1`, `&>`, here-documents)."""

from __future__ import annotations

import errno
from dataclasses import dataclass

from aoi.shellsim.shell_syntax import Redir


class Stdin:
    """A shell's standard input: commands see what is left, `read` consumes a line."""

    def __init__(self, data: bytes = b""):
        self.data, self.pos = data, 0

    def rest(self) -> bytes:
        """Return the unread input."""
        return self.data[self.pos:]

    def readline(self) -> bytes | None:
        """Consume one line (None at end of input)."""
        if self.pos >= len(self.data):
            return None
        end = self.data.find(b"\n", self.pos)
        end = len(self.data) if end < 0 else end + 1
        line, self.pos = self.data[self.pos:end], end
        return line


@dataclass
class IO:
    stdin: Stdin
    out: bytearray
    err: bytearray


class RedirectError(Exception):
    """A redirection that cannot be opened; the message is the shell's."""



def redirected(sh, redirs: list[Redir], io: IO, body) -> int:
    """Open the redirections, run `body(io)`, then write what went to files."""
    pending: list[tuple[str, bytearray]] = []
    try:
        rio = open_redirects(sh, redirs, io, pending)
    except RedirectError as e:
        io.err += f"{sh.prefix()}{e}\n".encode()
        sh.status = 1 if sh.bash else 2
        return sh.status
    try:
        return body(rio)
    finally:
        for path, buf in pending:
            try:
                sh.ctx.write(path, bytes(buf), append=True)
            except OSError as e:  # the simulated disk is full (limits.FILE_LIMIT)
                io.err += f"{sh.prefix()}{path}: {e.strerror}\n".encode()


def open_redirects(sh, redirs: list[Redir], io: IO, pending: list) -> IO:
    """Return the IO the redirections make, left to right (`>f 2>&1` and `2>&1 >f` differ)."""
    fds = {0: io.stdin, 1: io.out, 2: io.err}
    for r in redirs:
        if r.op in ("<<", "<<-"):
            fds[r.fd] = Stdin((r.target if r.quoted else sh.expander.string(heredoc_word(r.target))).encode())
            continue
        target = sh.expander.string(r.target)
        if r.op in (">&", "<&") and (target.isdigit() or target == "-"):
            fds[r.fd] = bytearray() if target == "-" else fds.get(int(target), bytearray())
        elif r.op == "<":
            fds[r.fd] = Stdin(read_for_redirect(sh, target))
        else:
            fds[r.fd] = open_write(sh, target, r.op == ">>", fds, pending)
            if r.op in ("&>", ">&"):
                fds[2] = fds[1]
    return IO(*(fds[n] for n in (0, 1, 2)))


def read_for_redirect(sh, target: str) -> bytes:
    """Return a file's content for `< file`, or raise the shell's error."""
    try:
        return sh.ctx.read(target)
    except OSError as e:
        raise RedirectError(f"{target}: {e.strerror}" if sh.bash else f"cannot open {target}: No such file") \
            from None


def open_write(sh, target: str, append: bool, fds: dict, pending: list) -> bytearray:
    """Truncate (or keep, for >>) a file for output and return the buffer its writes collect in."""
    if target in ("/dev/stdout", "/dev/stderr"):
        return fds[1 if target == "/dev/stdout" else 2]
    buf = bytearray()
    if sh.ctx.path(target) == "/dev/null":
        return buf
    try:
        sh.ctx.write(target, b"", append=True) if append else sh.ctx.write(target, b"")
    except OSError as e:
        reason = "Directory nonexistent" if e.errno == errno.ENOENT else e.strerror
        raise RedirectError(f"{target}: {e.strerror}" if sh.bash else f"cannot create {target}: {reason}") \
            from None
    pending.append((target, buf))
    return buf


def heredoc_word(body: str) -> str:
    """Quote a here-document body so expansion keeps its quotes and only expands $ and backquotes."""
    quoted = body.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + quoted.replace("\\\\$", "\\$").replace("\\\\`", "\\`") + '"'
