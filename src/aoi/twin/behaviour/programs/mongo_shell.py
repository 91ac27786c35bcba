"""One shell session: globals, printing (4.4 shell or mongosh), `use`, `show`, and errors as each shell shows them."""

from __future__ import annotations

from aoi.twin.behaviour.programs import mongo_commands
from aoi.twin.behaviour.programs.mongo_collection import Collection, Cursor, Printed
from aoi.twin.behaviour.programs.mongo_eval import Fn, Host, JSError, Quit, arg, constructors
from aoi.twin.behaviour.programs.mongo_objects import DB, RS, Mongo
from aoi.twin.behaviour.programs.mongo_values import UNDEFINED, inspect, to_text, tojson

SHELL_VERSION = "4.4.6"
UTILS = "_getErrorWithCode@src/mongo/shell/utils.js:25:13"


class Shell:
    """What a script sees: `db`, `rs`, print helpers; output is collected in `lines`."""

    def __init__(self, conn, db: str, modern: bool, seed: str):
        self.conn, self.modern, self.lines = conn, modern, []
        self.vars = {**constructors(seed), "rs": RS(self), "print": Fn("print", self._print),
                     "printjson": Fn("printjson", self._printjson), "tojson": Fn("tojson", lambda a: tojson(a[0])),
                     "quit": Fn("quit", _quit), "exit": Fn("exit", _quit), "sleep": Fn("sleep", lambda a: UNDEFINED),
                     "version": Fn("version", lambda a: SHELL_VERSION),
                     "hostname": Fn("hostname", lambda a: conn.pod["metadata"]["name"] if conn else ""),
                     "__use": Fn("use", lambda a: self.use(str(a[0]))),
                     "__show": Fn("show", lambda a: self.show(str(a[0])))}
        if conn is not None:
            self.vars["db"] = DB(self, db)

    # --- output ---
    def emit(self, text: str) -> None:
        """Print one line."""
        self.lines.append(text + "\n")

    def _print(self, args):
        self.emit(" ".join(inspect(a) if self.modern and not isinstance(a, str) else to_text(a) for a in args))
        return UNDEFINED

    def _printjson(self, args):
        value = arg(args, 0, UNDEFINED)
        shown = self.render(value) if isinstance(value, Host) else (inspect(value) if self.modern else tojson(value))
        self.emit(shown if shown is not None else "undefined")
        return UNDEFINED

    def show_result(self, value) -> None:
        """Print an expression's value as the shell does after evaluating it (shellPrintHelper)."""
        try:
            text = self.render(value)
        except JSError as e:
            text = e.text()  # DBQuery.shellPrint catches and prints errors
        if text is not None:
            self.emit(text)

    def render(self, value) -> str | None:
        """Return how the shell shows a value (None: shows nothing)."""
        if value is UNDEFINED:
            return None
        if isinstance(value, Cursor):
            return self._cursor(value)
        if isinstance(value, Printed):
            return value.text
        if isinstance(value, DB):
            return value.name
        if isinstance(value, Collection):
            return f"{value.db.name}.{value.name}"
        if isinstance(value, (Mongo, RS)):
            return f"connection to {self.conn.pod['metadata']['name']}:27017"
        if isinstance(value, Fn):
            return f"function {value.name}() {{\n    [native code]\n}}"
        if isinstance(value, str):
            return value
        return inspect(value) if self.modern else tojson(value)

    def _cursor(self, cursor: Cursor) -> str:
        docs = cursor.fetch()
        more = ['Type "it" for more'] if len(docs) > 20 else []
        if self.modern:
            return "\n".join([inspect(docs[:20])] + more)
        shown = [tojson(d) if cursor.pretty else tojson(d, "", True) for d in docs[:20]]
        return "\n".join(shown + more) if shown or more else None

    # --- server calls ---
    def command(self, db: str, cmd: dict, shown: dict | None = None) -> dict:
        """Send a command to the server."""
        return mongo_commands.run(self.conn, db, cmd, shown)

    def error(self, res: dict, message: str, stack: tuple[str, ...]) -> JSError:
        """Return the exception a failed command raises (`_getErrorWithCode`, or mongosh's MongoServerError)."""
        if self.modern:
            return JSError(res.get("errmsg", message), f"MongoServerError[{res.get('codeName', 'Error')}]")
        return JSError(message, "Error", (UTILS,) + stack, response=res)

    def checked(self, res: dict, soft: bool = False) -> dict:
        """Return a response; mongosh throws failed ones, the 4.4 shell returns them (soft) or throws."""
        if res.get("ok") or (soft and not self.modern):
            return res
        raise self.error(res, res.get("errmsg", ""), ())

    def login(self, db: str, user: str, pwd: str):
        """db.auth(): 1 or 0 in the 4.4 shell, { ok: 1 } or an exception in mongosh."""
        found = self.conn.data.authenticate(user, pwd, db)
        if found is not None:
            self.conn.user = found
            return {"ok": 1} if self.modern else 1
        if self.modern:
            raise JSError("Authentication failed.", "MongoServerError[AuthenticationFailed]")
        self.emit("Error: Authentication failed.")
        return 0

    def list_databases(self, name_only: bool) -> list[dict]:
        """Run listDatabases; raise 'listDatabases failed:{...}' as Mongo.prototype.getDBs does."""
        res = self.command("admin", {"listDatabases": 1, "nameOnly": name_only})
        if not res.get("ok"):
            raise self.error(res, "listDatabases failed:" + tojson(res), (
                "Mongo.prototype.getDBs/<@src/mongo/shell/mongo.js:147:19",
                "Mongo.prototype.getDBs@src/mongo/shell/mongo.js:99:12"))
        return res["databases"]

    # --- helpers typed at the prompt ---
    def use(self, name: str):
        """`use name`."""
        self.vars["db"] = DB(self, name)
        self.emit(f"switched to db {name}")
        return UNDEFINED

    def show(self, what: str):
        """`show dbs|databases|collections|tables|users`."""
        db = self.vars["db"]
        if what in ("dbs", "databases"):
            self._show_dbs(self.list_databases(name_only=False))
        elif what in ("collections", "tables"):
            for name in db.js_getCollectionNames([]):
                self.emit(name)
        elif what == "users":
            users = db.js_getUsers([])
            for user in users["users"] if isinstance(users, dict) else users:
                self.emit(inspect(user) if self.modern else tojson(user))
        else:
            raise JSError(f"don't know how to show [{what}]", stack=("shellHelper.show@src/mongo/shell/utils.js:"
                                                                      "1191:11",))
        return UNDEFINED

    def _show_dbs(self, databases: list[dict]) -> None:
        width = max((len(d["name"]) for d in databases), default=0)
        if self.modern:
            sizes = [f"{d['sizeOnDisk'] / 1024:.2f} KiB" for d in databases]
            right = max((len(s) for s in sizes), default=0)
            for d, size in zip(databases, sizes):
                self.emit(f"{d['name'].ljust(width)}  {size.rjust(right)}")
            return
        for d in databases:
            size = f"{d['sizeOnDisk'] / 1024 ** 3:.3f}GB" if d["sizeOnDisk"] > 1 else "(empty)"
            self.emit(d["name"] + " " * (width - len(d["name"]) + 2) + size)


def _quit(args):
    raise Quit(int(arg(args, 0, 0) or 0))
