"""`mongo` (the 4.4 shell) and `mongosh`: connect like a client, authenticate, run --eval, script files or stdin."""

from __future__ import annotations

import re

from aoi.shellsim.context import ExecResult
from aoi.twin.behaviour.programs.basics import hex_id, rng_for, uuid_text
from aoi.twin.behaviour.programs.common import LOCAL_NAMES, Dial, behaviour_of, dial, pod_ip, serving_ports
from aoi.twin.behaviour.programs.jsparse import JSSyntaxError, parse
from aoi.twin.behaviour.programs.mongo_args import Options, Usage, shown_uri
from aoi.twin.behaviour.programs.mongo_args import parse as parse_args
from aoi.twin.behaviour.programs.mongo_commands import Conn
from aoi.twin.behaviour.programs.mongo_eval import Interp, JSError, Quit
from aoi.twin.behaviour.programs.mongo_shell import SHELL_VERSION, Shell

CONNECT_TAIL = ["connect@src/mongo/shell/mongo.js:374:17", "@(connect):2:6", "exception: connect failed",
                "exiting with code 1"]
HELPERS = re.compile(r"(^|;)[ \t]*(use|show)[ \t]+([\w.$-]+)[ \t]*(?=;|$)", re.M)
NO_AUTH_WARNING = ["---", "The server generated these startup warnings when booting: ",
                   "        {t}: Access control is not enabled for the database. Read and write access to data and "
                   "configuration is unrestricted", "---"]


class Run:
    """The output of one shell process."""

    def __init__(self):
        self.out: list[str] = []
        self.err: list[str] = []

    def result(self, code: int, shell: Shell | None = None) -> ExecResult:
        stdout = "".join(line + "\n" for line in self.out) + "".join(shell.lines if shell else [])
        return ExecResult(stdout.encode(), "".join(line + "\n" for line in self.err).encode(), code)


def mongo(twin, argv: list[str], ctx) -> ExecResult:
    """The MongoDB 4.4 shell."""
    return main(twin, argv, ctx, modern=False)


def mongosh(twin, argv: list[str], ctx) -> ExecResult:
    """The MongoDB Shell (mongosh 2.x)."""
    return main(twin, argv, ctx, modern=True)


def main(twin, argv: list[str], ctx, modern: bool) -> ExecResult:
    """Parse, connect, authenticate and run what the command line asks."""
    run = Run()
    try:
        opts = parse_args(argv, modern)
    except Usage as e:
        name = "mongosh" if modern else "mongo"
        run.err += [f"Error parsing command line: {e}", f"try '{name} --help' for more information"]
        return run.result(2)
    if opts.version or opts.help:
        run.out.append("2.2.10" if modern else f"MongoDB shell version v{SHELL_VERSION}")
        return run.result(0)
    if opts.user is not None and opts.pwd is None:
        opts.pwd = ctx.stdin.decode(errors="replace").split("\n", 1)[0]  # "Enter password:" reads the terminal
    _banner(run, opts, modern, ctx)
    conn = connect(twin, ctx, opts, modern, run)
    if conn is None:
        return run.result(1)
    if not opts.quiet and not modern:
        run.out += [f'Implicit session: session {{ "id" : UUID("{conn.lsid}") }}',
                    f"MongoDB server version: {SHELL_VERSION}"]
    shell = Shell(conn, opts.db, modern, f"{ctx.pod['metadata'].get('uid')}|{' '.join(argv)}|{ctx.now}")
    try:
        code = _modes(shell, opts, ctx, modern, run)
    except Quit as q:
        code = q.code
    return run.result(code, shell)


def _banner(run: Run, opts: Options, modern: bool, ctx) -> None:
    if opts.quiet:
        return
    if modern:
        run.out += [f"Current Mongosh Log ID:\t{hex_id(rng_for('log', ctx.now, ctx.hostname), 24)}",
                    f"Connecting to:\t\t{shown_uri(opts, True)}"]
    else:
        run.out += [f"MongoDB shell version v{SHELL_VERSION}", f"connecting to: {shown_uri(opts, False)}"]


def connect(twin, ctx, opts: Options, modern: bool, run: Run) -> Conn | None:
    """Open the connection and log in; print what the shell prints when that fails."""
    state = twin.extensions.mongo
    if opts.host in LOCAL_NAMES or opts.host in (pod_ip(ctx.pod), ctx.hostname):
        server, pod = state.server(ctx.pod), ctx.pod
        up = server is not None and server.port == opts.port and \
            (server.initializing or opts.port in serving_ports(twin, pod))
        reach = Dial(up, "" if up else "refused", opts.host, "127.0.0.1", opts.port, pod)
    else:
        reach = dial(twin, ctx, opts.host, opts.port)
        server, pod = (state.server(reach.pod) if reach.ok else None), reach.pod
    problem = _problem(reach, server, opts, ctx)
    if problem:
        run.err += _failure(problem, reach, opts, modern)
        return None
    rng = rng_for("lsid", ctx.now, ctx.hostname, opts.host, opts.evals, opts.files)
    conn = Conn(twin, pod, server, state.data(server.volume), pod is ctx.pod, ctx.now, lsid=uuid_text(rng),
                inserted=twin.extensions.mongo_docs)
    if opts.user is not None:
        conn.user = conn.data.authenticate(opts.user, opts.pwd or "", opts.auth_source)
        if conn.user is None:
            _log_auth_failure(twin, pod, opts, ctx.now)
            run.err += _failure("auth", reach, opts, modern)
            return None
    if not opts.quiet and modern:
        run.out += ["Using MongoDB:\t\t4.4.6", "Using Mongosh:\t\t2.2.10", "",
                    "For mongosh info see: https://www.mongodb.com/docs/mongodb-shell/", ""]
    return conn


