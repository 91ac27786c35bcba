"""The mongod side of a shell connection: database commands over MongoData, with 4.4's access control."""

from __future__ import annotations

from dataclasses import dataclass, field

from aoi.twin.behaviour.mongo import MongoUser
from aoi.twin.behaviour.programs import mongo_docs, mongo_status
from aoi.twin.behaviour.programs.basics import rng_for, uuid_text
from aoi.twin.behaviour.programs.mongo_values import Special, bson

DB_ROLES = {"read", "readWrite", "dbAdmin", "dbOwner", "userAdmin", "enableSharding"}
ADMIN_ROLES = {"readAnyDatabase", "readWriteAnyDatabase", "userAdminAnyDatabase", "dbAdminAnyDatabase", "root",
               "clusterAdmin", "clusterManager", "clusterMonitor", "hostManager", "backup", "restore", "__system"}
# action -> (roles on the same db, roles on admin that cover every db)
PRIVILEGES = {
    "read": ({"read", "readWrite", "dbOwner"}, {"readAnyDatabase", "readWriteAnyDatabase", "root", "__system"}),
    "write": ({"readWrite", "dbOwner"}, {"readWriteAnyDatabase", "root", "__system"}),
    "userAdmin": ({"userAdmin", "dbOwner"}, {"userAdminAnyDatabase", "root", "__system"}),
    "dbAdmin": ({"dbAdmin", "dbOwner"}, {"dbAdminAnyDatabase", "root", "__system"}),
    "monitor": (set(), {"clusterMonitor", "clusterAdmin", "root", "__system"}),
}
COMMANDS = {  # command -> the action it needs ("" = none, even without authentication)
    "ping": "", "buildInfo": "", "buildinfo": "", "isMaster": "", "ismaster": "", "hello": "", "whatsmyuri": "",
    "connectionStatus": "", "listDatabases": "authenticated", "serverStatus": "monitor",
    "replSetGetStatus": "monitor", "getCmdLineOpts": "monitor", "usersInfo": "userAdmin",
    "createUser": "userAdmin", "dropUser": "userAdmin", "updateUser": "userAdmin", "grantRolesToUser": "userAdmin",
    "revokeRolesFromUser": "userAdmin", "find": "read", "count": "read", "listCollections": "read",
    "dbStats": "read", "insert": "write", "create": "write", "drop": "write", "dropDatabase": "dbAdmin",
}


@dataclass
class Conn:
    """One client connection to a mongod: the server, its data, who is logged in."""

    twin: object
    pod: dict  # the mongod's pod
    server: object  # MongoServer
    data: object  # MongoData
    local: bool  # from the same pod (the localhost exception applies)
    now: float
    user: MongoUser | None = None
    lsid: str = ""
    inserted: dict = field(default_factory=dict)  # (volume, db, coll) -> documents inserted through shells

    def controlled(self) -> bool:
        """Tell whether access control is on (not while the entrypoint's init scripts run)."""
        return self.server.auth and not self.server.initializing


def failure(errmsg: str, code: int, name: str) -> dict:
    """Return a command error response."""
    return {"ok": 0, "errmsg": errmsg, "code": code, "codeName": name}


def has(user: MongoUser | None, action: str, db: str) -> bool:
    """Tell whether a user's roles grant an action on a database."""
    same, anywhere = PRIVILEGES[action]
    return user is not None and any(r["role"] in anywhere and r["db"] == "admin" or
                                    r["role"] in same and r["db"] == db for r in user.roles)


def _denied(conn: Conn, name: str, action: str, db: str, cmd: dict, shown: dict) -> dict | None:
    """Return the Unauthorized error for a command the connection may not run (None when it may)."""
    if not action or not conn.controlled():
        return None
    if conn.user is None:
        if name == "createUser" and db == "admin" and conn.local and not conn.data.users:
            return None  # the localhost exception: the first user may be created without logging in
        return failure(f"command {name} requires authentication", 13, "Unauthorized")
    if action == "authenticated" or has(conn.user, action, db) or _self_lookup(conn, name, db, cmd):
        return None
    full = {**shown, "lsid": {"id": Special("UUID", conn.lsid)}, "$db": db}
    return failure(f"not authorized on {db} to execute command {bson(full)}", 13, "Unauthorized")


def _self_lookup(conn: Conn, name: str, db: str, cmd: dict) -> bool:
    """Users may always read their own user document."""
    return name == "usersInfo" and cmd.get("usersInfo") in (conn.user.user, {"user": conn.user.user, "db": db})


