"""What each kind of program does when its container starts: dependencies checked, lines printed, exit or serve."""

from __future__ import annotations

import json
import re

from aoi.apps.catalog import App
from aoi.twin.behaviour import config_files
from aoi.twin.behaviour.logformat import format_line
from aoi.twin.behaviour.mongo import MongoServer, tls_mode, volume_key
from aoi.twin.behaviour.network import connect
from aoi.twin.kubelet.runtime import Boot

DIAL_TIMEOUT = 10.0  # mgo's dial timeout before "no reachable servers"
GO_PANIC = ["", "goroutine 1 [running]:", "github.com/rs/zerolog.(*Logger).Panic.func1({0xc0000a4000, 0x14})",
            "\t/go/pkg/mod/github.com/rs/zerolog@v1.29.0/log.go:376 +0x2d", "main.main()",
            "\t/go/src/github.com/harlow/go-micro-services/cmd/{service}/main.go:47 +0x8a5"]


def _lines(behaviour, pod, container, app, program, upto: str | None = None) -> tuple[list, float]:
    """Return the program's start-up lines (optionally only up to the first line containing `upto`)."""
    t0 = behaviour.twin.clock.now()
    lines = behaviour.runtime.startup_lines(app, program, pod, container, t0)
    if upto is not None:
        cut = next((i for i, (_, text) in enumerate(lines) if upto in text), len(lines) - 1)
        lines = lines[:cut + 1]
    return lines, (lines[-1][0] if lines else 0.0)


def _fmt(app: App, program: str) -> str:
    return (app.logs.get(program) or {}).get("format", "plain")


def _mongo_problem(behaviour, ns: str, mongo: dict, port: int) -> tuple[str, str]:
    """Check a Go service's MongoDB at boot; return (kind, message) of the first problem, or ("", "")."""
    twin = behaviour.twin
    reach = connect(twin, behaviour, ns, mongo["service"], port)
    if not reach.ok:
        return "dial", "no reachable servers"
    server = twin.extensions.mongo.server(reach.pod)
    if server is None or server.tls_mode == "requireTLS":
        return "dial", "no reachable servers"
    data = twin.extensions.mongo.data(server.volume)
    user = None
    if server.auth and mongo.get("user"):
        user = data.authenticate(mongo["user"], mongo.get("password", ""), "admin")
        if user is None:
            return "auth", "server returned error on SASL authentication step: Authentication failed."
    if server.auth and not data.can_write(user, mongo["db"]):
        collection = mongo["db"].removesuffix("-db")
        return "write", (f'not authorized on {mongo["db"]} to execute command {{ insert: "{collection}", documents: '
                         f'[ {{ _id: ObjectId(\'{behaviour.rng.getrandbits(96):024x}\') }} ], ordered: true }}')
    return "", ""


def hotel_service(behaviour, pod, container, app, proc) -> Boot:
    """A HotelReservation Go service: dial MongoDB, authenticate, seed data, then serve (or die trying)."""
    spec = app.components.get(proc.component or "", {})
    mongo = spec.get("mongo")
    if proc.program.endswith("-app3") and mongo:
        mongo = {**mongo, "port": 27777}  # the buggy image dials the wrong port
    lines, end = _lines(behaviour, pod, container, app, proc.program)
    if not mongo:
        return Boot(lines=lines)
    kind, message = _mongo_problem(behaviour, pod["metadata"]["namespace"], mongo, mongo.get("port", 27017))
    if not kind:
        return Boot(lines=lines)
    marker = {"dial": "Initializing DB connection", "auth": "Initializing DB connection",
              "write": "Generating test data"}[kind]
    lines, end = _lines(behaviour, pod, container, app, proc.program, marker)
    source = f"cmd/{proc.component}/db.go:{26 if kind != 'write' else 45}"
    delay = DIAL_TIMEOUT if kind == "dial" else 0.05
    t = behaviour.twin.clock.now() + end + delay
    level = "PNC" if kind != "write" else "FTL"
    fail = [(end + delay, format_line("zerolog", t, level, source, message))]
    if level == "PNC":
        fail += [(end + delay, f"panic: {message}")] + [
            (end + delay, text.replace("{service}", proc.component or "")) for text in GO_PANIC]
    return Boot(lines=lines + fail, exit_after=end + delay + 0.01, exit_code=2 if level == "PNC" else 1)


