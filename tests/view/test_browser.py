"""The viewer in real headless Chromium, as a user drives it: open a run, filter to the failed episodes, open a
trajectory, expand an observation, compare two runs, watch a run in progress, read a training run's curve.
Each test writes screenshots under its temp folder and asserts the DOM."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time

from tests.view.conftest import MITIGATION

from aoi.store.sqlite import TrajectoryStore
from aoi.trajectory import Policy, Step, Trajectory

ROWS = "document.querySelectorAll('#episodes tbody tr').length"


def rows(runs, name: str) -> list[dict]:
    """Return a run's results.jsonl rows."""
    return [json.loads(line) for line in (runs / name / "results.jsonl").read_text().splitlines()]


def test_open_a_run_and_filter_to_failed_episodes(browser, viewer, runs, shots):
    browser.open(viewer.url, "document.querySelectorAll('#runs tbody tr').length >= 2")
    assert browser.js("[...document.querySelectorAll('#runs tbody tr')].map(r => r.dataset.key)")[:2] == [
        f"{runs.name}/expert", f"{runs.name}/replay-no"]  # then any the other tests made in the second folder
    browser.click(f"#runs tr[data-key='{runs.name}/replay-no'] a")
    browser.wait(f"{ROWS} == 2")
    assert browser.js("document.querySelector('#summary').innerText").count("detection") == 1
    browser.screenshot(shots / "run.png")
    browser.select("#outcome", "failed")
    browser.wait(f"{ROWS} == 1")
    failed = browser.js("document.querySelector('#episodes tbody tr').innerText")
    assert "revoke_auth_mongodb-detection-1" in failed and "wrong_answer" in failed
    assert browser.js("document.querySelector('#shown').innerText") == "1 of 2 shown"
    assert "outcome=failed" in browser.js("location.hash")  # the filtered view has a link of its own
    browser.screenshot(shots / "run-failed.png")
    assert (shots / "run-failed.png").stat().st_size > 10_000


def test_sorting_the_episodes_by_a_column(browser, viewer, runs):
    browser.open(f"{viewer.url}#/run/{runs.name}%2Fexpert", f"{ROWS} == 3")
    browser.click("th[data-col='model_in_tokens']")
    browser.wait("location.hash.includes('sort=model_in_tokens')")
    browser.wait(f"{ROWS} == 3 && document.querySelector('th.sorted').dataset.col == 'model_in_tokens'")
    shown = browser.js("[...document.querySelectorAll('#episodes tbody tr')].map(r => r.cells[0].innerText)")
    expected = [r["problem_id"] for r in sorted(rows(runs, "expert"), key=lambda r: r["model_in_tokens"])]
    assert shown == expected


def test_open_a_trajectory_and_expand_an_observation(browser, viewer, runs, shots):
    row = next(r for r in rows(runs, "expert") if r["problem_id"] == MITIGATION)
    traj = TrajectoryStore(runs / "expert" / "trajectories.db", readonly=True).get(row["trajectory_id"])
    browser.open(f"{viewer.url}#/run/{runs.name}%2Fexpert", f"{ROWS} == 3")
    browser.click(f"a[href$='{row['trajectory_id']}']")
    browser.wait(f"document.querySelectorAll('section.step').length == {len(traj.steps)}")
    assert browser.js("[...document.querySelectorAll('section.step')].map(s => s.dataset.role)") == [
        s.role for s in traj.steps]
    verdicts = browser.js("[...document.querySelectorAll('.verdict')].map(v => v.innerText)")
    assert verdicts[0].startswith("AIOpsLab: yes") and "TTM: 225" in verdicts[0]
    assert verdicts[1].startswith("strict: yes") and "whole app healthy" in verdicts[1]
    assert "kubectl patch service user-service" in browser.js("document.querySelector('h2 + table').innerText")
    assert "expert" in browser.js("document.querySelector('table.head').innerText")  # the model spec
    longest = max((s.observation for s in traj.steps), key=len)
    folded = "[...document.querySelectorAll('details.obs')].find(d => d.querySelector('pre').textContent == {})"
    folded = folded.format(json.dumps(longest))
    assert browser.js(f"{folded}.open") is False
    assert browser.js(f"{folded}.querySelector('pre').checkVisibility()") is False  # folded: not shown
    browser.screenshot(shots / "trajectory-folded.png")
    browser.js(f"{folded}.querySelector('summary').click()")
    browser.wait(f"{folded}.open && {folded}.querySelector('pre').checkVisibility()")
    assert browser.js(f"{folded}.querySelector('pre').getBoundingClientRect().height") > 100
    assert browser.js(f"{folded}.querySelector('pre').innerText").strip() == longest.strip()  # whole, not cut
    browser.screenshot(shots / "trajectory-expanded.png")


def test_compare_two_runs(browser, viewer, runs, shots):
    browser.open(viewer.url, "document.querySelector('#cmp-go') !== null")
    browser.select("#cmp-a", f"{runs.name}/expert")
    browser.select("#cmp-b", f"{runs.name}/replay-no")
    browser.click("#cmp-go")
    browser.wait("document.querySelectorAll('#compare tbody tr').length == 2")
    assert browser.js("document.querySelector('#flipped').innerText") == (
        f"1 of 2 common problems flipped; only in {runs.name}/expert: 1, only in {runs.name}/replay-no: 0")
    assert browser.js("[...document.querySelectorAll('#compare tbody tr')].map(r => r.dataset.flip)") == [
        "", "broken"]
    browser.click("#only-flipped")
    browser.wait("document.querySelectorAll('#compare tbody tr').length == 1")
    browser.screenshot(shots / "compare.png")
    browser.click("#compare tbody tr a")
    browser.wait("document.querySelectorAll('.side .episode').length == 2")
    expert = next(r for r in rows(runs, "expert") if r["problem_id"] == "revoke_auth_mongodb-detection-1")
    replay = next(r for r in rows(runs, "replay-no") if r["problem_id"] == "revoke_auth_mongodb-detection-1")
    assert browser.js("[...document.querySelectorAll('.side .episode')].map(e => e.dataset.trajectory)") == [
        expert["trajectory_id"], replay["trajectory_id"]]
    columns = browser.js("[...document.querySelectorAll('.side .column')].map(c => c.innerText)")
    assert "AIOpsLab: yes" in columns[0] and "AIOpsLab: no" in columns[1] and "wrong_answer" in columns[1]
    browser.screenshot(shots / "compare-side-by-side.png")


