"""The catalog runtime: images come from the app catalogs, containers print their programs' start-up logs."""

from __future__ import annotations

import fnmatch

from aoi.twin.catalog import App
from aoi.twin.ids import fnv32a
from aoi.twin.logformat import format_line
from aoi.twin.runtime import Boot

# Public images any user may run besides the apps' own (pulls of anything else fail with NotFound).
PUBLIC_IMAGES = ("busybox", "busybox:*", "nginx", "nginx:*", "alpine", "alpine:*", "ubuntu", "ubuntu:*",
                 "debian", "debian:*", "curlimages/curl", "curlimages/curl:*", "python:*", "redis:*", "mongo:*",
                 "registry.k8s.io/pause:*", "gcr.io/google-containers/pause:*", "nicolaka/netshoot*",
                 "deathstarbench/wrk2-client:*")
ONE_SHOT_SECONDS = 2.0


def _service_of(app: App, pod: dict) -> str:
    """Return the service name the pod serves (by the app's service label)."""
    labels = pod["metadata"].get("labels") or {}
    return labels.get(app.service_label or "", "") or pod["metadata"]["name"]


class CatalogRuntime:
    """Resolve containers to the catalog's programs and boot them with their start-up logs."""

    def __init__(self, apps: list[App]):
        self.apps = apps

    def program(self, container: dict) -> tuple[App, str] | None:
        """Return (app, program) for a container, or None for images no app knows."""
        for app in self.apps:
            name = app.program_for(container.get("image", ""), container.get("command"), container.get("args"))
            if name:
                return app, name
        return None

    def image_exists(self, image: str) -> bool:
        """Tell whether the image can be pulled."""
        if any(app.program_for(image, None, None) for app in self.apps):
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
        behaviour = twin.extensions.get("behaviour")
        if behaviour is not None:
            return behaviour.boot(twin, pod, container, restart_count)
        return self.default_boot(twin, pod, container)

    def default_boot(self, twin, pod: dict, container: dict) -> Boot:
        """Boot without a behaviour model: print start-up logs; one-shot containers exit 0."""
        found = self.program(container)
        lines = self.startup_lines(*found, pod, container, twin.clock.now()) if found else []
        one_shot = pod["spec"].get("restartPolicy") in ("Never", "OnFailure") or any(
            c["name"] == container["name"] for c in pod["spec"].get("initContainers") or [])
        return Boot(lines=lines, exit_after=ONE_SHOT_SECONDS if one_shot else None)
