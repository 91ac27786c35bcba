"""mongod's data and status commands: find, count, insert, listDatabases, serverStatus, buildInfo, hello..."""

from __future__ import annotations

from aoi.twin.behaviour.programs import mongo_docs
from aoi.twin.behaviour.programs.basics import rng_for, uuid_text
from aoi.twin.behaviour.programs.common import started_at
from aoi.twin.behaviour.programs.mongo_values import Special

VERSION = "4.4.6"
GIT_VERSION = "72e66213c2c3eab37d9358d5e78ad7f5c1d0d0d7"
ANY_DB = {"root", "readAnyDatabase", "readWriteAnyDatabase", "userAdminAnyDatabase", "dbAdminAnyDatabase",
          "clusterMonitor", "clusterAdmin", "backup", "__system"}


def _key(conn, db: str, coll: str) -> tuple:
    return (conn.server.volume, db, coll)


def find(conn, db: str, cmd: dict) -> dict:
    coll = str(cmd["find"])
    count = conn.data.databases.get(db, {}).get(coll, 0)
    docs = [d for d in mongo_docs.documents(conn.inserted, _key(conn, db, coll), count)
            if mongo_docs.matches(d, cmd.get("filter") or {})]
    limit = int(cmd.get("limit") or 0)
    batch = [mongo_docs.project(d, cmd.get("projection")) for d in (docs[:limit] if limit else docs)]
    return {"cursor": {"firstBatch": batch, "id": Special("NumberLong", 0), "ns": f"{db}.{coll}"}, "ok": 1}


def count(conn, db: str, cmd: dict) -> dict:
    coll, query = str(cmd["count"]), cmd.get("query") or {}
    total = conn.data.databases.get(db, {}).get(coll, 0)
    if not query:
        return {"n": total, "ok": 1}
    docs = mongo_docs.documents(conn.inserted, _key(conn, db, coll), total)
    return {"n": sum(mongo_docs.matches(d, query) for d in docs), "ok": 1}


def insert(conn, db: str, cmd: dict) -> dict:
    coll, docs = str(cmd["insert"]), list(cmd.get("documents") or [])
    key = _key(conn, db, coll)
    collections = conn.data.databases.setdefault(db, {})
    collections[coll] = collections.get(coll, 0) + len(docs)
    conn.inserted.setdefault(key, []).extend(docs)
    return {"n": len(docs), "ok": 1}


def create(conn, db: str, cmd: dict) -> dict:
    coll = str(cmd["create"])
    if coll in conn.data.databases.get(db, {}):
        return {"ok": 0, "errmsg": f"Collection already exists. NS: {db}.{coll}", "code": 48,
                "codeName": "NamespaceExists"}
    conn.data.databases.setdefault(db, {})[coll] = 0
    return {"ok": 1}


def drop(conn, db: str, cmd: dict) -> dict:
    coll = str(cmd["drop"])
    if conn.data.databases.get(db, {}).pop(coll, None) is None:
        return {"ok": 0, "errmsg": "ns not found", "code": 26, "codeName": "NamespaceNotFound"}
    conn.inserted.pop(_key(conn, db, coll), None)
    return {"nIndexesWas": 1, "ns": f"{db}.{coll}", "ok": 1}


def drop_database(conn, db: str, cmd: dict) -> dict:
    conn.data.databases.pop(db, None)
    return {"dropped": db, "ok": 1}


def list_collections(conn, db: str, cmd: dict) -> dict:
    names = sorted(conn.data.databases.get(db, {}))
    batch = [{"name": n, "type": "collection"} if cmd.get("nameOnly") else
             {"name": n, "type": "collection", "options": {},
              "info": {"readOnly": False, "uuid": Special("UUID", uuid_text(rng_for("coll", db, n)))}}
             for n in names]
    return {"cursor": {"id": Special("NumberLong", 0), "ns": f"{db}.$cmd.listCollections", "firstBatch": batch},
            "ok": 1}


def databases(conn) -> dict[str, float]:
    """Return every database on the server with its size on disk."""
    sizes = {"admin": 40960.0 + 61440 * bool(conn.data.users), "config": 12288.0, "local": 73728.0}
    for name, collections in conn.data.databases.items():
        if collections:
            sizes[name] = float(mongo_docs.size_on_disk(collections))
    return dict(sorted(sizes.items()))


