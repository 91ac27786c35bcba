"""`limit` and `continue` on lists, as kube-apiserver pages them for kubectl (500 a page) and client-go."""

from __future__ import annotations

import json

import pytest
from kubernetes import client, config

from aoi.twin import build_twin
from aoi.twin.api.paging import COMPACTION_SECONDS, decode_token, encode_token
from aoi.twin.core import operations
from aoi.twin.testing import Served

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
MANY = 523  # more than kubectl's 500 a page


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A bare twin holding MANY ConfigMaps in namespace `bulk`, half of them labelled `half=yes`."""
    twin = build_twin([], seed=0)
    with twin.lock:
        operations.create(twin, twin.resource("namespaces"), "", {"apiVersion": "v1", "kind": "Namespace",
                                                                  "metadata": {"name": "bulk"}})
        for i in range(MANY):
            labels = {"half": "yes"} if i % 2 else {}
            operations.create(twin, twin.resource("configmaps"), "bulk", {
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i:04d}", "labels": labels},
                "data": {"i": str(i)}})
        twin.settle()
    served = Served(twin, tmp_path_factory.mktemp("paging"))
    yield served
    served.close()


def api(served) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(served.kubeconfigs["admin"]))


def request(served, path: str, accept: str = "application/json", **query) -> tuple[int, dict]:
    """GET a path with query parameters through the client's own plumbing; return the status and the body."""
    api_client = api(served)
    args = api_client.param_serialize("GET", path, query_params=list(query.items()), header_params={"Accept": accept},
                                      auth_settings=["BearerToken"])
    done = api_client.call_api(*args)
    return done.status, json.loads(done.read())


def get(served, path: str, accept: str = "application/json", **query) -> dict:
    """GET a path that must answer 200 and return the decoded body."""
    status, body = request(served, path, accept, **query)
    assert status == 200, body
    return body


def pages(served, path: str, accept: str = "application/json", **query) -> list[dict]:
    """Follow continue tokens from the first page to the last; return every page."""
    out = [get(served, path, accept, **query)]
    while out[-1]["metadata"].get("continue"):
        out.append(get(served, path, accept, **query, **{"continue": out[-1]["metadata"]["continue"]}))
    return out


def names(page: dict) -> list[str]:
    rows = page.get("items") or [r["object"] for r in page.get("rows", [])]
    return [o["metadata"]["name"] for o in rows]


def test_pages_return_every_object_exactly_once_in_order(served):
    chunks = pages(served, "/api/v1/namespaces/bulk/configmaps", limit=100)
    every = [n for page in chunks for n in names(page)]
    assert every == sorted(every) and every == names(get(served, "/api/v1/namespaces/bulk/configmaps"))
    assert len(chunks) == 6 and [len(names(p)) for p in chunks] == [100] * 5 + [MANY + 1 - 500]  # + kube-root-ca.crt
    remaining = [p["metadata"].get("remainingItemCount") for p in chunks]
    assert remaining == [MANY + 1 - 100 * k for k in range(1, 6)] + [None]
    assert len({p["metadata"]["resourceVersion"] for p in chunks}) == 1  # one list, one version


def test_a_small_list_is_answered_exactly_as_without_limit(served):
    whole = get(served, "/api/v1/namespaces/kube-system/configmaps")
    limited = get(served, "/api/v1/namespaces/kube-system/configmaps", limit=500)
    assert limited == whole and list(whole["metadata"]) == ["resourceVersion"]


def test_selectors_apply_before_paging_and_hide_the_remaining_count(served):
    chunks = pages(served, "/api/v1/namespaces/bulk/configmaps", labelSelector="half=yes", limit=50)
    every = [n for page in chunks for n in names(page)]
    assert len(every) == MANY // 2 and len(set(every)) == len(every)
    assert all(int(n[-4:]) % 2 for n in every)
    assert all("remainingItemCount" not in p["metadata"] for p in chunks)


