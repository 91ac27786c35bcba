"""Redis commands over a RedisServer's keys; replies are (type, value) with type in status|error|int|bulk|array."""

from __future__ import annotations

import fnmatch

from aoi.twin.behaviour.programs import redis_data
from aoi.twin.behaviour.programs.common import pod_ip
from aoi.twin.behaviour.programs.redis_data import Entry

ARITY = {"get": 2, "set": -3, "del": -2, "exists": -2, "ttl": 2, "pttl": 2, "type": 2, "expire": 3, "keys": 2,
         "dbsize": 1, "hgetall": 2, "hget": 3, "hset": -4, "hkeys": 2, "hlen": 2, "lrange": 4, "llen": 2,
         "lpush": -3, "rpush": -3, "zrange": -4, "zrevrange": -4, "zcard": 2, "zscore": 3, "smembers": 2,
         "scard": 2, "scan": -2, "select": 2, "flushdb": -1, "flushall": -1, "incr": 2, "ping": -1, "echo": 2,
         "info": -1, "config": -2, "client": -2, "time": 1, "role": 1, "lastsave": 1}
TYPES = {"hgetall": "hash", "hget": "hash", "hset": "hash", "hkeys": "hash", "hlen": "hash", "lrange": "list",
         "llen": "list", "lpush": "list", "rpush": "list", "zrange": "zset", "zrevrange": "zset", "zcard": "zset",
         "zscore": "zset", "smembers": "set", "scard": "set", "get": "string", "incr": "string"}
WRONGTYPE = ("error", "WRONGTYPE Operation against a key holding the wrong kind of value")


class Session:
    """One redis-cli connection: the server, the selected database and the clock."""

    def __init__(self, twin, server: redis_data.RedisServer, db: int, now: float, client_ip: str):
        self.twin, self.server, self.n, self.now, self.client_ip = twin, server, db, now, client_ip

    @property
    def keys(self) -> dict[str, Entry]:
        return self.server.db(self.n, self.now)

    def run(self, argv: list[str]) -> tuple[str, object]:
        """Run one command and return its reply."""
        self.server.commands += 1
        name = argv[0].lower()
        if name not in ARITY:
            return ("error", _unknown(argv, self.server.program == "valkey-server"))
        arity = ARITY[name]
        if (arity > 0 and len(argv) != arity) or (arity < 0 and len(argv) < -arity):
            return ("error", f"ERR wrong number of arguments for '{name}' command")
        entry = self.keys.get(argv[1]) if len(argv) > 1 and name in TYPES else None
        if entry is not None and entry.kind != TYPES[name]:
            return WRONGTYPE
        return getattr(self, f"c_{name}")(argv[1:], entry)

    def c_ping(self, a, e):
        return ("bulk", a[0]) if a else ("status", "PONG")

    def c_echo(self, a, e):
        return ("bulk", a[0])

    def c_info(self, a, e):
        return ("bulk", redis_data.info(self.twin, self.server, a[0] if a else "", self.now))

    def c_dbsize(self, a, e):
        return ("int", len(self.keys))

    def c_keys(self, a, e):
        return ("array", [("bulk", k) for k in sorted(self.keys) if fnmatch.fnmatchcase(k, a[0])])

    def c_scan(self, a, e):
        pattern = next((a[i + 1] for i in range(1, len(a) - 1) if a[i].lower() == "match"), "*")
        found = [("bulk", k) for k in sorted(self.keys) if fnmatch.fnmatchcase(k, pattern)]
        return ("array", [("bulk", "0"), ("array", found)])

    def c_get(self, a, e):
        return ("bulk", e.value if e else None)

    def c_set(self, a, e):
        key, opts = a[0], [x.lower() for x in a[2:]]
        if ("nx" in opts and key in self.keys) or ("xx" in opts and key not in self.keys):
            return ("bulk", None)
        expire = None
        for flag, scale in (("ex", 1.0), ("px", 0.001)):
            if flag in opts:
                i = opts.index(flag) + 1
                if i >= len(opts) or not opts[i].isdigit():
                    return ("error", "ERR syntax error")
                expire = self.now + int(opts[i]) * scale
        self.keys[key] = Entry("string", a[1], expire)
        return ("status", "OK")

    def c_incr(self, a, e):
        value = int(e.value if e else 0) + 1
        self.keys[a[0]] = Entry("string", str(value), e.expire if e else None)
        return ("int", value)

    def c_del(self, a, e):
        return ("int", sum(self.keys.pop(k, None) is not None for k in a))

    def c_exists(self, a, e):
        return ("int", sum(k in self.keys for k in a))

    def c_ttl(self, a, e, scale: float = 1.0):
        entry = self.keys.get(a[0])
        if entry is None:
            return ("int", -2)
        return ("int", -1 if entry.expire is None else int((entry.expire - self.now) * scale))

    def c_pttl(self, a, e):
        return self.c_ttl(a, e, 1000.0)

    def c_expire(self, a, e):
        entry = self.keys.get(a[0])
        if entry is not None:
            entry.expire = self.now + float(a[1])
        return ("int", int(entry is not None))

    def c_type(self, a, e):
        entry = self.keys.get(a[0])
        return ("status", entry.kind if entry else "none")

    def c_hgetall(self, a, e):
        return ("array", [("bulk", x) for k, v in (e.value.items() if e else []) for x in (k, v)])

    def c_hget(self, a, e):
        return ("bulk", e.value.get(a[1]) if e else None)

    def c_hkeys(self, a, e):
        return ("array", [("bulk", k) for k in (e.value if e else {})])

    def c_hlen(self, a, e):
        return ("int", len(e.value) if e else 0)

    def c_hset(self, a, e):
        if len(a) % 2 == 0:
            return ("error", "ERR wrong number of arguments for 'hset' command")
        entry = e or self.keys.setdefault(a[0], Entry("hash", {}))
        added = sum(field not in entry.value for field in a[1::2])
        entry.value.update(zip(a[1::2], a[2::2]))
        return ("int", added)

    def c_lrange(self, a, e):
        items = e.value if e else []
        return ("array", [("bulk", v) for v in _slice(items, a[1], a[2])])

    def c_llen(self, a, e):
        return ("int", len(e.value) if e else 0)

    def c_lpush(self, a, e, left: bool = True):
        entry = e or self.keys.setdefault(a[0], Entry("list", []))
        for v in a[1:]:
            entry.value.insert(0, v) if left else entry.value.append(v)
        return ("int", len(entry.value))

    def c_rpush(self, a, e):
        return self.c_lpush(a, e, left=False)

    def c_zrange(self, a, e, reverse: bool = False):
        members = sorted((e.value if e else {}).items(), key=lambda kv: (kv[1], kv[0]), reverse=reverse)
        chosen = _slice(members, a[1], a[2])
        scores = any(x.lower() == "withscores" for x in a[3:])
        return ("array", [("bulk", x) for m, s in chosen for x in ((m, _score(s)) if scores else (m,))])

    def c_zrevrange(self, a, e):
        return self.c_zrange(a, e, reverse=True)

    def c_zcard(self, a, e):
        return ("int", len(e.value) if e else 0)

    def c_zscore(self, a, e):
        score = (e.value if e else {}).get(a[1])
        return ("bulk", None if score is None else _score(score))

    def c_smembers(self, a, e):
        return ("array", [("bulk", v) for v in sorted(e.value if e else [])])

    def c_scard(self, a, e):
        return ("int", len(e.value) if e else 0)

    def c_select(self, a, e):
        if not a[0].isdigit() or int(a[0]) > 15:
            return ("error", "ERR DB index is out of range")
        self.n = int(a[0])
        return ("status", "OK")

    def c_flushdb(self, a, e):
        self.keys.clear()
        return ("status", "OK")

    def c_flushall(self, a, e):
        self.server.dbs.clear()
        return ("status", "OK")

    def c_config(self, a, e):
        if a[0].lower() != "get" or len(a) < 2:
            return ("error", f"ERR Unknown subcommand or wrong number of arguments for '{a[0]}'. Try CONFIG HELP.")
        values = {"maxmemory": "0", "maxmemory-policy": "noeviction", "maxclients": "10000", "timeout": "0",
                  "save": "3600 1 300 100 60 10000", "appendonly": "no", "databases": "16", "port": "6379",
                  "bind": "* -::*", "dir": "/data", "loglevel": "notice"}
        return ("array", [("bulk", x) for k, v in values.items() if fnmatch.fnmatchcase(k, a[1].lower())
                          for x in (k, v)])

    def c_client(self, a, e):
        sub = a[0].lower()
        if sub == "list":
            return ("bulk", _client_list(self))
        if sub == "getname":
            return ("bulk", None)
        if sub == "id":
            return ("int", 3 + self.server.commands)
        return ("error", f"ERR Unknown subcommand or wrong number of arguments for '{a[0]}'. Try CLIENT HELP.")

    def c_time(self, a, e):
        return ("array", [("bulk", str(int(self.now))), ("bulk", str(int(self.now * 1e6) % 1_000_000))])

    def c_role(self, a, e):
        return ("array", [("bulk", "master"), ("int", 0), ("array", [])])

    def c_lastsave(self, a, e):
        return ("int", int(self.now) - 60)


