"""`aoi trajectories show ID` finds the store from the id (the run folders under the working directory), suggests
--store when it cannot, and prints whole observations with --full; stores are searched read-only."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from aoi.store.cli import EXCERPT, trajectories_app
from aoi.store.locate import find_stores, stores_holding
from aoi.store.sqlite import StoreError, TrajectoryStore
from aoi.trajectory import Step, Trajectory

LONG = "\n".join(f"pod-{n:04d}   1/1   Running   0   5m" for n in range(80))  # ~2,900 characters


def save(folder, trajectory_id: str, observation: str = LONG) -> None:
    """Store one episode with a long observation in folder/trajectories.db (as `aoi eval --out folder` does)."""
    step = Step("probe", "{}", action='exec_shell("kubectl get pods")', observation=observation)
    TrajectoryStore(folder / "trajectories.db").save(Trajectory("noop_detection_hotel_reservation-1", "detection",
                                                                steps=[step], id=trajectory_id))


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A working directory with two eval runs under runs/ and no default store (runs/trajectories.db)."""
    save(tmp_path / "runs" / "expert-k5", "abc123" + "0" * 26)
    save(tmp_path / "runs" / "nested" / "grpo", "abd456" + "0" * 26)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def show(*args: str):
    """Run `aoi trajectories show ARGS` with no config file and no AOI_ variables."""
    return CliRunner().invoke(trajectories_app, ["show", *args], env={"COLUMNS": "120", "AOI_STORE": None})


def test_show_finds_the_run_folder_holding_the_id(workdir):
    done = show("abd4")
    assert done.exit_code == 0, done.output
    assert "abd456" + "0" * 26 in done.output and "pod-0000" in done.output


def test_show_suggests_store_when_no_folder_holds_the_id(workdir):
    done = show("fff")
    assert done.exit_code == 2
    assert done.output == (f"error: no trajectory 'fff' in runs/trajectories.db (no such file) or the 2 other "
                           f"store(s) under {workdir}; pass --store RUN_DIR (the folder of `aoi eval --out`) or "
                           "--store FILE.db\n")


def test_a_prefix_in_two_stores_names_both(workdir):
    done = show("ab")
    assert done.exit_code == 2
    first, second = workdir / "runs/expert-k5/trajectories.db", workdir / "runs/nested/grpo/trajectories.db"
    assert done.output == f"error: 'ab' is in 2 stores ({first}, {second}); pass --store with the one you mean\n"


def test_store_still_names_the_one_store(workdir):
    done = show("abd4", "--store", "runs/expert-k5")
    assert done.exit_code == 2 and "no trajectory 'abd4' in runs/expert-k5/trajectories.db" in done.output


def test_full_prints_every_observation_whole(workdir):
    cut, full = show("abc1"), show("abc1", "--full")
    assert f"({len(LONG)} chars)" in cut.output and "pod-0079" not in cut.output
    assert "pod-0079" in full.output and f"({len(LONG)} chars)" not in full.output
    assert all(f"pod-{n:04d}" in full.output for n in range(80))
    assert len(LONG) > EXCERPT


def test_searching_writes_nothing(workdir):
    stores = find_stores(workdir)
    before = sorted(p.name for p in workdir.rglob("*"))
    assert [(p.relative_to(workdir).as_posix(), ids) for p, ids in stores_holding("abc", stores)] == [
        ("runs/expert-k5/trajectories.db", ["abc123" + "0" * 26])]
    assert sorted(p.name for p in workdir.rglob("*")) == before  # no -wal or -shm: opened immutable


def test_a_readonly_store_refuses_writes_and_missing_files(tmp_path):
    save(tmp_path, "x" * 32)
    reader = TrajectoryStore(tmp_path / "trajectories.db", readonly=True)
    assert reader.get("x" * 32).steps[0].observation == LONG
    with pytest.raises(Exception, match="readonly"):
        reader.delete("x" * 32)
    with pytest.raises(StoreError, match="no trajectory store at"):
        TrajectoryStore(tmp_path / "missing.db", readonly=True)
    assert not (tmp_path / "missing.db").exists()
