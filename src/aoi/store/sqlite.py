"""The trajectory store: finished episodes in SQLite (WAL), one transaction per episode, safe for several processes.

Each `save` is one `BEGIN IMMEDIATE ... COMMIT`, so a crash (even SIGKILL mid-write) loses at most the episode in
flight and never leaves a partial row. With `synchronous=NORMAL` in WAL mode a process crash loses nothing committed;
only a power loss may drop the last commits (the file still never corrupts). Every call opens its own connection, so
threads and processes share a store by path; writers wait for each other up to `busy_timeout` seconds.
The messages of each model call are kept once per store, compressed (aoi.store.messages); `data` keeps their keys
and is itself zlib-compressed JSON since schema 2 (a BLOB; older rows are JSON text and read as they are).
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import orjson

from aoi.store import messages
from aoi.tasks import succeeded
from aoi.trajectory import Trajectory

COLUMNS = ("id", "problem_id", "task_type", "family", "target", "backend", "seed", "attempt", "model", "adapter",
           "success", "strict_success", "started_at", "ended_at", "steps_count", "input_tokens", "output_tokens",
           "error", "data")


def _create_v1(conn: sqlite3.Connection) -> None:
    """Create the episodes table and its indexes (schema 0 -> 1)."""
    conn.execute("""CREATE TABLE episodes (
        id TEXT PRIMARY KEY, problem_id TEXT NOT NULL, task_type TEXT NOT NULL, family TEXT, target TEXT,
        backend TEXT, seed INTEGER, attempt INTEGER, model TEXT, adapter TEXT, success INTEGER NOT NULL,
        strict_success INTEGER, started_at REAL, ended_at REAL, steps_count INTEGER, input_tokens INTEGER,
        output_tokens INTEGER, error TEXT, data TEXT NOT NULL)""")
    conn.execute("CREATE INDEX episodes_problem_attempt ON episodes (problem_id, attempt)")
    conn.execute("CREATE INDEX episodes_model ON episodes (model)")


# MIGRATIONS[i] takes a database from schema version i to i + 1 (kept in PRAGMA user_version). To change the schema,
# append a function; never edit one that has shipped.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_create_v1, messages.create_tables]
SCHEMA_VERSION = len(MIGRATIONS)


class StoreError(RuntimeError):
    """The store cannot be used as asked (a newer schema, no WAL support)."""


def _row(traj: Trajectory) -> tuple[tuple, dict[str, bytes]]:
    """Return the column values of one trajectory (COLUMNS order) and the message bodies its steps reference."""
    tokens_in, tokens_out = traj.tokens()
    strict = None if traj.strict_success is None else int(bool(traj.strict_success))
    # a deep copy, as the JSON it is stored as (6x cheaper than to_dict's): detaching the messages leaves the
    # trajectory as it was
    record = orjson.loads(orjson.dumps(traj, default=str, option=orjson.OPT_NON_STR_KEYS))
    bodies = messages.detach(record)
    data = zlib.compress(orjson.dumps(record, option=orjson.OPT_NON_STR_KEYS), messages.LEVEL)
    return (traj.id, traj.problem_id, traj.task_type, traj.family, traj.target, traj.backend, traj.seed,
            traj.attempt, traj.policy.model, traj.policy.adapter, int(succeeded(traj.results)), strict,
            traj.started_at, traj.ended_at, len(traj.steps), tokens_in, tokens_out, traj.error, data), bodies


def _record(data: str | bytes) -> dict:
    """Return the record a `data` value holds: compressed JSON (schema 2) or JSON text (older rows)."""
    return orjson.loads(zlib.decompress(data) if isinstance(data, bytes) else data)


def _load(conn: sqlite3.Connection, datas: list[str | bytes]) -> list[Trajectory]:
    """Rebuild trajectories from stored `data` values, their steps' messages read back from the message table."""
    return [Trajectory.from_dict(record) for record in messages.attach(conn, map(_record, datas))]


def _summary(row: dict) -> dict:
    """Turn the stored 0/1 verdicts of a summary row back into booleans."""
    for key in ("success", "strict_success"):
        row[key] = None if row[key] is None else bool(row[key])
    return row


