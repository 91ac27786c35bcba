"""The mongo shells' command lines: options, the db address or URI, and the connection string they print."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote

VALUED = {"--host", "--port", "-u", "--username", "-p", "--password", "--authenticationDatabase",
          "--authenticationMechanism", "--eval", "--tlsCAFile", "--sslCAFile", "--tlsCertificateKeyFile",
          "--sslPEMKeyFile", "--tlsCertificateKeyFilePassword", "--sslPEMKeyPassword", "--gssapiServiceName",
          "--apiVersion", "--tlsCRLFile", "--sslCRLFile", "--file", "-f"}
FLAGS = {"--quiet", "--tls", "--ssl", "--tlsAllowInvalidCertificates", "--sslAllowInvalidCertificates",
         "--tlsAllowInvalidHostnames", "--sslAllowInvalidHostnames", "--nodb", "--norc", "--shell", "--verbose",
         "-v", "--version", "--help", "-h", "--ipv6", "--disableImplicitSessions", "--retryWrites", "--json"}
ALIASES = {"--username": "-u", "--password": "-p", "--sslCAFile": "--tlsCAFile", "--ssl": "--tls",
           "--sslAllowInvalidCertificates": "--tlsAllowInvalidCertificates", "--file": "-f"}


class Usage(Exception):
    """A command line the shell rejects."""


@dataclass
class Options:
    """What the command line asks for."""

    host: str = "127.0.0.1"
    port: int = 27017
    db: str = "test"
    db_given: bool = False
    user: str | None = None
    pwd: str | None = None
    auth_db: str | None = None
    quiet: bool = False
    evals: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    tls: bool = False
    tls_ca: str = ""
    insecure: bool = False
    nodb: bool = False
    shell: bool = False
    version: bool = False
    help: bool = False
    params: list[tuple[str, str]] = field(default_factory=list)  # URI options to echo

    @property
    def auth_source(self) -> str | None:
        """Return the database credentials are checked against."""
        if self.auth_db or self.user is None:
            return self.auth_db
        return self.db if self.db_given else "admin"


def parse(argv: list[str], modern: bool) -> Options:
    """Parse a mongo/mongosh command line; raise Usage for unknown options."""
    opts, args, i = Options(), argv[1:], 0
    while i < len(args):
        word, i = args[i], i + 1
        name, eq, value = word.partition("=") if word.startswith("--") else (word, "", "")
        name = ALIASES.get(name, name)
        if name in VALUED:
            if not eq:
                value, i = (args[i], i + 1) if i < len(args) and not (name == "-p" and args[i].startswith("-")) \
                    else (None, i)
            _valued(opts, name, value, modern)
        elif name in FLAGS:
            _flag(opts, name)
        elif word.startswith("-") and word != "-":
            raise Usage(f"unrecognised option '{word}'")
        elif word.endswith(".js") and not word.startswith("mongodb"):
            opts.files.append(word)
        else:
            address(opts, word)
    return opts


def _valued(opts: Options, name: str, value: str | None, modern: bool) -> None:
    if value is None and name != "-p":
        raise Usage(f"required parameter is missing in '{name}'")
    if name == "--host":
        address(opts, value, host_only=True)
    elif name == "--port":
        if not value.isdigit():
            raise Usage(f"the argument ('{value}') for option '--port' is invalid")
        opts.port = int(value)
    elif name in ("-u", "-p", "--authenticationDatabase", "--eval", "--tlsCAFile", "-f"):
        attr = {"-u": "user", "-p": "pwd", "--authenticationDatabase": "auth_db", "--tlsCAFile": "tls_ca"}.get(name)
        if name == "--eval":
            opts.evals.append(value)
        elif name == "-f":
            opts.files.append(value)
        else:
            setattr(opts, attr, value)


def _flag(opts: Options, name: str) -> None:
    key = {"--quiet": "quiet", "--tls": "tls", "--tlsAllowInvalidCertificates": "insecure", "--nodb": "nodb",
           "--shell": "shell", "--version": "version", "--help": "help", "-h": "help"}.get(name)
    if key:
        setattr(opts, key, True)


def address(opts: Options, text: str, host_only: bool = False) -> None:
    """Read a db address: `db`, `host[:port]/db`, or a mongodb:// URI (credentials, authSource, tls)."""
    if text.startswith(("mongodb://", "mongodb+srv://")):
        return _uri(opts, text)
    if host_only:
        _hosts(opts, text.split("/")[-1])  # `set/host1,host2` names a replica set first
    elif "/" in text:
        hosts, _, db = text.partition("/")
        _hosts(opts, hosts)
        if db:
            opts.db, opts.db_given = db, True
    else:
        opts.db, opts.db_given = text, True
    return None


def _hosts(opts: Options, text: str) -> None:
    first = text.split(",")[0]
    host, sep, port = first.rpartition(":")
    if sep and port.isdigit():
        opts.host, opts.port = host, int(port)
    elif first:
        opts.host = first


def _uri(opts: Options, text: str) -> None:
    rest = text.split("://", 1)[1]
    rest, _, query = rest.partition("?")
    rest, _, db = rest.partition("/")
    creds, at, hosts = rest.rpartition("@")
    if at:
        user, _, pwd = creds.partition(":")
        opts.user, opts.pwd = unquote(user), unquote(pwd) if pwd else opts.pwd
    _hosts(opts, hosts)
    if db:
        opts.db, opts.db_given = unquote(db), True
    for key, value in parse_qsl(query):
        if key == "authSource":
            opts.auth_db = value
        elif key in ("tls", "ssl"):
            opts.tls = value == "true"
        elif key in ("tlsAllowInvalidCertificates", "tlsInsecure"):
            opts.insecure = value == "true"
        else:
            opts.params.append((key, value))


def shown_uri(opts: Options, modern: bool) -> str:
    """Return the connection string the shell prints after `connecting to:`."""
    path = opts.db if opts.db_given else ""
    params = ([("directConnection", "true"), ("serverSelectionTimeoutMS", "2000")] if modern else [])
    params += opts.params + ([("authSource", opts.auth_source)] if opts.auth_source else [])
    params += [("appName", "mongosh+2.2.10")] if modern else [("compressors", "disabled"),
                                                              ("gssapiServiceName", "mongodb")]
    creds = "<credentials>@" if modern and opts.user is not None else ""
    query = "&".join(f"{k}={v}" for k, v in params)
    return f"mongodb://{creds}{opts.host}:{opts.port}/{path}?{query}"
