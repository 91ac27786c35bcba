"""Read kubectl's column-aligned tables, ages and object names."""

from __future__ import annotations

import re

AGE_PART = re.compile(r"(\d+)([dhms])")
SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
SAFE = "[bcdfghjklmnpqrstvwxz2456789]"  # the alphabet of Kubernetes' generated name suffixes (no vowels)
POD_OF_REPLICASET = re.compile(rf"^(?P<owner>.+)-{SAFE}{{6,10}}-{SAFE}{{5}}$")
POD_OF_OWNER = re.compile(rf"^(?P<owner>.+)-(?:{SAFE}{{5}}|\d+)$")


def rows(text: str, first: tuple[str, ...] = ("NAME", "KIND", "LAST SEEN")) -> list[dict[str, str]]:
    """Parse a kubectl table (its header the first line starting with one of `first`) into dicts by column name.

    Columns are cut at the header's word starts, as kubectl pads every column to its widest value; lines that
    are not table rows (notes, a compressor's markers, "No resources found") are skipped.

    Example:
        >>> rows("NAME   READY   STATUS\\nweb-1  0/1     CrashLoopBackOff\\n")
        [{'NAME': 'web-1', 'READY': '0/1', 'STATUS': 'CrashLoopBackOff'}]
    """
    lines = [line for line in text.splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if line.startswith(first)), None)
    if start is None:
        return []
    header = lines[start]
    starts = [m.start() for m in re.finditer(r"(?<!\S)\S+(?: \S+)*", header)]
    names = [header[a:b].strip() for a, b in zip(starts, starts[1:] + [len(header) + 1000])]
    out = []
    for line in lines[start + 1:]:
        if line.startswith(("[", "Please take", "No resources")) or len(line) < starts[-1] // 2:
            continue
        cells = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [len(line) + 1])]
        out.append(dict(zip(names, cells)))
    return out


def words(text: str, first: tuple[str, ...]) -> list[dict[str, str]]:
    """Parse a table whose cells hold no spaces (the file reader's) by splitting on whitespace.

    Example:
        >>> words("f.csv: 1 rows\\nservice  errors\\nweb  2\\n", ("service",))
        [{'service': 'web', 'errors': '2'}]
    """
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(first)), None)
    if start is None:
        return []
    header = lines[start].split()
    return [dict(zip(header, line.split())) for line in lines[start + 1:]
            if len(line.split()) == len(header) and not line.startswith("[")]


def age(text: str) -> int | None:
    """Return a kubectl age ("5m36s", "2d3h", "111s") in seconds, None when it is not one.

    Example:
        >>> age("5m36s"), age("2d3h"), age("<unknown>")
        (336, 183600, None)
    """
    parts = AGE_PART.findall(text or "")
    if not parts or "".join(n + u for n, u in parts) != text.strip():
        return None
    return sum(int(n) * SECONDS[u] for n, u in parts)


def owner(pod: str) -> str:
    """Return the workload a pod name belongs to (its Deployment for ReplicaSet pods).

    Example:
        >>> owner("orders-api-67848c8449-5mftm"), owner("db-0"), owner("lonely"), owner("deployment/cache-redis")
        ('orders-api', 'db', 'lonely', 'cache-redis')
    """
    name = pod.split("/")[-1]
    for pattern in (POD_OF_REPLICASET, POD_OF_OWNER):
        match = pattern.match(name)
        if match:
            return match.group("owner")
    return name


def restarts(cell: str) -> tuple[int, int | None]:
    """Return (count, seconds since the last restart) from a RESTARTS cell such as "3 (23s ago)".

    Example:
        >>> restarts("3 (23s ago)"), restarts("0")
        ((3, 23), (0, None))
    """
    match = re.match(r"(\d+)(?:\s*\((\S+) ago\))?", cell or "")
    if not match:
        return 0, None
    return int(match.group(1)), age(match.group(2)) if match.group(2) else None


def mapping(cell: str) -> dict[str, str]:
    """Parse a custom-columns map cell ("map[app:web tier:x]") into a dict.

    Example:
        >>> mapping("map[io.kompose.service:web]"), mapping("<none>")
        ({'io.kompose.service': 'web'}, {})
    """
    match = re.match(r"map\[(.*)\]$", (cell or "").strip())
    if not match:
        return {}
    return dict(item.split(":", 1) for item in match.group(1).split() if ":" in item)


def listed(cell: str) -> list[str]:
    """Split a custom-columns list cell ("a,b" or "[x y]") into items; "<none>" is empty.

    Example:
        >>> listed("9090,9091"), listed("[web]"), listed("<none>")
        (['9090', '9091'], ['web'], [])
    """
    cell = (cell or "").strip()
    if not cell or cell == "<none>":
        return []
    if cell.startswith("[") and cell.endswith("]"):
        return cell[1:-1].split()
    return [item for item in cell.split(",") if item]
