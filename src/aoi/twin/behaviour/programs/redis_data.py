"""What each Redis/Valkey server holds (kept per pod in twin.extensions.redis) and what INFO reports about it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aoi.twin.behaviour.programs.basics import hex_id, rng_for
from aoi.twin.behaviour.programs.common import behaviour_of, pod_ip, started_at

REDIS_PROGRAMS = ("redis-server", "valkey-server")


@dataclass
class Entry:
    """One key: its type (string, hash, list, set, zset), value and expiry time."""

    kind: str
    value: object
    expire: float | None = None


@dataclass
class RedisServer:
    """One redis-server process: its databases and counters."""

    pod: dict
    container: str
    program: str
    version: str
    dbs: dict[int, dict[str, Entry]] = field(default_factory=dict)
    commands: int = 0

    def db(self, n: int, now: float) -> dict[str, Entry]:
        """Return database n with expired keys gone."""
        keys = self.dbs.setdefault(n, {})
        for key in [k for k, e in keys.items() if e.expire is not None and e.expire <= now]:
            del keys[key]
        return keys


def server_in(twin, pod: dict) -> RedisServer | None:
    """Return the Redis server running in a pod (created and seeded on first use), if it runs one."""
    behaviour = behaviour_of(twin)
    for c in pod["spec"]["containers"]:
        proc = behaviour.process(pod, c["name"])
        if proc is not None and proc.program in REDIS_PROGRAMS:
            servers = twin.extensions.redis
            key = (pod["metadata"]["uid"], c["name"])
            if key not in servers:
                servers[key] = RedisServer(pod, c["name"], proc.program, _version(c.get("image", ""), proc.program))
                servers[key].dbs[0] = seed(behaviour.component_of(pod) or "", twin.clock.now())
            return servers[key]
    return None


def _version(image: str, program: str) -> str:
    tag = image.rsplit(":", 1)[-1] if ":" in image else ""
    found = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", tag)
    if not found:
        return "8.0.1" if program == "valkey-server" else "6.2.4"
    return ".".join(part or "0" for part in found.groups())


def seed(component: str, now: float) -> dict[str, Entry]:
    """Return the keys an app's traffic has written into a store by the time anyone looks."""
    rng = rng_for("redis", component)
    users = sorted(rng.sample(range(1, 962), 6))
    post = lambda: str(rng.getrandbits(62))  # noqa: E731
    if component in ("home-timeline-redis", "user-timeline-redis"):
        return {str(u): Entry("zset", {post(): float(int(now * 1000) - rng.randrange(10 ** 7)) for _ in range(3)})
                for u in users}
    if component == "social-graph-redis":
        out = {}
        for u in users:
            for side in ("followers", "followees"):
                out[f"{u}:{side}"] = Entry("zset", {str(f): float(int(now) - rng.randrange(86400))
                                                    for f in rng.sample(range(1, 962), 4)})
        return out
    if component == "valkey-cart":
        return {_guid(rng): Entry("hash", {"cart": _cart(rng)}, now + 3600 * 24 * 2) for _ in range(4)}
    return {}


def _guid(rng) -> str:
    h = hex_id(rng, 32)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _cart(rng) -> str:
    """Return a cart as the cart service stores it (protobuf bytes shown as text)."""
    products = ["OLJCESPC7Z", "66VCHSJNUP", "1YMWWN1N4O", "L9ECAV7KIM", "2ZYFJ3GM2N", "0PUK6V6EV0"]
    items = "".join(f"\x12\x0e\n\n{rng.choice(products)}\x10{chr(1 + rng.randrange(5))}" for _ in range(2))
    return f"\n${_guid(rng)}{items}"


def clients(twin, server: RedisServer) -> list[dict]:
    """Return the pods connected to a store: those of the components that call it."""
    behaviour = behaviour_of(twin)
    own = behaviour.component_of(server.pod)
    app = behaviour.apps.get(server.pod["metadata"]["namespace"])
    callers = [name for name, spec in (app.components.items() if app else []) if own in (spec.get("calls") or [])]
    return [p for p in twin.list("pods", server.pod["metadata"]["namespace"])
            if behaviour.component_of(p) in callers and pod_ip(p)]


