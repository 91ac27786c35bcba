"""The audit log: one JSON line per change attempt, whole lines under concurrency, long texts truncated."""

import threading

from aoi.safety import ApprovalPolicy, AuditLog, check, read
from aoi.safety.audit import TEXT_LIMIT

COMMAND = "kubectl scale deploy/geo --replicas=1 -n test-hotel-reservation"


def test_records_every_field(tmp_path):
    log = AuditLog(tmp_path / "logs" / "audit.jsonl", episode="ep-7", clock=lambda: 1234.5)
    verdict, decision = check(COMMAND, "executor"), ApprovalPolicy("auto").decide(COMMAND)
    log.record("executor", COMMAND, verdict, decision, preview="scaled (server dry run)",
               outcome="deployment.apps/geo scaled", exit_status=0)
    log.record("probe", "kubectl delete ns x", check("kubectl delete ns x", "probe"), episode="ep-8")
    first, second = read(log.path)
    assert first == {"time": 1234.5, "episode": "ep-7", "role": "executor", "command": COMMAND,
                     "verdict": {"allowed": True, "reason": verdict.reason, "kind": "write"},
                     "approval": {"status": "approved", "reason": decision.reason},
                     "preview": "scaled (server dry run)", "outcome": "deployment.apps/geo scaled", "exit_status": 0}
    assert second["episode"] == "ep-8" and second["verdict"]["kind"] == "refused" and second["approval"] is None


def test_long_texts_are_truncated(tmp_path):
    log = AuditLog(tmp_path / "audit.jsonl")
    entry = log.record("executor", COMMAND, preview="p" * (TEXT_LIMIT + 10), outcome="o" * 5)
    assert entry["preview"] == "p" * TEXT_LIMIT + "… [10 more characters]" and entry["outcome"] == "ooooo"
    assert read(log.path)[0]["preview"] == entry["preview"]


def test_concurrent_writers_never_split_lines(tmp_path):
    path = tmp_path / "audit.jsonl"
    logs = [AuditLog(path, episode=f"ep-{i}") for i in range(4)]  # separate objects: only O_APPEND keeps lines whole

    def write(log):
        for n in range(50):
            log.record("executor", f"{COMMAND} #{n}", outcome="x" * 3000)

    threads = [threading.Thread(target=write, args=(log,)) for log in logs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    entries = read(path)
    assert len(entries) == 200 and {e["episode"] for e in entries} == {"ep-0", "ep-1", "ep-2", "ep-3"}


def test_a_torn_last_line_and_a_missing_file_read_cleanly(tmp_path):
    path = tmp_path / "audit.jsonl"
    assert read(path) == []
    AuditLog(path).record("executor", COMMAND)
    with open(path, "a") as f:
        f.write('{"time": 1, "comm')
    assert [e["command"] for e in read(path)] == [COMMAND]
    assert oct(path.stat().st_mode & 0o777) == "0o600"