def _problem(reach: Dial, server, opts: Options, ctx) -> str:
    """Return why the connection cannot be used ("" when it can)."""
    if not reach.ok:
        return reach.error
    if server is None or (server.tls_mode == "requireTLS" and not opts.tls) or \
            (server.tls_mode == "disabled" and opts.tls):
        return "closed"  # not a mongod, or one side speaks TLS and the other does not
    if opts.tls and not opts.insecure and not (opts.tls_ca and ctx.is_file(opts.tls_ca)):
        return "certificate"
    return ""


def _failure(problem: str, reach: Dial, opts: Options, modern: bool) -> list[str]:
    """Return the lines a failed connection prints."""
    host, port = opts.host, opts.port
    where = f"{host}:{port}" + (f" ({reach.ip}:{port})" if reach.ip and reach.ip != host else "")
    if modern:
        return [{"refused": f"MongoNetworkError: connect ECONNREFUSED {reach.ip or host}:{port}",
                 "unresolved": f"MongoNetworkError: getaddrinfo ENOTFOUND {host}",
                 "timeout": "MongoServerSelectionError: Server selection timed out after 2000 ms",
                 "closed": f"MongoServerSelectionError: connection <monitor> to {reach.ip or host}:{port} closed",
                 "certificate": "MongoServerSelectionError: self-signed certificate in certificate chain",
                 "auth": "MongoServerError: Authentication failed."}[problem]]
    prefix = f"Error: couldn't connect to server {host}:{port}, connection attempt failed: "
    message = {"refused": f"{prefix}SocketException: Error connecting to {where} :: caused by :: Connection refused",
               "unresolved": f"{prefix}HostNotFound: Could not find address for {host}:{port}: SocketException: "
                             "Host not found (authoritative)",
               "timeout": f"{prefix}NetworkTimeout: Error connecting to {where} :: caused by :: Socket operation "
                          "timed out",
               "closed": f"Error: network error while attempting to run command 'isMaster' on host '{host}:{port}' ",
               "certificate": f"{prefix}SSLHandshakeFailed: SSL peer certificate validation failed: self signed "
                              "certificate in certificate chain",
               "auth": "Error: Authentication failed."}[problem]
    return [f"{message} :"] + CONNECT_TAIL


def _log_auth_failure(twin, pod: dict, opts: Options, now: float) -> None:
    """Write the mongod's ACCESS line for a failed login."""
    behaviour = behaviour_of(twin)
    for c in pod["spec"]["containers"]:
        proc = behaviour.process(pod, c["name"])
        if proc is not None and proc.program == "mongod":
            known = twin.extensions.mongo.data(twin.extensions.mongo.server(pod).volume).users
            reason = ("AuthenticationFailed: SCRAM authentication failed, storedKey mismatch"
                      if (opts.auth_source, opts.user) in known else
                      f'UserNotFound: Could not find user "{opts.user}" for db "{opts.auth_source}"')
            behaviour.log(pod, c["name"], now, behaviour.by_name[proc.app], "mongod", "I", "ACCESS",
                          f"Authentication failed: {reason}")


def _modes(shell: Shell, opts: Options, ctx, modern: bool, run: Run) -> int:
    """Run --eval, then script files; read statements from stdin when neither is given."""
    for text in opts.evals:
        if not script(shell, text, "(shell eval)", modern, run, show=True):
            return 1
    for path in opts.files:
        if not ctx.is_file(path):
            run.err += [f"file [{path}] doesn't exist", f"failed to load: {path}", "exiting with code -3"]
            return 253
        if not script(shell, ctx.read(path).decode(errors="replace"), path, modern, run, show=False):
            run.err += [f"failed to load: {path}", "exiting with code -3"]
            return 253
    if (opts.evals or opts.files) and not opts.shell:
        return 0
    _interactive(shell, opts, ctx, modern, run)
    return 0


def script(shell: Shell, src: str, where: str, modern: bool, run: Run, show: bool) -> bool:
    """Parse and run a script; print its value (for --eval) or its uncaught exception."""
    if modern or where == "(shell)":
        src = HELPERS.sub(lambda m: f'{m[1]}__{m[2]}("{m[3]}")', src)
    try:
        value = Interp(shell.vars).run(parse(src))
    except JSSyntaxError as e:
        run.err += _uncaught(f"SyntaxError: {e}", (), where, (e.line, e.col), modern)
        return False
    except JSError as e:
        run.err += _uncaught(e.text(), e.stack, where, e.pos or (1, 1), modern)
        return False
    if show:
        shell.show_result(value)
    return True


def _uncaught(text: str, stack, where: str, pos: tuple[int, int], modern: bool) -> list[str]:
    if modern:
        return [text]
    return [f"uncaught exception: {text} :", *stack, f"@{where}:{pos[0]}:{pos[1]}"]


def _interactive(shell: Shell, opts: Options, ctx, modern: bool, run: Run) -> None:
    """Read statements from stdin as the shell does without a terminal; say bye at the end."""
    if not opts.quiet and not modern and not shell.conn.server.auth:
        shell.lines += [line.replace("{t}", "2025-06-02T09:00:03.118+00:00") + "\n" for line in NO_AUTH_WARNING]
    buffer = ""
    for line in ctx.stdin.decode(errors="replace").split("\n"):
        buffer += line + "\n"
        if not buffer.strip():
            buffer = ""
            continue
        try:
            parse(HELPERS.sub(lambda m: f'{m[1]}__{m[2]}("{m[3]}")', buffer))
        except JSSyntaxError as e:
            if "end of script" in str(e) or "missing }" in str(e) or "missing ]" in str(e):
                continue
        script(shell, buffer, "(shell)", modern, run, show=True)
        buffer = ""
    if not modern:
        shell.lines.append("bye\n")
