"""The app catalog: load an app folder (manifests + behaviour data); twins and real clusters deploy the same files."""

from __future__ import annotations

import fnmatch
import functools
import posixpath
from dataclasses import dataclass, field
from pathlib import Path

import yaml

APPS_DIR = Path(__file__).parent
APP_FOLDERS = {"hotel-reservation": "hotel_reservation", "social-network": "social_network",
               "astronomy-shop": "astronomy_shop", "platform": "platform"}
APP_NAMES = ("hotel-reservation", "social-network", "astronomy-shop")
# libyaml's parser when PyYAML has it: the same data from these files (tests/apps compares every file) in ~1/7 of the
# time (0.61 -> 0.08 s for all apps: the largest part of building a process's first twins)
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class App:
    """One deployable application: its manifests and the data its simulated programs need."""

    name: str
    namespace: str | None
    service_label: str | None
    programs: list[dict]
    components: dict[str, dict]
    logs: dict[str, dict]
    documents: list[dict] = field(default_factory=list)
    behaviour: dict = field(default_factory=dict)  # operations, workloads, errors, flags, tracing (the model's data)

    def knows_image(self, image: str) -> bool:
        """Tell whether some program entry matches the image."""
        return any(fnmatch.fnmatchcase(image, entry["image"]) for entry in self.programs)

    def program_for(self, image: str, command: list[str] | None, args: list[str] | None) -> str | None:
        """Return the program a container runs (first matching image pattern), or None."""
        first = (command or args or [""])[0]
        for entry in self.programs:
            if fnmatch.fnmatchcase(image, entry["image"]):
                return entry["program"].replace("{command}", posixpath.basename(first))
        return None


@functools.cache
def load_app(name: str) -> App:
    """Load an app by its CLI name (hotel-reservation, social-network, astronomy-shop, platform)."""
    if name not in APP_FOLDERS:
        raise ValueError(f"unknown app {name!r}; choose from {', '.join(APP_NAMES)}")
    folder = APPS_DIR / APP_FOLDERS[name]
    data = yaml.load((folder / "app.yaml").read_text(), Loader=LOADER)
    docs = []
    for path in sorted((folder / "manifests").glob("*.yaml")):
        docs += [d for d in yaml.load_all(path.read_text(), Loader=LOADER) if d]
    behaviour = {key: data[key] for key in ("operations", "workloads", "errors", "flags", "tracing") if key in data}
    return App(data["name"], data.get("namespace"), data.get("service_label"), data.get("programs") or [],
               data.get("components") or {}, data.get("logs") or {}, docs, behaviour)

