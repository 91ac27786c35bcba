"""Make docs/viewer.md's two screenshots of `aoi view` from real runs: a trajectory page and a run comparison.

Runs the expert on three problems and a replay model that answers "No" on the two detection ones (so one problem
flips), serves them with the viewer and photographs two pages with headless Chromium (`chromium --headless
--screenshot`; install it with `apt-get install -y chromium`). Writes docs/images/view-trajectory.png and
docs/images/view-compare.png (or --out DIR).

    python docs/screenshots.py [--out docs/images] [--chromium chromium]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

from aoi.config import load_config
from aoi.evaluate.runner import run_eval
from aoi.view.server import serve

MITIGATION = "k8s_target_port-misconfig-mitigation-1"
DETECTION = ("revoke_auth_mongodb-detection-1", "noop_detection_hotel_reservation-1")


def evaluate(out: Path, spec: str, problems) -> list[dict]:
    """Run each problem once with `spec` into `out`; return its results rows."""
    run_eval([(p, None) for p in problems], 1, 1, load_config(overrides={"model": spec}, environ={}), out)
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def replay_no(folder: Path) -> str:
    """Write a replay script whose Observer submits "No" at once; return its model spec."""
    decision = {"phase": "submit", "next": "submit", "instruction": "", "context": "", "answer": "No"}
    (folder / "submit-no.json").write_text(json.dumps([{"role": "observer", "text": json.dumps(decision)}]))
    return f"replay:{folder / 'submit-no.json'}"


def shoot(chromium: str, url: str, path: Path, size: str) -> None:
    """Photograph one page once its scripts have drawn it."""
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--user-data-dir={profile}", f"--window-size={size}", "--virtual-time-budget=5000",
                        f"--screenshot={path}", url], check=True, capture_output=True, timeout=120)
    print(f"wrote {path} ({path.stat().st_size:,} bytes) from {url}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "images")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp) / "runs"
        expert = evaluate(runs / "expert", "expert", (MITIGATION, *DETECTION))
        evaluate(runs / "replay-no", replay_no(Path(tmp)), DETECTION)
        server = serve([runs]).start()
        try:
            mitigation = next(r["trajectory_id"] for r in expert if r["problem_id"] == MITIGATION)
            shoot(args.chromium, f"{server.url}#/run/{quote('runs/expert', safe='')}/t/{mitigation}",
                  args.out / "view-trajectory.png", "1280,1100")
            pair = f"{quote('runs/expert', safe='')}/{quote('runs/replay-no', safe='')}"
            shoot(args.chromium, f"{server.url}#/compare/{pair}/p/{DETECTION[0]}", args.out / "view-compare.png",
                  "1280,900")
        finally:
            server.shutdown()


if __name__ == "__main__":
    main()
