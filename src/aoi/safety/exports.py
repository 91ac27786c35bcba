"""Which host files an agent may read: only the telemetry files the environment said it exported, nothing else."""

from __future__ import annotations

import re
from pathlib import Path

# The environment's own words (AIOpsLab's and the twin's) when get_metrics or get_traces writes files.
EXPORTED = re.compile(r"^(?:Metrics data exported to directory|Traces data exported to): (/\S[^\n]*)$", re.MULTILINE)
MAX_PATH = 4096


class Exports:
    """The export folders and files one episode's observations announced; `allows(path)` answers for a read.

    Example:
        >>> seen = Exports()
        >>> seen.note("Traces data exported to: /tmp/ep/trace_output/traces_1.csv")
        >>> seen.allows("/tmp/ep/trace_output/traces_1.csv"), seen.allows("/tmp/ep/kubeconfigs/admin.yaml")
        (True, False)
    """

    def __init__(self) -> None:
        self.roots: set[Path] = set()

    def note(self, observation: str) -> None:
        """Remember every export path an observation announces."""
        for found in EXPORTED.findall(observation if isinstance(observation, str) else ""):
            self.roots.add(Path(found.strip()).resolve())

    def allows(self, path: object) -> bool:
        """Return whether a path resolves to an announced export file or to a file inside an announced folder."""
        if not isinstance(path, (str, Path)) or "\x00" in str(path) or len(str(path)) > MAX_PATH:
            return False
        try:
            resolved = Path(path).resolve()
        except (OSError, RuntimeError):  # a symlink loop
            return False
        return any(resolved == root or root in resolved.parents for root in self.roots)


REFUSED = ("Refused: read_file opens only files that get_metrics or get_traces exported in this episode — pass a path "
           "from their result.")