def test_a_run_in_progress_updates_while_it_runs(browser, viewer, runs, more, shots):
    live = more / "live"
    live.mkdir()
    shutil.copy(runs / "expert" / "trajectories.db", live)
    done = (runs / "expert" / "results.jsonl").read_text().splitlines(keepends=True)
    (live / "results.jsonl").write_text(done[0])
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from aoi.evaluate.lock import run_lock\n"
                               "with run_lock(sys.argv[1]):\n print('locked', flush=True); time.sleep(60)", str(live)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"  # a real eval's lock, held by another process
        browser.open(f"{viewer.url}#/run/{more.name}%2Flive", f"{ROWS} == 1")
        assert browser.js("document.querySelector('h1 .badge.running').innerText") == "in progress"
        time.sleep(0.05)  # a new mtime even on coarse clocks
        with (live / "results.jsonl").open("a") as results:
            results.writelines(done[1:])
        browser.wait(f"{ROWS} == 3", timeout=10)  # no reload: the page follows the run
        browser.screenshot(shots / "live.png")
    finally:
        holder.kill()
        holder.wait()
    browser.wait("document.querySelector('h1 .badge.running') === null", timeout=10)


def test_a_training_run_shows_its_reward_curve(browser, viewer, more, shots):
    run = more / "grpo"
    run.mkdir()
    steps = [{"step": s, "time": 1000.0 + s, "reward": 0.2 * s, "rewards/success/mean": 0.1 * s} for s in range(1, 6)]
    lines = [json.dumps(s) for s in steps] + [json.dumps({"step": 5, "reward": 1.5, "rewards/success/mean": 0.6})]
    (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    (run / "manifest.json").write_text(json.dumps({"base": "tiny", "role": "observer", "engine": "trl"}))
    browser.open(f"{viewer.url}#/run/{more.name}%2Fgrpo", "document.querySelector('#reward-chart svg') !== null")
    points = browser.js("document.querySelector(\"polyline[data-series='reward']\").getAttribute('points')")
    assert len(points.split()) == 5  # one point per step; the resumed step 5 counted once, its last line
    assert browser.js("document.querySelector(\"polyline[data-series='success']\") !== null")
    assert "base tiny, role observer, 5 steps logged" in browser.text()
    browser.screenshot(shots / "training.png")


def test_a_store_only_run_shows_compressor_summaries_refusals_and_denials(browser, viewer, more, shots):
    decision = {"phase": "act", "next": "execute", "instruction": "delete the geo pod",
                "hypotheses": [{"claim": "geo is stuck", "confidence": 0.6, "evidence": "0/1 Ready"}]}
    steps = [Step("observer", json.dumps(decision), input_tokens=900, output_tokens=80, t=0.5),
             Step("probe", json.dumps({"thought": "try a write", "tool": "exec_shell",
                                       "args": {"command": "kubectl delete pod geo-1 -n test-hotel-reservation"}}),
                  action='exec_shell("kubectl delete pod geo-1 -n test-hotel-reservation")',
                  observation="refused: the probe may only read", status="refused", t=1.0),
             Step("compressor", "geo has 0/1 Ready; the probe may not delete pods", status="ungrounded", t=1.2),
             Step("executor", json.dumps({"thought": "delete it", "tool": "exec_shell",
                                          "args": {"command": "kubectl delete pod geo-1 -n test-hotel-reservation"}}),
                  observation="the approval gate denied the change", status="approval_denied", t=2.0)]
    traj = Trajectory("revoke_auth_mongodb-mitigation-1", "mitigation", steps=steps, policy=Policy("replay:x"),
                      results={"success": False}, strict_success=False, started_at=1e9, ended_at=1e9 + 3,
                      id="f" * 32)
    TrajectoryStore(more / "manual" / "trajectories.db").save(traj)  # as `aoi run` leaves runs/trajectories.db
    browser.open(f"{viewer.url}#/run/{more.name}%2Fmanual", f"{ROWS} == 1")
    browser.click(f"a[href$='{'f' * 32}']")
    browser.wait("document.querySelectorAll('section.step').length == 4")
    assert browser.js("[...document.querySelectorAll('section.step')].map(s => s.dataset.status)") == [
        "ok", "refused", "ungrounded", "approval_denied"]
    assert browser.js("document.querySelector('section.step.compressor pre.summary').innerText") == (
        "geo has 0/1 Ready; the probe may not delete pods")
    observer = browser.js("document.querySelector('section.step.observer').innerText")
    assert "instruction delete the geo pod" in observer and "geo is stuck (0.6): 0/1 Ready" in observer
    assert "refused: the probe may only read" in browser.js("document.querySelector('section.step.probe').innerText")
    assert browser.js("document.querySelector('section.step.executor .badge').innerText") == "approval_denied"
    browser.screenshot(shots / "guards.png")