def _unknown(argv: list[str], valkey: bool) -> str:
    if valkey:
        shown = " ".join(f"'{x}'" for x in argv[1:])
        return f"ERR unknown command '{argv[0]}', with args beginning with: {shown}"
    return f"ERR unknown command `{argv[0]}`, with args beginning with: " + "".join(f"`{x}`, " for x in argv[1:])


def _slice(items: list, start: str, stop: str) -> list:
    try:
        i, j = int(start), int(stop)
    except ValueError:
        return []
    n = len(items)
    i, j = (i + n if i < 0 else i), (j + n if j < 0 else j)
    return items[max(i, 0): j + 1]


def _score(score: float) -> str:
    return str(int(score)) if float(score).is_integer() else repr(score)


def _client_list(s: Session) -> str:
    """Return CLIENT LIST: the app's connections, then this one."""
    ip, lines = pod_ip(s.server.pod), []
    peers = [(pod_ip(p), "zrange") for p in redis_data.clients(s.twin, s.server)] + [(s.client_ip, "client")]
    for n, (peer, cmd) in enumerate(peers):
        port = 40000 + (n * 7919) % 20000
        lines.append(f"id={n + 3} addr={peer}:{port} laddr={ip if peer != '127.0.0.1' else '127.0.0.1'}:6379 "
                     f"fd={n + 8} name= age={0 if cmd == 'client' else 300} idle=0 flags=N db={s.n} sub=0 psub=0 "
                     f"multi=-1 qbuf=26 qbuf-free=40928 argv-mem=10 obl=0 oll=0 omem=0 tot-mem=61466 events=r "
                     f"cmd={cmd} user=default redir=-1")
    return "\n".join(lines) + "\n"
