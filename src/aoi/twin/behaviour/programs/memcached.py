"""What a memcached answers on its text protocol: stats, stats items/slabs/settings, version, get."""

from __future__ import annotations

from aoi.twin.behaviour.programs.common import behaviour_of, started_at


def is_memcached(twin, pod: dict) -> str:
    """Return the name of the pod's memcached container ("" when it runs none)."""
    behaviour = behaviour_of(twin)
    for c in pod["spec"]["containers"]:
        proc = behaviour.process(pod, c["name"])
        if proc is not None and proc.program == "memcached":
            return c["name"]
    return ""


def _settings(pod: dict, container: str) -> dict:
    """Read -m, -c, -t from the command line (the official image reads no environment variables)."""
    spec = next(c for c in pod["spec"]["containers"] if c["name"] == container)
    argv = (spec.get("command") or []) + (spec.get("args") or [])
    flags = {"-m": 64, "-c": 1024, "-t": 4}
    for flag, value in zip(argv, argv[1:]):
        if flag in flags and value.isdigit():
            flags[flag] = int(value)
    tag = spec.get("image", "").rsplit(":", 1)[-1] if ":" in spec.get("image", "") else ""
    return {"maxbytes": flags["-m"] * 2 ** 20, "maxconns": flags["-c"], "threads": flags["-t"],
            "version": tag if tag[:1].isdigit() else "1.6.21"}


def _counters(twin, pod: dict, container: str, now: float) -> dict:
    served = sum(behaviour_of(twin).load.requests.get(pod["metadata"]["uid"], {}).values())
    start = started_at(twin, pod, container)
    items = min(served, 80)
    return {"uptime": int(now - (start if start is not None else now)), "gets": served,
            "hits": served - items, "misses": items, "sets": items, "items": items, "bytes": items * 1088}


def stats(twin, pod: dict, container: str, now: float, which: str = "") -> list[str]:
    """Return the lines `stats [which]` answers, ending with END."""
    s, c = _settings(pod, container), _counters(twin, pod, container, now)
    if which == "settings":
        lines = [("maxbytes", s["maxbytes"]), ("maxconns", s["maxconns"]), ("tcpport", 11211), ("udpport", 0),
                 ("verbosity", 0), ("num_threads", s["threads"]), ("evictions", "on"), ("growth_factor", "1.25"),
                 ("chunk_size", 48), ("item_size_max", 1048576), ("lru_crawler", "yes")]
    elif which == "items":
        lines = [] if not c["items"] else [("items:1:number", c["items"]), ("items:1:age", c["uptime"]),
                                          ("items:1:evicted", 0), ("items:1:outofmemory", 0),
                                          ("items:1:reclaimed", 0), ("items:1:expired_unfetched", 0)]
    elif which == "slabs":
        lines = ([("1:chunk_size", 1184), ("1:chunks_per_page", 885), ("1:total_pages", 1),
                  ("1:total_chunks", 885), ("1:used_chunks", c["items"]), ("1:get_hits", c["hits"]),
                  ("1:cmd_set", c["sets"])] if c["items"] else []) + [("active_slabs", int(bool(c["items"]))),
                                                                    ("total_malloced", 1048576 * bool(c["items"]))]
    else:
        lines = _general(s, c, now)
    return [f"STAT {k} {v}" for k, v in lines] + ["END"]


def _general(s: dict, c: dict, now: float) -> list[tuple[str, object]]:
    return [("pid", 1), ("uptime", c["uptime"]), ("time", int(now)), ("version", s["version"]),
            ("libevent", "2.1.12-stable"), ("pointer_size", 64), ("rusage_user", f"{c['uptime'] * 0.0011:.6f}"),
            ("rusage_system", f"{c['uptime'] * 0.0019:.6f}"), ("max_connections", s["maxconns"]),
            ("curr_connections", 2), ("total_connections", 3 + c["gets"] // 100), ("rejected_connections", 0),
            ("connection_structures", 3), ("cmd_get", c["gets"]), ("cmd_set", c["sets"]), ("cmd_flush", 0),
            ("cmd_touch", 0), ("get_hits", c["hits"]), ("get_misses", c["misses"]), ("get_expired", 0),
            ("get_flushed", 0), ("delete_misses", 0), ("delete_hits", 0), ("incr_misses", 0), ("incr_hits", 0),
            ("decr_misses", 0), ("decr_hits", 0), ("cas_misses", 0), ("cas_hits", 0), ("cas_badval", 0),
            ("touch_hits", 0), ("touch_misses", 0), ("auth_cmds", 0), ("auth_errors", 0),
            ("bytes_read", 40 * c["gets"] + 1200 * c["sets"]), ("bytes_written", 1150 * c["hits"] + 5 * c["gets"]),
            ("limit_maxbytes", s["maxbytes"]), ("accepting_conns", 1), ("listen_disabled_num", 0),
            ("time_in_listen_disabled_us", 0), ("threads", s["threads"]), ("conn_yields", 0),
            ("hash_power_level", 16), ("hash_bytes", 524288), ("hash_is_expanding", 0), ("bytes", c["bytes"]),
            ("curr_items", c["items"]), ("total_items", c["sets"]), ("expired_unfetched", 0),
            ("evicted_unfetched", 0), ("evictions", 0), ("reclaimed", 0)]


def answer(twin, pod: dict, container: str, now: float, request: str) -> tuple[str, bool]:
    """Answer the lines a client sent; return (reply text with CRLFs, whether the server closed the connection)."""
    out = []
    for line in request.replace("\r", "").split("\n"):
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            return "".join(f"{x}\r\n" for x in out), True
        if words[0] == "stats":
            out += stats(twin, pod, container, now, words[1] if len(words) > 1 else "")
        elif words[0] == "version":
            out.append(f"VERSION {_settings(pod, container)['version']}")
        elif words[0] in ("get", "gets") and len(words) > 1:
            out.append("END")
        elif words[0] == "flush_all":
            out.append("OK")
        else:
            out.append("ERROR")
    return "".join(f"{x}\r\n" for x in out), False
