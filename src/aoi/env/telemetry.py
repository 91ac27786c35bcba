"""The telemetry actions' observation texts: export messages, folder trees and read_* tables."""

from __future__ import annotations

import csv
from pathlib import Path

MISSING_LOGS = "Error: Your service/namespace does not exist. Use kubectl to check."
# get_logs picks a service's pods by this label, per namespace (AIOpsLab's mapping).
LOG_LABELS = {"test-social-network": "app", "test-hotel-reservation": "io.kompose.service",
              "astronomy-shop": "app.kubernetes.io/name"}


def log_selector(namespace: str, service: str) -> str | None:
    """Return the label selector get_logs uses for a service, or None when the namespace has no rule."""
    if namespace == "default" and "wrk2-job" in service:
        return "job-name=wrk2-job"
    label = LOG_LABELS.get(namespace)
    return f"{label}={service}" if label else None


def service_logs(runner, namespace: str, service: str) -> str:
    """Answer get_logs: the full log of the first pod AIOpsLab's label rule picks, or AIOpsLab's error text.

    `runner` is the acting role's kubectl (a backend's `runner(role)`: `run(args)` -> stdout, returncode, ...).

    Example:
        >>> from types import SimpleNamespace
        >>> no_pods = SimpleNamespace(run=lambda args: SimpleNamespace(stdout="", returncode=0))
        >>> service_logs(no_pods, "default", "wrk2-job")
        'Error: Your service/namespace does not exist. Use kubectl to check.'
    """
    selector = log_selector(namespace, service)
    if selector is None:
        return MISSING_LOGS
    pods = runner.run(["get", "pods", "-n", namespace, "-l", selector, "-o", "name"])
    if pods.returncode != 0 or not pods.stdout.split():
        return MISSING_LOGS
    logs = runner.run(["logs", pods.stdout.split()[0], "-n", namespace])
    return logs.stdout if logs.returncode == 0 else MISSING_LOGS


def tree(folder: Path, depth: int = 0) -> list[str]:
    """Render a folder as an indented tree (4 spaces per level, folders end with /)."""
    lines = []
    for entry in sorted(folder.iterdir()):
        lines.append(f"{'    ' * depth}{entry.name}{'/' if entry.is_dir() else ''}")
        if entry.is_dir():
            lines += tree(entry, depth + 1)
    return lines


def metrics_message(folder: Path) -> str:
    """Return get_metrics' observation for an export folder."""
    return (f"Metrics data exported to directory: {folder.resolve()}\n\nFolder structure of exported metrics:\n"
            + "\n".join([f"{folder.name}/"] + tree(folder, 1)))


def traces_message(path: Path) -> str:
    """Return get_traces' observation for an export file."""
    return f"Traces data exported to: {path.resolve()}"


def _column(values: list[str]) -> list[str]:
    """Format one column as pandas would: ints as ints, floats to a shared precision, text as is."""
    def number(v):
        try:
            return float(v)
        except ValueError:
            return None
    parsed = [number(v) for v in values]
    if values and all(p is not None for p in parsed):
        if all(p.is_integer() and "." not in v for p, v in zip(parsed, values)):
            return [str(int(p)) for p in parsed]
        decimals = max((len(v.split(".")[1]) if "." in v else 1) for v in values)
        decimals = min(max(decimals, 1), 6)
        return [f"{p:.{decimals}f}" for p in parsed]
    return values


def read_table(path: Path) -> str:
    """Render a CSV file like `pandas.read_csv(path).to_string(index=False)` (right-justified columns)."""
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        return "Empty DataFrame\nColumns: []\nIndex: []"
    header, body = rows[0], rows[1:]
    if not body:
        return f"Empty DataFrame\nColumns: [{', '.join(header)}]\nIndex: []"
    columns = [_column([r[i] if i < len(r) else "" for r in body]) for i in range(len(header))]
    widths = [max(len(h), *(len(v) for v in col)) for h, col in zip(header, columns)]
    lines = [" ".join(h.rjust(w) for h, w in zip(header, widths))]
    for i in range(len(body)):
        lines.append(" ".join(col[i].rjust(w) for col, w in zip(columns, widths)))
    return "\n".join(lines)


EXPORT_FOLDERS = ("metrics_output", "trace_output")  # the only folders of an episode read_* may open


def read_export(file_path: str, root: Path, kind: str) -> str:
    """Answer read_metrics/read_traces: only CSV files exported in this episode (never kubeconfigs) can be read.

    Example:
        >>> read_export("../kubeconfigs/admin.yaml", Path("/nonexistent"), "metrics")
        "error: Metrics file '../kubeconfigs/admin.yaml' not found."
    """
    label = "Metrics" if kind == "metrics" else "Traces"
    path = exported_file(file_path, root)
    if path is None:
        return f"error: {label} file '{str(file_path)[:300]}' not found."
    try:
        return read_table(path)
    except (OSError, csv.Error, UnicodeDecodeError) as exc:
        return f"Failed to read {label.lower()}: {exc}"


def exported_file(file_path: str, root: Path) -> Path | None:
    """Return the resolved file when it lies inside one of the episode's export folders, else None."""
    if not isinstance(file_path, str) or "\x00" in file_path or len(file_path) > 4096:
        return None
    path = Path(file_path) if Path(file_path).is_absolute() else root / file_path
    try:
        path = path.resolve()
        folders = [(root / name).resolve() for name in EXPORT_FOLDERS]
    except (OSError, RuntimeError):  # a symlink loop, an unreadable folder
        return None
    inside = any(folder in path.parents for folder in folders)
    return path if inside and path.is_file() else None