def info(twin, server: RedisServer, section: str, now: float) -> str:
    """Return INFO's text for a section ('' = the default sections), lines ending in CRLF."""
    start = started_at(twin, server.pod, server.container) or now
    up, used = int(now - start), 866000 + 220 * sum(len(db) for db in server.dbs.values())
    keyspace = [f"db{n}:keys={len(keys)},expires={sum(e.expire is not None for e in keys.values())},avg_ttl=0"
                for n, keys in sorted(server.dbs.items()) if server.db(n, now)]
    served = sum(behaviour_of(twin).load.requests.get(server.pod["metadata"]["uid"], {}).values()) + server.commands
    valkey = server.program == "valkey-server"
    sections = {
        "server": [f"redis_version:{'7.2.4' if valkey else server.version}"] +
                  (["server_name:valkey", f"valkey_version:{server.version}"] if valkey else []) +
                  ["redis_git_sha1:00000000", "redis_git_dirty:0",
                   f"redis_build_id:{hex_id(rng_for(server.version), 16)}",
                   "redis_mode:standalone", "os:Linux 6.8.0-49-generic x86_64", "arch_bits:64",
                   "multiplexing_api:epoll", "gcc_version:10.2.1", "process_id:1", "process_supervised:no",
                   f"run_id:{hex_id(rng_for('run', server.pod['metadata']['uid']), 40)}", "tcp_port:6379",
                   f"server_time_usec:{int(now * 1e6)}", f"uptime_in_seconds:{up}", f"uptime_in_days:{up // 86400}",
                   "hz:10", "configured_hz:10", f"executable:/data/{server.program}", "config_file:"],
        "clients": [f"connected_clients:{len(clients(twin, server)) + 1}", "cluster_connections:0",
                    "maxclients:10000", "blocked_clients:0", "tracking_clients:0"],
        "memory": [f"used_memory:{used}", f"used_memory_human:{used / 1024:.2f}K", f"used_memory_rss:{used * 9}",
                   f"used_memory_rss_human:{used * 9 / 2 ** 20:.2f}M", f"used_memory_peak:{used + 20480}",
                   f"used_memory_peak_human:{(used + 20480) / 1024:.2f}K", "maxmemory:0", "maxmemory_human:0B",
                   "maxmemory_policy:noeviction", "mem_fragmentation_ratio:9.12", "mem_allocator:jemalloc-5.1.0"],
        "persistence": ["loading:0", "rdb_changes_since_last_save:0", "rdb_bgsave_in_progress:0",
                        f"rdb_last_save_time:{int(start)}", "rdb_last_bgsave_status:ok", "aof_enabled:0"],
        "stats": [f"total_connections_received:{len(clients(twin, server)) + 1 + server.commands}",
                  f"total_commands_processed:{served}", "instantaneous_ops_per_sec:0", "rejected_connections:0",
                  "expired_keys:0", "evicted_keys:0", f"keyspace_hits:{served * 9 // 10}",
                  f"keyspace_misses:{served // 10}"],
        "replication": ["role:master", "connected_slaves:0", "master_failover_state:no-failover",
                        f"master_replid:{hex_id(rng_for('replid', server.pod['metadata']['uid']), 40)}",
                        "master_repl_offset:0"],
        "cpu": [f"used_cpu_sys:{up * 0.0021:.6f}", f"used_cpu_user:{up * 0.0017:.6f}"],
        "modules": [], "cluster": ["cluster_enabled:0"], "keyspace": keyspace,
    }
    wanted = [section.lower()] if section and section.lower() not in ("all", "default", "everything") else sections
    text = [f"# {name.capitalize()}\r\n" + "".join(f"{line}\r\n" for line in sections[name])
            for name in wanted if name in sections]
    return "\r\n".join(text)
