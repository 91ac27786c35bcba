"""A first pass of real-kubectl checks over the served twin (the full families live in their own files)."""


def test_get_pods_lists_every_hotel_pod_running(cluster):
    out = cluster.ok("get pods -n test-hotel-reservation")
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert len(lines) == 20


def test_exec_returns_the_exit_code(hotel):
    pod = hotel.ok("get pods -n test-hotel-reservation -l io.kompose.service=geo -o name").strip()
    done = hotel.kubectl(["exec", "-n", "test-hotel-reservation", pod, "--", "sh", "-c", "exit 3"])
    assert done.returncode == 3
    assert "command terminated with exit code 3" in done.stderr


def test_rollout_status_waits_in_simulated_time(hotel):
    hotel.ok("rollout restart deploy/geo -n test-hotel-reservation")
    out = hotel.ok("rollout status deploy/geo -n test-hotel-reservation")
    assert 'deployment "geo" successfully rolled out' in out