def test_tables_page_across_namespaces(served):
    chunks = pages(served, "/api/v1/configmaps", accept=TABLE, limit=200)
    rows = [(r["object"]["metadata"]["namespace"], r["object"]["metadata"]["name"]) for p in chunks for r in p["rows"]]
    assert chunks[0]["kind"] == "Table" and len(rows) == len(set(rows)) and rows == sorted(rows)
    assert len(rows) == len(names(get(served, "/api/v1/configmaps")))
    assert decode_token(chunks[0]["metadata"]["continue"])[1] == "bulk/cm-0198\x00"


def test_the_python_client_follows_continue(served):
    core = client.CoreV1Api(api(served))
    seen, token = [], None
    while True:
        page = core.list_namespaced_config_map("bulk", limit=77, _continue=token)
        seen += [c.metadata.name for c in page.items]
        token = page.metadata._continue
        if not token:
            break
    assert len(seen) == MANY + 1 and len(set(seen)) == MANY + 1


def test_kubectl_get_prints_more_than_one_page_and_the_same_with_any_chunk_size(served):
    whole = served.ok("get configmaps -n bulk")
    assert len(whole.splitlines()) == MANY + 2  # header, kube-root-ca.crt and every ConfigMap despite limit=500
    assert served.ok("get configmaps -n bulk --chunk-size=7") == whole
    assert served.ok("get configmaps -n bulk --chunk-size=0") == whole
    assert served.ok("get configmaps -A --chunk-size=50 -o name") == served.ok("get configmaps -A -o name")


def test_a_token_outlives_a_busy_history_but_not_the_compaction_interval(served):
    twin = served.twin
    first = get(served, "/api/v1/namespaces/bulk/configmaps", limit=10)
    budget = twin.store.log.budget
    try:
        twin.store.log.budget = 4096  # a tiny history: the first page's version falls out of it at once
        with twin.lock:
            for i in range(20):
                cm = twin.get("configmaps", "bulk", "cm-0500")
                cm["data"]["i"] = str(i)
                twin.update("configmaps", cm)
        second = get(served, "/api/v1/namespaces/bulk/configmaps", limit=10,
                     **{"continue": first["metadata"]["continue"]})
        with twin.lock:
            twin.advance(COMPACTION_SECONDS + 1)  # etcd has compacted the first page's revision by now
        code, status = request(served, "/api/v1/namespaces/bulk/configmaps", limit=10,
                               **{"continue": first["metadata"]["continue"]})
    finally:
        twin.store.log.budget = budget
    assert names(second)[0] == "cm-0010"  # kubectl paging through a busy twin never meets a 410
    assert (code, status["reason"], status["code"]) == (410, "Expired", 410)
    assert status["message"].startswith("The provided continue parameter is too old")
    rest = get(served, "/api/v1/namespaces/bulk/configmaps", limit=10, **{"continue": status["metadata"]["continue"]})
    assert names(rest)[0] == "cm-0010"  # the hint resumes after the first page (cm-0000..9), at the latest version


def test_bad_tokens_and_limits_are_400(served):
    for query in ({"continue": "not-a-token"}, {"continue": encode_token(5, "", 0.0)}, {"limit": "ten"}):
        code, status = request(served, "/api/v1/namespaces/bulk/configmaps", **query)
        assert (code, status["reason"]) == (400, "BadRequest"), query


def test_a_client_preferring_protobuf_gets_the_json_page(served):
    page = get(served, "/api/v1/namespaces/bulk/configmaps",
               accept="application/vnd.kubernetes.protobuf, application/json", limit=5)
    assert len(page["items"]) == 5 and page["metadata"]["continue"] and page["kind"] == "ConfigMapList"


def test_kubectl_get_pods_in_chunks_prints_what_one_list_prints(hotel):
    whole = hotel.ok("get pods -A -o wide")
    assert hotel.ok("get pods -A -o wide --chunk-size=7") == whole and len(whole.splitlines()) > 20
