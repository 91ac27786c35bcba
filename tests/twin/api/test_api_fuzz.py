"""A seeded fuzz of the API server: thousands of random, malformed requests, each answered in full, none with a
5xx; the twin still serves kubectl afterwards."""

from aoi.twin.api import fuzz
from aoi.twin.core.resources import RESOURCES

NS = "test-hotel-reservation"
REQUESTS = 2000


def test_every_fuzzed_request_gets_a_complete_answer(hotel):
    hotel.server.read_timeout = 0.2  # truncated bodies are answered (408) long before the client gives up
    pod = hotel.ok(f"get pods -n {NS} -o name").split()[0].split("/")[1]
    resources = [(r.group, r.version, r.plural, r.namespaced, r.subresources) for r in RESOURCES]
    paths = fuzz.served_paths(resources, [NS, "default", "missing"], ["frontend", "nope", pod])
    tally = fuzz.run(hotel.server.url, list(hotel.twin.credentials.values()), paths, REQUESTS, seed=7, timeout=5.0)
    print(tally.summary())
    assert tally.sent == REQUESTS
    assert (tally.dropped, tally.hangs, tally.server_errors) == (0, 0, 0), tally.failures
    assert {400, 401, 403, 404, 405, 408, 413} <= set(tally.statuses)  # the fuzz reached every refusal
    assert "frontend" in hotel.ok("get pods -A")
    assert hotel.ok("get --raw /version").startswith("{")
