"""Log line formats of the programs the apps run: zerolog, boost, mongod JSON, klog, logfmt and the rest."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson

from aoi.twin.core.ids import fnv32a

LEVELS = {"trace": ("TRC", "trace"), "debug": ("DBG", "debug"), "info": ("INF", "info"),
          "warn": ("WRN", "warning"), "error": ("ERR", "error"), "fatal": ("FTL", "fatal"),
          "panic": ("PNC", "panic")}
ALIASES = {"I": "info", "INF": "info", "INFO": "info", "NOTICE": "info", "*": "info", "-": "debug", ".": "debug",
           "W": "warn", "WRN": "warn", "WARN": "warn", "WARNING": "warn", "#": "warn",
           "E": "error", "ERR": "error", "ERROR": "error", "F": "fatal", "FTL": "fatal", "FATAL": "fatal",
           "CRIT": "fatal", "PNC": "panic", "PANIC": "panic", "D": "debug", "DBG": "debug", "DEBUG": "debug",
           "TRC": "trace", "TRACE": "trace"}


def level_of(raw: str) -> str:
    """Return the canonical level (trace..panic) of a level token of any format."""
    return ALIASES.get(str(raw).upper(), ALIASES.get(str(raw), "info"))


def _dt(t: float) -> datetime:
    return datetime.fromtimestamp(t, tz=UTC)


def _ms(t: float) -> str:
    return f"{int(t * 1000) % 1000:03d}"


def _us(t: float) -> str:
    return f"{int(round(t * 1e6)) % 1_000_000:06d}"


def _zerolog(t, lvl, raw, src, msg):
    return f"{_dt(t):%Y-%m-%dT%H:%M:%SZ} {LEVELS[lvl][0]} {src} > {msg}"


def _boost(t, lvl, raw, src, msg):
    return f"[{_dt(t):%Y-%b-%d %H:%M:%S}.{_us(t)}] <{LEVELS[lvl][1]}>: ({src}) {msg}"


def _mongo(t, lvl, raw, src, msg):
    letter = {"warn": "W", "error": "E", "fatal": "F", "debug": "D1"}.get(lvl, "I")
    ident = 20000 + fnv32a(msg.encode()) % 30000
    stamp = f"{_dt(t):%Y-%m-%dT%H:%M:%S}.{_ms(t)}+00:00"
    body = orjson.dumps({"t": {"$date": stamp}}).decode()[:-1]
    return (f'{body},"s":"{letter}",  "c":"{src or "CONTROL":<8}", "id":{ident},   "ctx":"initandlisten",'
            f'"msg":{orjson.dumps(msg).decode()}}}')


def _redis(t, lvl, raw, src, msg):
    mark = {"debug": ".", "warn": "#", "error": "#", "fatal": "#"}.get(lvl, "*")
    return f"1:{src or 'M'} {_dt(t):%d %b %Y %H:%M:%S}.{_ms(t)} {mark} {msg}"


def _consul(t, lvl, raw, src, msg):
    tag = {"info": "INFO", "warn": "WARN", "error": "ERROR", "debug": "DEBUG"}.get(lvl, "INFO")
    if msg.startswith("==>"):
        return msg
    return f"{_dt(t):%Y-%m-%dT%H:%M:%S}.{_ms(t)}Z [{tag}]{' ' * (6 - len(tag))}{src}: {msg}"


def _zap_json(t, lvl, raw, src, msg):
    return orjson.dumps({"level": LEVELS[lvl][1][:4] if lvl == "warn" else lvl, "ts": round(t, 6),
                         "caller": src, "msg": msg}).decode()


def _etcd_json(t, lvl, raw, src, msg):
    return orjson.dumps({"level": lvl, "ts": f"{_dt(t):%Y-%m-%dT%H:%M:%S}.{_us(t)}Z", "caller": src,
                         "msg": msg}).decode()


def _klog(t, lvl, raw, src, msg):
    return f"{LEVELS[lvl][0][0] if lvl != 'panic' else 'F'}{_dt(t):%m%d %H:%M:%S}.{_us(t)}       1 {src}] {msg}"


def _logfmt(t, lvl, raw, src, msg):
    return f'ts={_dt(t):%Y-%m-%dT%H:%M:%S}.{_ms(t)}Z caller={src} level={lvl} msg={orjson.dumps(msg).decode()}'


def _logrus(t, lvl, raw, src, msg):
    return f'time="{_dt(t):%Y-%m-%dT%H:%M:%SZ}" level={LEVELS[lvl][1]} msg={orjson.dumps(msg).decode()}'


def _envoy(t, lvl, raw, src, msg):
    return f"[{_dt(t):%Y-%m-%d %H:%M:%S}.{_ms(t)}][1][{LEVELS[lvl][1]}][{src}] {msg}"


def _tabbed(t, lvl, raw, src, msg):
    return f"{_dt(t):%Y-%m-%dT%H:%M:%S}.{_ms(t)}Z\t{LEVELS[lvl][1][:4] if lvl == 'warn' else lvl}\t{src}\t{msg}"


def _kafka(t, lvl, raw, src, msg):
    return f"[{_dt(t):%Y-%m-%d %H:%M:%S},{_ms(t)}] {lvl.upper():<5} {msg} ({src})"


def _log4j(t, lvl, raw, src, msg):
    return f"[{_dt(t):%Y-%m-%dT%H:%M:%S},{_ms(t)}][{lvl.upper():<5}][{src}] {msg}"


def _nginx(t, lvl, raw, src, msg):
    level = str(raw).lower() if str(raw).lower() in ("notice", "warn", "error", "info", "crit") else LEVELS[lvl][1]
    return f"{_dt(t):%Y/%m/%d %H:%M:%S} [{level}] 1#1: {msg}"


def _dotnet(t, lvl, raw, src, msg):
    short = {"info": "info", "warn": "warn", "error": "fail", "fatal": "crit", "debug": "dbug"}.get(lvl, "info")
    return f"{short}: {src}[0]\n      {msg}"


def _java(t, lvl, raw, src, msg):
    return f"{_dt(t):%Y-%m-%d %H:%M:%S} - {src} - {msg}"


def _node(t, lvl, raw, src, msg):
    number = {"trace": 10, "debug": 20, "info": 30, "warn": 40, "error": 50, "fatal": 60}.get(lvl, 30)
    return orjson.dumps({"level": number, "time": int(t * 1000), "pid": 1, "hostname": src, "msg": msg}).decode()


def _python(t, lvl, raw, src, msg):
    return f"{_dt(t):%Y-%m-%d %H:%M:%S},{_ms(t)} {LEVELS[lvl][1].upper()} [{src}] - {msg}"


def _go_json(t, lvl, raw, src, msg):
    return orjson.dumps({"level": lvl, "msg": msg, "time": f"{_dt(t):%Y-%m-%dT%H:%M:%S}.{_us(t)}Z"}).decode()


def _plain(t, lvl, raw, src, msg):
    return msg


FORMATS = {"zerolog": _zerolog, "boost": _boost, "mongo-json": _mongo, "redis": _redis, "memcached": _plain,
           "consul": _consul, "jaeger-json": _zap_json, "etcd-json": _etcd_json, "klog": _klog, "logfmt": _logfmt,
           "logrus": _logrus, "envoy": _envoy, "flagd": _tabbed, "otel-collector": _tabbed, "kafka": _kafka,
           "log4j": _log4j, "nginx": _nginx, "otel-dotnet": _dotnet, "otel-java": _java, "otel-node": _node,
           "otel-python": _python, "otel-go": _go_json, "plain": _plain}


def format_line(fmt: str, t: float, level: str, source: str, message: str) -> str:
    """Render one log line in a program's format.

    Example:
        >>> format_line("zerolog", 0, "INF", "cmd/geo/main.go:23", "Reading config...")
        '1970-01-01T00:00:00Z INF cmd/geo/main.go:23 > Reading config...'
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown log format {fmt!r}; known: {', '.join(sorted(FORMATS))}")
    return FORMATS[fmt](t, level_of(level), level, source, message)
