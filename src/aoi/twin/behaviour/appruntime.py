"""The catalog runtime: images come from the app catalogs, containers print their programs' start-up logs.

Containers whose image no catalog program covers run their command through the simulated shell: `sh -c "exit 1"`
exits 1 (and crash-loops under restartPolicy Always), `sleep 30` exits after 30 simulated seconds, while
`sleep infinity`, `tail -f`, endless loops, daemons the twin does not simulate and images run without a command
keep running.
"""

from __future__ import annotations

import fnmatch

from aoi.apps.catalog import App
from aoi.twin.behaviour.logformat import format_line
from aoi.twin.core.ids import fnv32a
from aoi.twin.kubelet.runtime import Boot

# Public images any user may run besides the apps' own (pulls of anything else fail with NotFound).
PUBLIC_IMAGES = ("busybox", "busybox:*", "nginx", "nginx:*", "alpine", "alpine:*", "ubuntu", "ubuntu:*",
                 "debian", "debian:*", "curlimages/curl", "curlimages/curl:*", "python:*", "redis:*", "mongo:*",
                 "registry.k8s.io/pause:*", "gcr.io/google-containers/pause:*", "nicolaka/netshoot*",
                 "deathstarbench/wrk2-client:*")
ONE_SHOT_SECONDS = 2.0
MIN_RUN_SECONDS = 0.1  # how long a command that never sleeps takes to exit
LOOP_SLEEPS = 100  # a command that sleeps this often is a keep-alive loop: it runs until stopped
SLEEP_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


class _Forever(Exception):
    """The command would never end on its own."""


class _Timer:
    """Stand-ins for `sleep` and `tail -f` in a booting container: add up the simulated seconds slept."""

    def __init__(self, programs):
        self.seconds, self.sleeps, self.forever = 0.0, 0, False
        self._sleep, self._tail = programs.lookup("sleep"), programs.lookup("tail")

    def sleep(self, argv, ctx):
        """Count the interval (GNU sleep sums its operands); `infinity` marks a command that never ends."""
        result = self._sleep(argv, ctx)
        if result.exit_code != 0:
            return result
        self.sleeps += 1
        if self.sleeps >= LOOP_SLEEPS:
            raise _Forever()
        for arg in argv[1:]:
            if arg.startswith("inf"):
                self.forever = True
            else:
                self.seconds += float(arg.rstrip("smhd")) * SLEEP_UNITS[arg[-1] if arg[-1] in "smhd" else ""]
        return result

    def tail(self, argv, ctx):
        """Print what `tail` prints; with -f/-F/--follow, go on running."""
        follow = any(a in ("-f", "-F", "--follow") or (a.startswith("-") and not a.startswith("--") and
                                                       ("f" in a or "F" in a)) for a in argv[1:])
        self.forever = self.forever or follow
        return self._tail([a for a in argv if a not in ("-f", "-F", "--follow")], ctx)


def _log_lines(result, until: float) -> list[tuple[float, str]]:
    """Turn a command's stdout and stderr into timed log lines (written just after start)."""
    text = (result.stdout + result.stderr).decode("utf-8", "replace")
    return [(min(0.001 * (i + 1), until), line) for i, line in enumerate(text.splitlines())]


def _service_of(app: App, pod: dict) -> str:
    """Return the service name the pod serves (by the app's service label)."""
    labels = pod["metadata"].get("labels") or {}
    return labels.get(app.service_label or "", "") or pod["metadata"]["name"]


class CatalogRuntime:
    """Resolve containers to the catalog's programs and boot them with their start-up logs."""

    def __init__(self, apps: list[App]):
        self.apps = apps

    def program(self, container: dict, pod: dict | None = None) -> tuple[App, str] | None:
        """Return (app, program) for a container, or None for images no app knows.

        Given the pod, an app with a namespace only covers pods in that namespace: a `busybox` the astronomy shop
        uses for its init containers is a plain busybox elsewhere; the pod's own app is asked first.
        """
        namespace = (pod or {}).get("metadata", {}).get("namespace")
        for app in sorted(self.apps, key=lambda a: a.namespace != namespace):
            if namespace and app.namespace and app.namespace != namespace:
                continue
            name = app.program_for(container.get("image", ""), container.get("command"), container.get("args"))
            if name:
                return app, name
        return None

    def image_exists(self, image: str) -> bool:
        """Tell whether the image can be pulled."""
        if any(app.knows_image(image) for app in self.apps):
            return True
        return any(fnmatch.fnmatchcase(image, pattern) for pattern in PUBLIC_IMAGES)

    def startup_lines(self, app: App, program: str, pod: dict, container: dict, t0: float) -> list[tuple[float, str]]:
        """Return the program's start-up lines, written at small deterministic offsets after t0."""
        spec = app.logs.get(program) or {}
        port = next((str(p.get("containerPort")) for p in container.get("ports") or []), "")
        service = _service_of(app, pod)
        out, offset = [], 0.0
        for i, (level, source, message) in enumerate(spec.get("startup") or []):
            offset += 0.002 + (fnv32a(f"{program}{i}".encode()) % 40) / 1000
            text = str(message).replace("{service}", service).replace("{port}", port)
            out.append((offset, format_line(spec.get("format", "plain"), t0 + offset, level, str(source), text)))
        return out

    def boot(self, twin, pod: dict, container: dict, restart_count: int) -> Boot:
        """Start a container: the behaviour model decides when one is attached, else run quietly."""
        behaviour = twin.extensions.behaviour
        if behaviour is not None:
            return behaviour.boot(twin, pod, container, restart_count)
        return self.default_boot(twin, pod, container)

    def default_boot(self, twin, pod: dict, container: dict) -> Boot:
        """Boot without a behaviour model: print start-up logs or run the command; one-shot containers exit 0."""
        found = self.program(container, pod)
        if found is None:
            booted = command_boot(twin, pod, container)
            if booted is not None:
                return booted
        lines = self.startup_lines(*found, pod, container, twin.clock.now()) if found else []
        one_shot = pod["spec"].get("restartPolicy") in ("Never", "OnFailure") or any(
            c["name"] == container["name"] for c in pod["spec"].get("initContainers") or [])
        return Boot(lines=lines, exit_after=ONE_SHOT_SECONDS if one_shot else None)


def command_boot(twin, pod: dict, container: dict) -> Boot | None:
    """Run the container's command in the simulated shell; None when it is no program the twin simulates."""
    from aoi.twin.kubelet.execution import exec_context

    argv = [*(container.get("command") or []), *(container.get("args") or [])]
    ctx = exec_context(twin, pod, container["name"]) if argv else None
    if ctx is None or ctx.resolve(argv[0]) is None:
        return None  # no command (the image's daemon) or a daemon the twin does not simulate: it keeps running
    timer = _Timer(ctx.programs)
    ctx.programs.register("sleep", timer.sleep)
    ctx.programs.register("tail", timer.tail)
    try:
        result = ctx.resolve(argv[0])(list(argv), ctx)  # as registry.run does, keeping ctx.steps to inspect
    except _Forever:
        return Boot()
    if timer.forever or _looped(ctx):
        return Boot(lines=_log_lines(result, 1.0))
    took = max(timer.seconds, MIN_RUN_SECONDS)
    return Boot(lines=_log_lines(result, took), exit_after=took, exit_code=result.exit_code)


def _looped(ctx) -> bool:
    """Tell whether the shell gave up on a loop that never ends (it counts the commands it ran)."""
    from aoi.shellsim import interpreter

    return getattr(ctx, "steps", [0])[0] > getattr(interpreter, "STEP_LIMIT", float("inf"))
