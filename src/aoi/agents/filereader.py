"""The file reader: page, filter and aggregate exported telemetry CSV files instead of dumping them."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

MAX_ROWS = 40


class FileReaderError(ValueError):
    """A read that cannot be done; the message says how to ask instead."""


def _rows(path: Path) -> tuple[list[str], list[list[str]]]:
    """Load a CSV file as its header and rows of cells (blank lines skipped, as csv.DictReader skips them).

    Exports have thousands of rows: aggregations read the columns they need (`_column`), and only the rows shown
    become dicts (`_records`), since building one per row cost as much as parsing the file.
    """
    if not path.is_file():
        raise FileReaderError(f"no file at {path}; use a path from a get_metrics or get_traces result")
    with path.open(newline="") as handle:
        lines = csv.reader(handle)
        return next(lines, []), [cells for cells in lines if cells]


def _column(header: list[str], rows: list[list[str]], name: str) -> list[str | None]:
    """Return a column's cells as csv.DictReader's rows hold them: a repeated name's last cell, None past the end of
    a short row, and None throughout when the file has no such column."""
    if name not in header:
        return [None] * len(rows)
    index = len(header) - 1 - header[::-1].index(name)
    return [cells[index] if index < len(cells) else None for cells in rows]


def _records(header: list[str], rows: list[list[str]]) -> list[dict]:
    """Return rows as the dicts csv.DictReader makes of them."""
    return [dict(zip(header, cells)) if len(cells) == len(header) else _ragged(header, cells) for cells in rows]


def _ragged(header: list[str], cells: list[str]) -> dict:
    """Return a row with more or fewer cells than the header has columns, as csv.DictReader does."""
    row = dict(zip(header, cells))
    if len(cells) > len(header):
        row[None] = cells[len(header):]
    for key in header[len(cells):]:
        row[key] = None
    return row


def _number(value: str) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _table(header: list[str], rows: list[dict]) -> str:
    """Render rows as a compact aligned table."""
    widths = [max([len(h)] + [len(str(r.get(h, ""))) for r in rows]) for h in header]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    lines += ["  ".join(str(r.get(h, "")).ljust(w) for h, w in zip(header, widths)) for r in rows]
    return "\n".join(lines)


def page(path: Path, offset: int = 0, limit: int = 20) -> str:
    """Return rows offset..offset+limit of a CSV file, with the total."""
    header, rows = _rows(path)
    limit = max(1, min(limit, MAX_ROWS))
    shown = _records(header, rows[offset:offset + limit])
    return f"{path.name}: rows {offset}-{offset + len(shown)} of {len(rows)}\n{_table(header, shown)}"


def filter_rows(path: Path, column: str, value: str, limit: int = 20) -> str:
    """Return the rows whose column contains value (case-insensitive)."""
    header, rows = _rows(path)
    if column not in header:
        raise FileReaderError(f"{path.name} has no column {column!r}; columns: {', '.join(header)}")
    hits = [cells for cells, cell in zip(rows, _column(header, rows, column)) if value.lower() in str(cell).lower()]
    table = _table(header, _records(header, hits[:min(limit, MAX_ROWS)]))
    return f"{path.name}: {len(hits)} rows where {column} contains {value!r}\n{table}"


def aggregate(path: Path, by: str, column: str | None = None) -> str:
    """Group rows by a column: count, and min/mean/max/last of a numeric column (or error counts for traces)."""
    return _aggregate(path, *_rows(path), by, column)


def _aggregate(path: Path, header: list[str], rows: list[list[str]], by: str, column: str | None = None) -> str:
    """Aggregate rows already read from path (see `aggregate`)."""
    if by not in header:
        raise FileReaderError(f"{path.name} has no column {by!r}; columns: {', '.join(header)}")
    column = column or ("duration" if "duration" in header else "value" if "value" in header else None)
    groups: dict[str, list[int]] = defaultdict(list)  # key -> the indices of its rows
    for i, key in enumerate(_column(header, rows, by)):
        groups[str(key)].append(i)
    values = _column(header, rows, column) if column else []
    errors = _column(header, rows, "has_error")
    out = []
    for key, members in sorted(groups.items()):
        entry = {by: key, "rows": len(members)}
        numbers = [n for n in (_number(values[i]) for i in members) if n is not None] if column else []
        if numbers:
            entry.update({f"min_{column}": round(min(numbers), 3),
                          f"mean_{column}": round(sum(numbers) / len(numbers), 3),
                          f"max_{column}": round(max(numbers), 3), f"last_{column}": round(numbers[-1], 3)})
        if "has_error" in header:
            entry["errors"] = sum(1 for i in members if str(errors[i]).lower() == "true")
        out.append(entry)
    out.sort(key=lambda e: (-e.get("errors", 0), -e["rows"]))
    cols = list(out[0]) if out else [by]
    return f"{path.name}: {len(rows)} rows in {len(out)} groups by {by}\n{_table(cols, out[:MAX_ROWS])}"


def summary(path: Path) -> str:
    """Describe a CSV file: columns, row count, and the best first aggregation for its kind."""
    header, rows = _rows(path)
    if "service_name" in header:
        return _aggregate(path, header, rows, "service_name")
    if "cmdb_id" in header:
        return _aggregate(path, header, rows, "cmdb_id", "value")
    return f"{path.name}: {len(rows)} rows; columns: {', '.join(header)}\n" + page(path, 0, 5)


def folder_files(folder: Path) -> str:
    """List the CSV files under an export folder."""
    files = sorted(p for p in folder.rglob("*.csv"))
    return "\n".join(str(p) for p in files) or f"no CSV files under {folder}"


def read(path: str, op: str = "summary", **args) -> str:
    """Run one file-reader operation: summary | page | filter | aggregate | list."""
    target = Path(path)
    try:
        if op == "list" or target.is_dir():
            return folder_files(target)
        if op == "page":
            return page(target, int(args.get("offset", 0)), int(args.get("limit", 20)))
        if op == "filter":
            return filter_rows(target, str(args["column"]), str(args["value"]), int(args.get("limit", 20)))
        if op == "aggregate":
            return aggregate(target, str(args["by"]), args.get("column"))
        return summary(target)
    except KeyError as exc:
        return f"Error: read_file op {op!r} needs the argument {exc.args[0]!r}"
    except FileReaderError as exc:
        return f"Error: {exc}"
