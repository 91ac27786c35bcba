"""The run directory's lock: a second holder is refused with the first one's pid; a killed holder blocks nothing."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from aoi.evaluate.lock import RunLocked, run_lock

HOLD = ("import sys, time; from aoi.evaluate.lock import run_lock\nwith run_lock(sys.argv[1]):\n"
        "    print('held', flush=True)\n    time.sleep(120)")


def test_a_live_holder_is_named_and_a_killed_one_blocks_nothing(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RunLocked) as caught, run_lock(tmp_path):
            pytest.fail("the lock was taken twice")
        message = str(caught.value)
        assert f"pid {holder.pid} on " in message and " since " in message and "--out" in message
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with run_lock(tmp_path) as path:  # the kernel released the dead holder's lock; its file is still there
        assert path.exists()


def test_the_lock_is_released_when_the_block_ends(tmp_path):
    # flock holds per open file, so even this process is refused meanwhile
    with run_lock(tmp_path), pytest.raises(RunLocked), run_lock(tmp_path):
        pass
    with run_lock(tmp_path):
        pass
