"""db.<collection> and its cursors: find, findOne, count, countDocuments, insert, as 4.4's collection.js has them."""

from __future__ import annotations

from aoi.twin.behaviour.programs.mongo_eval import Fn, Host, JSError, arg
from aoi.twin.behaviour.programs.mongo_values import UNDEFINED, tojson


class Printed(Host):
    """A value that prints as fixed text (WriteResult({...}), WriteCommandError({...}))."""

    def __init__(self, text: str):
        self.text = text


class Collection(Host):
    """db.<name>: queries and inserts."""

    def __init__(self, db, name: str):  # db: a mongo_objects.DB
        self.db, self.name = db, name

    def member(self, name: str):
        found = super().member(name)
        return Collection(self.db, f"{self.name}.{name}") if found is UNDEFINED else found

    def js_getName(self, a):
        return self.name

    def js_getFullName(self, a):
        return f"{self.db.name}.{self.name}"

    def js_find(self, a):
        return Cursor(self, arg(a, 0, {}) or {}, arg(a, 1, None))

    def js_findOne(self, a):
        docs = Cursor(self, arg(a, 0, {}) or {}, arg(a, 1, None), 1, True).fetch()
        return docs[0] if docs else None

    def _count(self, query: dict, label: str, shown: dict | None = None):
        res = self.db.run({"count": self.name, "query": query}, shown)
        if not res.get("ok"):
            message = (f"command failed: {tojson(res)} : aggregate failed" if label == "aggregate" else
                       f"count failed: {tojson(res)}")
            raise self.db.shell.error(res, message, (f"DBCollection.prototype.{label}@src/mongo/shell/"
                                                     "collection.js:1401:15",))
        return res["n"]

    def js_count(self, a):
        return self._count(arg(a, 0, {}) or {}, "count")

    def js_countDocuments(self, a):
        query = arg(a, 0, {}) or {}
        shown = {"aggregate": self.name, "pipeline": [{"$match": query}, {"$group": {"_id": 1, "n": {"$sum": 1}}}],
                 "cursor": {}}
        return self._count(query, "aggregate", shown)

    def js_estimatedDocumentCount(self, a):
        return self._count({}, "count")

    def _insert(self, docs: list) -> dict:
        shell = self.db.shell
        docs = [{"_id": shell.vars["ObjectId"]([]), **d} if "_id" not in d else d for d in docs]
        return self.db.run({"insert": self.name, "documents": docs, "ordered": True},
                           {"insert": self.name, "ordered": True}), docs

    def js_insert(self, a):
        docs = arg(a, 0, {})
        res, _ = self._insert(docs if isinstance(docs, list) else [docs])
        if not res.get("ok"):
            return Printed(f"WriteCommandError({tojson(res)})")
        return Printed(f'WriteResult({{ "nInserted" : {res["n"]} }})') if not isinstance(docs, list) else \
            Printed(tojson({"writeErrors": [], "writeConcernErrors": [], "nInserted": res["n"], "nUpserted": 0,
                            "nMatched": 0, "nModified": 0, "nRemoved": 0, "upserted": []}))

    def js_insertOne(self, a):
        res, docs = self._insert([arg(a, 0, {})])
        self._write_ok(res, "insertOne")
        return {"acknowledged": True, "insertedId": docs[0]["_id"]}

    def js_insertMany(self, a):
        res, docs = self._insert(list(arg(a, 0, [])))
        self._write_ok(res, "insertMany")
        return {"acknowledged": True, "insertedIds": [d["_id"] for d in docs]}

    def _write_ok(self, res: dict, method: str) -> None:
        if not res.get("ok"):
            shell = self.db.shell
            if shell.modern:
                shell.checked(res)
            raise JSError(res["errmsg"], shown=f"WriteCommandError({tojson(res)})",
                          stack=("WriteCommandError@src/mongo/shell/bulk_api.js:417:48",
                                 f"DBCollection.prototype.{method}@src/mongo/shell/crud_api.js:264:9"))

    def js_drop(self, a):
        res = self.db.run({"drop": self.name})
        if not res.get("ok") and res.get("errmsg") != "ns not found":
            raise self.db.shell.error(res, "drop failed: " + tojson(res), ("DBCollection.prototype.drop",))
        return bool(res.get("ok"))


class Cursor(Host):
    """db.<coll>.find(...): runs when printed or iterated."""

    def __init__(self, coll: Collection, query: dict, projection, limit: int = 0, single: bool = False):
        self.coll, self.query, self.projection, self.limit, self.single = coll, query, projection, limit, single
        self.pretty, self.docs = False, None

    def fetch(self) -> list:
        """Run the find command once; raise the shell's 'error: {...}' on failure."""
        if self.docs is None:
            cmd = {"find": self.coll.name, "filter": self.query}
            if self.projection:
                cmd["projection"] = self.projection
            if self.limit:
                cmd["limit"] = self.limit
            if self.single:
                cmd["singleBatch"] = True
            res = self.coll.db.run(cmd)
            if not res.get("ok"):
                raise self.coll.db.shell.error(res, "error: " + tojson(res), (
                    "DBCommandCursor@src/mongo/shell/query.js:696:15",
                    "DBQuery.prototype._exec@src/mongo/shell/query.js:111:28"))
            self.docs = res["cursor"]["firstBatch"]
        return self.docs

    def js_limit(self, a):
        self.limit = int(arg(a, 0, 0) or 0)
        return self

    def js_sort(self, a):
        return self

    js_skip = js_batchSize = js_sort

    def js_pretty(self, a):
        self.pretty = True
        return self

    def js_toArray(self, a):
        return list(self.fetch())

    def js_count(self, a):
        return self.coll._count(self.query, "count")

    def js_size(self, a):
        return len(self.fetch())

    js_itcount = js_size

    def js_forEach(self, a):
        fn = arg(a, 0)
        if not isinstance(fn, Fn):
            raise JSError("forEach requires a function argument", "TypeError")
        for doc in self.fetch():
            fn([doc])
        return UNDEFINED

    def js_map(self, a):
        fn = arg(a, 0)
        return [fn([doc]) for doc in self.fetch()] if isinstance(fn, Fn) else []

    def js_hasNext(self, a):
        return bool(self.fetch())

    def js_next(self, a):
        docs = self.fetch()
        if not docs:
            raise JSError("error hasNext: false")
        return docs.pop(0)