def _file(behaviour, pod, container, path: str) -> str | None:
    """Read a file the container sees (mounted ConfigMaps and Secrets)."""
    from aoi.twin.kubelet.execution import exec_context

    ctx = exec_context(behaviour.twin, pod, container["name"])
    return ctx.files.get(path).decode(errors="replace") if path in ctx.files else None  # binaryData can be anything


def _refuse(refusal: config_files.Refusal) -> Boot:
    """Print a program's refusal of its config file and exit at once (the kubelet restarts it, backing off)."""
    return Boot(lines=[(0.0, line) for line in refusal.lines], exit_after=0.1, exit_code=refusal.exit_code)


def mongod(behaviour, pod, container, app, proc) -> Boot:
    """mongod: read its config file, open its data volume (initialising it once), read TLS and auth, serve."""
    from aoi.twin.kubelet.execution import run_in_container

    args = (container.get("command") or []) + (container.get("args") or [])
    conf_path = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("--config", "-f")), None)
    conf = _file(behaviour, pod, container, conf_path) if conf_path else None
    refusal = config_files.mongo_start(container.get("command") or [], conf) if conf_path else None
    if refusal:
        return _refuse(refusal)
    mode = tls_mode(conf or "")
    state = behaviour.twin.extensions.mongo
    volume = volume_key(behaviour.twin, pod)
    data = state.data(volume)
    lines, end = _lines(behaviour, pod, container, app, proc.program)
    if mode == "requireTLS" and _file(behaviour, pod, container, "/etc/tls/tls.pem") is None:
        t = behaviour.twin.clock.now() + end
        msg = ("Cannot read certificate file: /etc/tls/tls.pem "
               "error:02001002:system library:fopen:No such file or directory")
        return Boot(lines=lines + [(end, format_line("mongo-json", t, "E", "NETWORK", msg))], exit_after=end + 0.1,
                    exit_code=1)
    server = MongoServer(volume, "--auth" in args, mode)
    state.servers[pod["metadata"]["uid"]] = server
    if not data.initialized:
        data.initialized = server.initializing = True  # init scripts run before access control is on
        for path in sorted(_init_scripts(behaviour, pod, container)):
            run_in_container(behaviour.twin, pod, container["name"], ["bash", path])
        server.initializing = False
    t = behaviour.twin.clock.now() + end
    ssl = "requireSSL" if mode == "requireTLS" else "off"
    note = format_line("mongo-json", t, "I", "NETWORK", f"Waiting for connections (port 27017, ssl {ssl})")
    return Boot(lines=lines + [(end + 0.01, note)])


def _init_scripts(behaviour, pod, container) -> list[str]:
    """Return the init scripts mounted at /docker-entrypoint-initdb.d."""
    from aoi.twin.kubelet.execution import exec_context

    ctx = exec_context(behaviour.twin, pod, container["name"])
    return [p for p in ctx.files if p.startswith("/docker-entrypoint-initdb.d/") and p.endswith((".sh", ".js"))]


def thrift_service(behaviour, pod, container, app, proc) -> Boot:
    """A SocialNetwork Thrift service: create its MongoDB indexes first; keep retrying until that works."""
    lines, _ = _lines(behaviour, pod, container, app, proc.program)
    stores = [c for c in app.components.get(proc.component or "", {}).get("calls", [])
              if app.components.get(c, {}).get("protocol") == "mongodb"]
    if not stores:
        return Boot(lines=lines)
    problem = mongo_index_problem(behaviour, pod["metadata"]["namespace"], stores[0])
    if not problem:
        return Boot(lines=lines)
    proc.listening, proc.retry = False, stores[0]
    behaviour.twin.controllers["traffic"].watch_retry(pod, container["name"])
    return Boot(lines=[])


def mongo_index_problem(behaviour, ns: str, store: str) -> str:
    """Return why createIndexes against a store fails ("" when it works)."""
    reach = connect(behaviour.twin, behaviour, ns, store, 27017)
    if not reach.ok:
        return ("No suitable servers found: `serverSelectionTimeoutMS` expired: "
                f"[connection refused calling ismaster on '{store}:27017']")
    server = behaviour.twin.extensions.mongo.server(reach.pod)
    if server and server.tls_mode == "requireTLS":
        return (f"No suitable servers found (`serverSelectionTryOnce` set): [connection closed calling ismaster on "
                f"'{store}:27017']")
    return ""