def _where(**filters) -> tuple[str, list]:
    """Return a WHERE clause and its parameters for the filters that are not None."""
    given = {k: (int(v) if isinstance(v, bool) else v) for k, v in filters.items() if v is not None}
    if not given:
        return "", []
    return " WHERE " + " AND ".join(f"{k} = ?" for k in given), list(given.values())


class TrajectoryStore:
    """Finished episodes in one SQLite file.

    Example:
        >>> store = TrajectoryStore("runs/trajectories.db")  # doctest: +SKIP
        >>> store.save(traj); store.count(problem_id=traj.problem_id)  # doctest: +SKIP
        1
    """

    def __init__(self, path: str | Path, busy_timeout: float = 30.0,
                 before_commit: Callable[[sqlite3.Connection, Trajectory], None] | None = None,
                 readonly: bool = False):
        """Open (creating and migrating when needed) the store at `path`.

        Args:
            path: the database file; its folder is created.
            busy_timeout: seconds a write waits for another process's write before failing.
            before_commit: called inside save's transaction just before COMMIT (tests use it to crash there).
            readonly: only read an existing store of the current schema (viewers): nothing is created or migrated,
                and every write fails.
        """
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self.before_commit = before_commit
        self.readonly = readonly
        if readonly:
            self._check_readable()
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._open()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):  # locked, unreadable: the message says it already
                raise
            raise StoreError(f"{self.path} is not a usable SQLite store ({exc}); point store.path (AOI_STORE) at "
                             f"another file") from exc

    def _open(self) -> None:
        """Switch the file to WAL mode and migrate its schema."""
        with self._connect() as conn:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode.lower() != "wal":
                raise StoreError(f"{self.path}: SQLite refused WAL mode (got {mode!r}); put the store on a local "
                                 f"disk (store.path in aoi.yaml or AOI_STORE)")
            self._migrate(conn)

    def _check_readable(self) -> None:
        """Refuse, for reading only, a missing store or one whose schema is not this AOI's."""
        if not self.path.is_file():
            raise StoreError(f"no trajectory store at {self.path}")
        try:
            version = self.schema_version()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a usable SQLite store ({exc})") from exc
        if version != SCHEMA_VERSION:
            raise StoreError(f"{self.path} has schema {version}, this AOI reads {SCHEMA_VERSION}; open it once with "
                             f"`aoi trajectories list --store {self.path}` to migrate it, or upgrade aoi")

    def _readonly_uri(self) -> str:
        """Return the URI that reads the store without writing: with no WAL file (no writer) as immutable, so not
        even SQLite's -wal/-shm files are created; else read-only beside the writer, seeing its commits."""
        live = Path(f"{self.path}-wal").exists()
        return f"{self.path.resolve().as_uri()}?{'mode=ro' if live else 'immutable=1'}"

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """Yield a fresh autocommit connection (transactions are explicit) and close it afterwards."""
        target = self._readonly_uri() if self.readonly else self.path
        with closing(sqlite3.connect(target, timeout=self.busy_timeout, isolation_level=None,
                                     uri=self.readonly)) as conn:
            if not self.readonly:
                conn.execute("PRAGMA synchronous=NORMAL")
            yield conn

    @contextmanager
    def _transaction(self, conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        """Run a write transaction: take the write lock first (no deadlocked upgrades), roll back on any error."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Bring the schema to SCHEMA_VERSION, refusing a database written by a newer AOI."""
        with self._transaction(conn):
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(f"{self.path} has schema {version}, newer than this AOI's {SCHEMA_VERSION}; "
                                 f"upgrade aoi or point store.path (AOI_STORE) at another file")
            for migrate in MIGRATIONS[version:]:
                migrate(conn)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def schema_version(self) -> int:
        """Return the schema version stored in the file."""
        with self._connect() as conn:
            return conn.execute("PRAGMA user_version").fetchone()[0]

    def save(self, traj: Trajectory) -> None:
        """Write one finished episode in one transaction, replacing an episode with the same id."""
        row, bodies = _row(traj)
        marks = ", ".join("?" * len(COLUMNS))
        with self._connect() as conn, self._transaction(conn):
            self._release(conn, traj.id)
            conn.execute(f"INSERT OR REPLACE INTO episodes ({', '.join(COLUMNS)}) VALUES ({marks})", row)
            messages.write(conn, bodies)
            if self.before_commit is not None:
                self.before_commit(conn, traj)

    def get(self, episode_id: str) -> Trajectory | None:
        """Return the episode with this id, or None."""
        with self._connect() as conn:
            row = conn.execute("SELECT data FROM episodes WHERE id = ?", (episode_id,)).fetchone()
            return None if row is None else _load(conn, [row[0]])[0]

    def query(self, problem_id: str | None = None, task_type: str | None = None, model: str | None = None,
              success: bool | None = None, limit: int | None = None) -> list[Trajectory]:
        """Return the episodes matching every given filter, oldest first."""
        where, params = _where(problem_id=problem_id, task_type=task_type, model=model, success=success)
        sql = f"SELECT data FROM episodes{where} ORDER BY started_at, rowid"
        if limit is not None:
            sql, params = sql + " LIMIT ?", params + [int(limit)]
        with self._connect() as conn:
            return _load(conn, [data for (data,) in conn.execute(sql, params)])

    def summaries(self, problem_id: str | None = None, task_type: str | None = None, model: str | None = None,
                  success: bool | None = None) -> list[dict]:
        """Return the indexed columns (everything but `data`) of matching episodes, for reports that skip steps."""
        where, params = _where(problem_id=problem_id, task_type=task_type, model=model, success=success)
        columns = [c for c in COLUMNS if c != "data"]
        with self._connect() as conn:
            rows = conn.execute(f"SELECT {', '.join(columns)} FROM episodes{where} ORDER BY started_at, rowid",
                                params).fetchall()
        return [_summary(dict(zip(columns, row))) for row in rows]

    def count(self, problem_id: str | None = None, task_type: str | None = None, model: str | None = None,
              success: bool | None = None) -> int:
        """Count the episodes matching every given filter."""
        where, params = _where(problem_id=problem_id, task_type=task_type, model=model, success=success)
        with self._connect() as conn:
            return conn.execute(f"SELECT COUNT(*) FROM episodes{where}", params).fetchone()[0]

    def exists(self, problem_id: str, attempt: int, model: str) -> bool:
        """Return whether this attempt of this problem by this model is stored (a resumed eval skips it)."""
        with self._connect() as conn:
            row = conn.execute("SELECT 1 FROM episodes WHERE problem_id = ? AND attempt = ? AND model = ? LIMIT 1",
                               (problem_id, attempt, model)).fetchone()
        return row is not None

    def delete(self, episode_id: str) -> bool:
        """Delete one episode; return whether it was there."""
        with self._connect() as conn, self._transaction(conn):
            self._release(conn, episode_id)
            return conn.execute("DELETE FROM episodes WHERE id = ?", (episode_id,)).rowcount > 0

    @staticmethod
    def _release(conn: sqlite3.Connection, episode_id: str) -> None:
        """Give back the messages a stored episode uses (before it is deleted or replaced)."""
        row = conn.execute("SELECT data FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        if row is not None:
            messages.release(conn, messages.keys(_record(row[0])))

    def recent(self, limit: int = 20) -> list[dict]:
        """Return the indexed columns of the `limit` most recently started episodes, newest first."""
        columns = [c for c in COLUMNS if c != "data"]
        with self._connect() as conn:
            rows = conn.execute(f"SELECT {', '.join(columns)} FROM episodes ORDER BY started_at DESC, rowid DESC "
                                "LIMIT ?", (int(limit),)).fetchall()
        return [_summary(dict(zip(columns, row))) for row in rows]

    def ids_starting(self, prefix: str, limit: int = 2) -> list[str]:
        """Return up to `limit` episode ids that start with `prefix` (a full id matches itself)."""
        pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        with self._connect() as conn:
            rows = conn.execute("SELECT id FROM episodes WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",
                                (pattern, int(limit))).fetchall()
        return [row[0] for row in rows]
