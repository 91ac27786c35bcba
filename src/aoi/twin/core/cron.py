"""Cron schedules as the CronJob controller reads them (UTC): parsed for admission, stepped for the controller."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

MACROS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
          "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))  # minute, hour, day of month, month, day of week (7 = 0)


def parse_field(text: str, low: int, high: int) -> set[int]:
    """Expand one cron field ('*', '*/N', 'a', 'a-b', 'a/N', 'a-b/N', lists of these) into its values.

    Example:
        >>> sorted(parse_field("*/20,5", 0, 59))
        [0, 5, 20, 40]
    """
    values: set[int] = set()
    for part in text.replace("?", "*").split(","):
        span, _, step = part.partition("/")
        start, _, end = span.partition("-")
        first, last = (low, high) if span == "*" else (int(start), int(end or start))
        if step and not end and span != "*":
            last = high
        values.update(range(first, last + 1, int(step or 1)))
    if not values or min(values) < low or max(values) > high:
        raise ValueError(f"cron field {text!r} is outside {low}-{high}; use values, ranges, lists or */N")
    return values


def parse_schedule(schedule: str) -> tuple[list[set[int]], bool]:
    """Parse a five-field cron schedule (or a macro such as @hourly) into value sets.

    Also return whether day-of-month and day-of-week are both restricted (then either may match, as in cron).
    """
    fields = MACROS.get(schedule.strip(), schedule).split()
    if len(fields) != 5:
        raise ValueError(f"cron schedule {schedule!r} needs 5 fields: minute hour day-of-month month day-of-week")
    sets = [parse_field(f, lo, hi) for f, (lo, hi) in zip(fields, RANGES)]
    sets[4] = {d % 7 for d in sets[4]}
    return sets, not fields[2].startswith(("*", "?")) and not fields[4].startswith(("*", "?"))


def next_run(schedule: str, after: float) -> float:
    """Return the first scheduled minute strictly after `after` (epoch seconds, UTC).

    Example:
        >>> next_run("*/15 * * * *", 60.0)
        900.0
    """
    (minutes, hours, days, months, weekdays), either = parse_schedule(schedule)
    t = datetime.fromtimestamp(after // 60 * 60, tz=UTC) + timedelta(minutes=1)
    for _ in range(366 * 5):  # days; a schedule that never fires (Feb 30) gives up
        dom, dow = t.day in days, (t.weekday() + 1) % 7 in weekdays
        if t.month in months and ((dom or dow) if either else (dom and dow)):
            for hour in sorted(h for h in hours if h >= t.hour):
                minute = min((m for m in minutes if m >= (t.minute if hour == t.hour else 0)), default=None)
                if minute is not None:
                    return t.replace(hour=hour, minute=minute).timestamp()
        t = (t + timedelta(days=1)).replace(hour=0, minute=0)
    return float("inf")