def run(conn: Conn, db: str, cmd: dict, shown: dict | None = None) -> dict:
    """Run one database command as mongod would, access control first (`shown`: the command its errors quote)."""
    name = next(iter(cmd), "")
    if name == "dbstats":
        cmd = {"dbStats": cmd[name], **{k: v for k, v in cmd.items() if k != name}}
        name = "dbStats"
    if name not in COMMANDS:
        return failure(f"no such command: '{name}'", 59, "CommandNotFound")
    denied = _denied(conn, name, COMMANDS[name], db, cmd, shown or cmd)
    if denied is not None:
        return denied
    mongo_docs.seed(conn.data, *_store(conn))
    handler = HANDLERS.get(name) or (lambda c, d, x: mongo_status.command(c, d, x))
    return handler(conn, db, cmd)


def _store(conn: Conn) -> tuple:
    """Return (app, component) of the mongod's pod."""
    behaviour = conn.twin.extensions.behaviour
    component = behaviour.component_of(conn.pod) or ""
    app = behaviour.apps.get(conn.pod["metadata"]["namespace"])
    return app, component


def user_document(user: MongoUser) -> dict:
    """Return a user as usersInfo reports it."""
    uid = uuid_text(rng_for("user", user.db, user.user))
    return {"_id": f"{user.db}.{user.user}", "userId": Special("UUID", uid), "user": user.user, "db": user.db,
            "roles": [dict(r) for r in user.roles], "mechanisms": ["SCRAM-SHA-1", "SCRAM-SHA-256"]}


def _roles(roles, db: str) -> list[dict] | dict:
    """Normalise roles ('readWrite' or {role, db}); return an error response for unknown roles."""
    out = []
    for r in roles if isinstance(roles, list) else []:
        role = {"role": r, "db": db} if isinstance(r, str) else {"role": r.get("role"), "db": r.get("db", db)}
        if role["role"] not in DB_ROLES | ADMIN_ROLES or (role["role"] in ADMIN_ROLES and role["db"] != "admin"):
            return failure(f"Could not find role: {role['role']}@{role['db']}", 31, "RoleNotFound")
        out.append(role)
    return out


def create_user(conn: Conn, db: str, cmd: dict) -> dict:
    name = str(cmd["createUser"])
    if (db, name) in conn.data.users:
        return failure(f'User "{name}@{db}" already exists', 51003, "Location51003")
    roles = _roles(cmd.get("roles", []), db)
    if isinstance(roles, dict):
        return roles
    conn.data.users[(db, name)] = MongoUser(name, db, str(cmd.get("pwd", "")), roles)
    return {"ok": 1}


def drop_user(conn: Conn, db: str, cmd: dict) -> dict:
    if conn.data.users.pop((db, str(cmd["dropUser"])), None) is None:
        return failure(f"User '{cmd['dropUser']}@{db}' not found", 11, "UserNotFound")
    return {"ok": 1}


def change_roles(conn: Conn, db: str, cmd: dict) -> dict:
    name = next(iter(cmd))
    user = conn.data.users.get((db, str(cmd[name])))
    if user is None:
        return failure(f'Could not find user "{cmd[name]}@{db}"', 11, "UserNotFound")
    roles = _roles(cmd.get("roles", []), db)
    if isinstance(roles, dict):
        return roles
    if name == "grantRolesToUser":
        user.roles += [r for r in roles if r not in user.roles]
    else:
        user.roles = [r for r in user.roles if r not in roles]
    return {"ok": 1}


def update_user(conn: Conn, db: str, cmd: dict) -> dict:
    user = conn.data.users.get((db, str(cmd["updateUser"])))
    if user is None:
        return failure(f'Could not find user "{cmd["updateUser"]}@{db}"', 11, "UserNotFound")
    roles = _roles(cmd["roles"], db) if "roles" in cmd else user.roles
    if isinstance(roles, dict):
        return roles
    user.roles, user.pwd = roles, str(cmd.get("pwd", user.pwd))
    return {"ok": 1}


def users_info(conn: Conn, db: str, cmd: dict) -> dict:
    want = cmd["usersInfo"]
    if isinstance(want, dict):
        db, want = want.get("db", db), want.get("user")
    users = [u for (d, n), u in sorted(conn.data.users.items()) if d == db and (want in (1, 1.0) or n == want)]
    return {"users": [user_document(u) for u in users], "ok": 1}


HANDLERS = {"createUser": create_user, "dropUser": drop_user, "grantRolesToUser": change_roles,
            "revokeRolesFromUser": change_roles, "updateUser": update_user, "usersInfo": users_info}