def redis_server(behaviour, pod, container, app, proc) -> Boot:
    """redis-server: read the config file named by its first argument (if any), refuse a bad one, else serve."""
    path = config_files.redis_config_path((container.get("command") or []) + (container.get("args") or []))
    conf = _file(behaviour, pod, container, path) if path else None
    if path and conf is None:
        why = f"Fatal error, can't open config file '{path}': No such file or directory"
        t = behaviour.twin.clock.now()
        return _refuse(config_files.Refusal([format_line(_fmt(app, proc.program), t, "#", "C", why)], 1))
    refusal = config_files.redis(conf) if conf is not None else None
    return _refuse(refusal) if refusal else plain(behaviour, pod, container, app, proc)


def flagd(behaviour, pod, container, app, proc) -> Boot:
    """flagd: load the flag file (the chart copies the flagd-config ConfigMap in at start)."""
    cm = behaviour.twin.get("configmaps", pod["metadata"]["namespace"], "flagd-config")
    flags = {}
    try:
        doc = json.loads(((cm or {}).get("data") or {}).get("demo.flagd.json", "{}"))
        for name, flag in (doc.get("flags") or {}).items():
            variant = flag.get("defaultVariant")
            flags[name] = variant if flag.get("state", "ENABLED") == "ENABLED" else "off"
    except (ValueError, AttributeError):
        pass
    behaviour.flags[pod["metadata"]["namespace"]] = flags
    lines, _ = _lines(behaviour, pod, container, app, proc.program)
    return Boot(lines=lines)


def wrk2(behaviour, pod, container, app, proc) -> Boot:
    """wrk2: send the workload for its duration; the traffic engine writes the report when it ends."""
    duration = behaviour.twin.controllers["traffic"].start_wrk(pod, container)
    return Boot(lines=[], exit_after=duration + 0.5)


def load_generator(behaviour, pod, container, app, proc) -> Boot:
    """The demo's Locust load generator: browse the shop for as long as it runs."""
    workload = (app.behaviour.get("workloads") or {}).get("load-generator") or {}
    if workload:
        behaviour.twin.controllers["traffic"].start_continuous(pod, container, workload["url"], workload["rate"],
                                                               workload["routes"])
    return Boot(lines=_lines(behaviour, pod, container, app, proc.program)[0])


WAIT_FOR = re.compile(r"nc -z(?: -v)?(?: -w\s*\d+)? ([\w.-]+) (\d+)")


def wait_for(behaviour, pod, container, app, proc) -> Boot:
    """An init container waiting for a dependency (`until nc -z host port`): done once the host answers."""
    script = " ".join((container.get("command") or []) + (container.get("args") or []))
    host, port = WAIT_FOR.search(script).groups()
    reach = connect(behaviour.twin, behaviour, pod["metadata"]["namespace"], host, int(port))
    if reach.ok:
        return Boot(lines=[(0.5, f"{host} ({reach.address}) open")], exit_after=0.6)
    lines = [(2.0 * i, f"waiting for {host}") for i in range(15)]
    return Boot(lines=lines, exit_after=30.0, exit_code=1)


def plain(behaviour, pod, container, app, proc) -> Boot:
    """Any other program: print its start-up lines and serve (one-shot containers finish)."""
    lines = _lines(behaviour, pod, container, app, proc.program)[0]
    one_shot = pod["spec"].get("restartPolicy") in ("Never", "OnFailure") or is_init(pod, container)
    return Boot(lines=lines, exit_after=2.0 if one_shot else None)


def is_init(pod: dict, container: dict) -> bool:
    """Tell whether a container is one of the pod's init containers."""
    return any(c["name"] == container["name"] for c in pod["spec"].get("initContainers") or [])


def handler_for(app: App, program: str, pod: dict | None = None, container: dict | None = None):
    """Return the boot function for a program."""
    script = " ".join(((container or {}).get("command") or []) + ((container or {}).get("args") or []))
    if pod is not None and is_init(pod, container) and WAIT_FOR.search(script):
        return wait_for
    if program.startswith("hotel-"):
        return hotel_service
    if program == "mongod":
        return mongod
    if program == "flagd":
        return flagd
    if program == "redis-server":
        return redis_server
    if program == "wrk2":
        return wrk2
    if program == "load-generator":
        return load_generator
    if app.name == "social-network" and program.endswith("Service"):
        return thrift_service
    return plain
