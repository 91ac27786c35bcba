"""The shell's host objects db, db.getMongo() and rs, each method as 4.4's db.js has it."""

from __future__ import annotations

from aoi.twin.behaviour.programs.mongo_collection import Collection
from aoi.twin.behaviour.programs.mongo_eval import Host, JSError, arg
from aoi.twin.behaviour.programs.mongo_values import UNDEFINED, tojson

WRITE_CONCERN = {"w": "majority", "wtimeout": 600000}
STACK = {"createUser": "db.js:1386:11", "dropUser": "db.js:1512:11", "grantRolesToUser": "db.js:1548:15",
         "revokeRolesFromUser": "db.js:1578:15", "getUser": "db.js:1638:15", "getUsers": "db.js:1668:15",
         "getCollectionNames": "db.js:1063:15", "updateUser": "db.js:1450:11"}


class DB(Host):
    """A database handle: user management, commands, and collections as properties."""

    def __init__(self, shell, name: str):
        self.shell, self.name = shell, name

    def member(self, name: str):
        found = super().member(name)
        return Collection(self, name) if found is UNDEFINED and not name.startswith("_") else found

    def run(self, cmd: dict, shown: dict | None = None) -> dict:
        return self.shell.command(self.name, cmd, shown)

    def fail(self, res: dict, message: str, method: str) -> JSError:
        return self.shell.error(res, message, (f"DB.prototype.{method}@src/mongo/shell/{STACK.get(method, 'db.js')}",))

    def js_getName(self, a):
        return self.name

    def js_getSiblingDB(self, a):
        return DB(self.shell, str(arg(a, 0, "test")))

    js_getDB = js_getSiblingDB

    def js_getCollection(self, a):
        return Collection(self, str(arg(a, 0, "")))

    def js_getMongo(self, a):
        return Mongo(self.shell)

    def js_createUser(self, a):
        spec = arg(a, 0, {})
        if not isinstance(spec, dict) or "user" not in spec:
            raise JSError("no 'user' field provided to 'createUser' function")
        cmd = {"createUser": spec["user"], **{k: v for k, v in spec.items() if k != "user"}}
        if "pwd" in cmd:
            cmd["digestPassword"] = True
        cmd["writeConcern"] = arg(a, 1, None) or WRITE_CONCERN
        res = self.run(cmd, {**cmd, "pwd": "xxx"} if "pwd" in cmd else cmd)
        if self.shell.modern:
            return self.shell.checked(res)
        if not res.get("ok"):
            raise self.fail(res, "couldn't add user: " + res["errmsg"], "createUser")
        self.shell.emit("Successfully added user: " + tojson({k: v for k, v in spec.items() if k != "pwd"}))
        return UNDEFINED

    def js_updateUser(self, a):
        cmd = {"updateUser": arg(a, 0, ""), **(arg(a, 1, {}) or {}), "writeConcern": WRITE_CONCERN}
        res = self.run(cmd, {**cmd, "pwd": "xxx"} if "pwd" in cmd else cmd)
        if self.shell.modern or res.get("ok"):
            return self.shell.checked(res) if self.shell.modern else UNDEFINED
        raise self.fail(res, "Updating user failed: " + res["errmsg"], "updateUser")

    def js_dropUser(self, a):
        res = self.run({"dropUser": arg(a, 0, ""), "writeConcern": arg(a, 1, None) or WRITE_CONCERN})
        if self.shell.modern:
            return self.shell.checked(res)
        if res.get("ok") or res.get("code") == 11:
            return bool(res.get("ok"))
        raise self.fail(res, res["errmsg"], "dropUser")

    def _roles(self, a, verb: str):
        cmd = {verb: arg(a, 0, ""), "roles": arg(a, 1, []), "writeConcern": arg(a, 2, None) or WRITE_CONCERN}
        res = self.run(cmd)
        if self.shell.modern:
            return self.shell.checked(res)
        if not res.get("ok"):
            raise self.fail(res, res["errmsg"], verb)
        return UNDEFINED

    def js_grantRolesToUser(self, a):
        return self._roles(a, "grantRolesToUser")

    def js_revokeRolesFromUser(self, a):
        return self._roles(a, "revokeRolesFromUser")

    def js_getUser(self, a):
        res = self.run({"usersInfo": arg(a, 0, "")})
        if not res.get("ok"):
            raise self.fail(res, res["errmsg"], "getUser")
        return res["users"][0] if res["users"] else None

    def js_getUsers(self, a):
        res = self.run({"usersInfo": 1})
        if not res.get("ok"):
            raise self.fail(res, res["errmsg"], "getUsers")
        return res if self.shell.modern else res["users"]

    def js_auth(self, a):
        spec = arg(a, 0, {})
        user, pwd = (spec.get("user"), spec.get("pwd")) if isinstance(spec, dict) else (spec, arg(a, 1, ""))
        return self.shell.login(self.name, str(user), str(pwd))

    def js_logout(self, a):
        self.shell.conn.user = None
        return {"ok": 1}

    def js_runCommand(self, a):
        cmd = arg(a, 0, {})
        return self.run({cmd: 1} if isinstance(cmd, str) else dict(cmd))

    def js_adminCommand(self, a):
        return DB(self.shell, "admin").js_runCommand(a)

    def js_serverStatus(self, a):
        return self.shell.checked(DB(self.shell, "admin").run({"serverStatus": 1}), soft=True)

    def js_version(self, a):
        return self.shell.checked(DB(self.shell, "admin").run({"buildinfo": 1})).get("version")

    def js_isMaster(self, a):
        return self.run({"isMaster": 1})

    js_hello = js_isMaster

    def js_stats(self, a):
        return self.shell.checked(self.run({"dbStats": 1, "scale": arg(a, 0, 1)}), soft=True)

    def js_createCollection(self, a):
        return self.shell.checked(self.run({"create": arg(a, 0, "")}), soft=True)

    def js_dropDatabase(self, a):
        return self.shell.checked(self.run({"dropDatabase": 1}), soft=True)

    def js_getCollectionNames(self, a):
        res = self.run({"listCollections": 1, "filter": {}, "nameOnly": True, "authorizedCollections": True})
        if not res.get("ok"):
            raise self.fail(res, "listCollections failed: " + tojson(res), "getCollectionNames")
        return [c["name"] for c in res["cursor"]["firstBatch"]]

    def js_getCollectionInfos(self, a):
        res = self.run({"listCollections": 1, "filter": arg(a, 0, {}) or {}})
        if not res.get("ok"):
            raise self.fail(res, "listCollections failed: " + tojson(res), "getCollectionInfos")
        return res["cursor"]["firstBatch"]


class Mongo(Host):
    """db.getMongo(): the connection."""

    def __init__(self, shell):
        self.shell = shell

    def js_getDB(self, a):
        return DB(self.shell, str(arg(a, 0, "test")))

    def js_getDBNames(self, a):
        return [d["name"] for d in self.shell.list_databases(name_only=True)]

    def js_getDBs(self, a):
        databases = self.shell.list_databases(name_only=False)
        return {"databases": databases, "totalSize": sum(d["sizeOnDisk"] for d in databases), "ok": 1}


class RS(Host):
    """rs: replica set helpers (a standalone mongod answers with its error document)."""

    def __init__(self, shell):
        self.shell = shell

    def js_status(self, a):
        return self.shell.checked(DB(self.shell, "admin").run({"replSetGetStatus": 1}), soft=True)

    def js_conf(self, a):
        res = DB(self.shell, "admin").run({"replSetGetStatus": 1})
        raise self.shell.error(res, "Could not retrieve replica set config: " + tojson(res),
                               ("rs.conf@src/mongo/shell/utils.js:1652:11",))

    js_isMaster = js_status

