"""Static pages of the trajectory view, written beside a report so a report folder can be shared without a server.

`write_pages(runs, folder)` writes `folder/app.css`, `episode.js`, `app.js`, one `t-<id>.html` per episode and one
`p-<problem>.html` per problem (its first attempt in every run, side by side; each attempt links its own page).
Each page embeds its data as JSON and is drawn by the same scripts as `aoi view`; nothing is fetched.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from aoi.view import content
from aoi.view.compare import outcomes
from aoi.view.runs import Run, kind_of
from aoi.view.server import asset

SCRIPTS = ("episode.js", "app.js")
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title><link rel="stylesheet" href="app.css"></head>
<body><header><a href="{back}">report</a><span id="crumbs"> / {title}</span></header><main id="app"></main>
<script id="aoi-data" type="application/json">{data}</script>
{scripts}
</body></html>
"""


def page(title: str, data: dict, back: str) -> str:
    """Return one static page: the data as embedded JSON (`</` escaped so no text can close the script)."""
    body = json.dumps(data, default=str, ensure_ascii=False).replace("</", "<\\/")
    scripts = "\n".join(f'<script src="{name}"></script>' for name in SCRIPTS)
    return PAGE.format(title=html.escape(title), back=html.escape(back), data=body, scripts=scripts)


def write_pages(runs: list[tuple[str, Path]], folder: str | Path, back: str = "../report.html") -> dict[str, str]:
    """Write the static pages of the labelled runs' episodes and problems; return {trajectory or problem id: file}.

    Runs without a trajectory store get no episode pages (their problems still get a page saying so).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("app.css", *SCRIPTS):
        (folder / name).write_bytes(asset(name))
    written: dict[str, str] = {}
    columns: dict[str, list[dict]] = {}
    for label, path in runs:
        run = Run(label, Path(path).resolve(), kind_of(Path(path)) or "eval")
        for problem, outcome in outcomes(content.rows_of(run)).items():
            columns.setdefault(problem, []).append(_column(run, outcome["trajectories"], folder, back, written))
    for problem, column in columns.items():
        name = content.problem_href(problem)
        data = {"page": "problem", "problem_id": problem, "runs": column}
        (folder / name).write_text(page(problem, data, back), encoding="utf-8")
        written[problem] = name
    return written


def _column(run: Run, trajectory_ids: list, folder: Path, back: str, written: dict) -> dict:
    """Write the pages of one problem's episodes in a run; return its column of the problem page."""
    episodes = [e for e in (_episode_page(run, tid, folder, back, written) for tid in trajectory_ids) if e]
    attempts = [{"attempt": e["attempt"], "href": e["href"], "success": e["verdicts"]["aiopslab"]} for e in episodes]
    return {"label": run.key, "episodes": episodes[:1], "attempts": attempts}


def _episode_page(run: Run, trajectory_id: str | None, folder: Path, back: str, written: dict) -> dict | None:
    """Write one episode's page (once) and return its data with its file name, or None when it is not stored."""
    episode = content.episode(run, trajectory_id) if trajectory_id else None
    if episode is None:
        return None
    name = content.trajectory_href(trajectory_id)
    if trajectory_id not in written:
        title = f"{episode['problem_id']} attempt {episode['attempt']}"
        (folder / name).write_text(page(title, {"page": "episode", "episode": episode}, back), encoding="utf-8")
        written[trajectory_id] = name
    return {**episode, "href": name}