def list_databases(conn, db: str, cmd: dict) -> dict:
    sizes = databases(conn)
    if conn.controlled() and conn.user and not any(r["role"] in ANY_DB for r in conn.user.roles):
        mine = {r["db"] for r in conn.user.roles}
        sizes = {k: v for k, v in sizes.items() if k in mine}
    listed = [{"name": n, "sizeOnDisk": s, "empty": False} for n, s in sizes.items()]
    return {"databases": listed, "totalSize": sum(sizes.values()), "totalSizeMb": int(sum(sizes.values()) // 2**20),
            "ok": 1}


def db_stats(conn, db: str, cmd: dict) -> dict:
    collections = conn.data.databases.get(db, {})
    objects = sum(collections.values())
    return {"db": db, "collections": len(collections), "views": 0, "objects": objects,
            "avgObjSize": 180.0 if objects else 0, "dataSize": 180.0 * objects,
            "storageSize": float(mongo_docs.size_on_disk(collections)), "indexes": len(collections),
            "indexSize": 4096.0 * len(collections), "ok": 1}


def _uptime(conn) -> float:
    name = conn.pod["spec"]["containers"][0]["name"]
    start = started_at(conn.twin, conn.pod, name)
    return max(conn.now - (start if start is not None else conn.now), 0.0)


def server_status(conn, db: str, cmd: dict) -> dict:
    load = conn.twin.extensions.behaviour.load.requests.get(conn.pod["metadata"]["uid"], {})
    served, up = sum(load.values()), _uptime(conn)
    long = lambda n: Special("NumberLong", int(n))  # noqa: E731
    return {"host": conn.pod["metadata"]["name"], "version": VERSION, "process": "mongod", "pid": long(1),
            "uptime": float(int(up)), "uptimeMillis": long(up * 1000), "uptimeEstimate": long(up),
            "localTime": Special("ISODate", conn.now),
            "connections": {"current": 3, "available": 838857, "totalCreated": 4 + served // 50, "active": 1},
            "mem": {"bits": 64, "resident": 92, "virtual": 1564, "supported": True},
            "network": {"bytesIn": long(180 * served + 4096), "bytesOut": long(420 * served + 8192),
                        "numRequests": long(served + 40)},
            "opcounters": {"insert": long(sum(conn.data.databases.get(d, {}).get(c, 0)
                                              for d in conn.data.databases for c in conn.data.databases[d])),
                           "query": long(served), "update": long(0), "delete": long(0), "getmore": long(0),
                           "command": long(served // 2 + 40)},
            "storageEngine": {"name": "wiredTiger", "supportsCommittedReads": True, "persistent": True},
            "ok": 1}


def _argv(conn) -> list[str]:
    c = conn.pod["spec"]["containers"][0]
    return (c.get("command") or ["mongod"]) + (c.get("args") or [])


def repl_status(conn, db: str, cmd: dict) -> dict:
    if "--replSet" in _argv(conn):
        return {"ok": 0, "errmsg": "no replset config has been received", "code": 94,
                "codeName": "NotYetInitialized"}
    return {"ok": 0, "errmsg": "not running with --replSet", "code": 76, "codeName": "NoReplicationEnabled"}


def hello(conn, db: str, cmd: dict) -> dict:
    return {"ismaster": True, "topologyVersion": {"processId": Special("ObjectId", "683d6a50" + "0" * 16),
                                                  "counter": Special("NumberLong", 0)},
            "maxBsonObjectSize": 16777216, "maxMessageSizeBytes": 48000000, "maxWriteBatchSize": 100000,
            "localTime": Special("ISODate", conn.now), "logicalSessionTimeoutMinutes": 30, "connectionId": 17,
            "minWireVersion": 0, "maxWireVersion": 9, "readOnly": False, "ok": 1}


def build_info(conn, db: str, cmd: dict) -> dict:
    return {"version": VERSION, "gitVersion": GIT_VERSION, "modules": [], "allocator": "tcmalloc",
            "javascriptEngine": "mozjs", "sysInfo": "deprecated", "versionArray": [4, 4, 6, 0],
            "bits": 64, "debug": False, "maxBsonObjectSize": 16777216, "ok": 1}


def connection_status(conn, db: str, cmd: dict) -> dict:
    users = [{"user": conn.user.user, "db": conn.user.db}] if conn.user else []
    roles = [dict(r) for r in conn.user.roles] if conn.user else []
    return {"authInfo": {"authenticatedUsers": users, "authenticatedUserRoles": roles}, "ok": 1}


def cmdline(conn, db: str, cmd: dict) -> dict:
    argv = _argv(conn)
    parsed = {"net": {"bindIp": "*"}, **({"security": {"authorization": "enabled"}} if "--auth" in argv else {})}
    return {"argv": argv, "parsed": parsed, "ok": 1}


HANDLERS = {"find": find, "count": count, "insert": insert, "create": create, "drop": drop,
            "dropDatabase": drop_database, "listCollections": list_collections, "listDatabases": list_databases,
            "dbStats": db_stats, "serverStatus": server_status, "replSetGetStatus": repl_status,
            "isMaster": hello, "ismaster": hello, "hello": hello, "buildInfo": build_info, "buildinfo": build_info,
            "connectionStatus": connection_status, "getCmdLineOpts": cmdline,
            "ping": lambda c, d, x: {"ok": 1}, "whatsmyuri": lambda c, d, x: {"you": "127.0.0.1:53412", "ok": 1}}


def command(conn, db: str, cmd: dict) -> dict:
    """Run a data or status command (access already checked)."""
    return HANDLERS[next(iter(cmd))](conn, db, cmd)
