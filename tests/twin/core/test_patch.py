"""PATCH semantics: the bodies kubectl 1.32 sends, applied as the Kubernetes API server applies them."""

from __future__ import annotations

import copy
import json

import pytest

from aoi.twin.core.patch import (
    APPLY,
    JSON_PATCH,
    MERGE,
    PATCH_TYPES,
    SMP,
    PatchError,
    apply_patch,
    json_patch,
    merge_patch,
    strategic_merge,
)

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def patched(obj: dict, body, content_type: str = SMP, kind: str = "Deployment") -> dict:
    """Apply `body` (bytes or JSON-able) and check that `obj` was not mutated."""
    before = copy.deepcopy(obj)
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    out = apply_patch(obj, raw, content_type, kind)
    assert obj == before, "apply_patch mutated its input"
    return out


def failure(obj: dict, body: bytes, content_type: str = SMP, kind: str = "Deployment") -> PatchError:
    """Return the PatchError the body raises."""
    with pytest.raises(PatchError) as info:
        apply_patch(obj, body, content_type, kind)
    return info.value


def deployment() -> dict:
    """Return a Deployment with two containers, env, ports, mounts, a node selector and annotations."""
    app = {"name": "app", "image": "geo:1", "env": [{"name": "A", "value": "1"}],
           "ports": [{"containerPort": 8080, "protocol": "TCP"}],
           "volumeMounts": [{"name": "data", "mountPath": "/data"}], "args": ["--a", "--b"]}
    sidecar = {"name": "sidecar", "image": "envoy:1"}
    pod = {"containers": [app, sidecar], "nodeSelector": {"disk": "ssd"},
           "volumes": [{"name": "data", "emptyDir": {}}], "tolerations": [{"key": "a", "operator": "Exists"}]}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "geo", "namespace": "default", "labels": {"app": "geo"},
                         "annotations": {"deployment.kubernetes.io/revision": "2"}, "finalizers": ["a", "b"]},
            "spec": {"replicas": 2, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
                     "template": {"metadata": {"labels": {"app": "geo"}, "annotations": {"x": "y"}},
                                  "spec": pod}}}


def service() -> dict:
    """Return a Service with two ports."""
    return {"kind": "Service", "metadata": {"name": "geo"},
            "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080},
                               {"name": "metrics", "port": 9090, "targetPort": 9100}]}}


def pod_spec(obj: dict) -> dict:
    """Return the pod template spec of a workload."""
    return obj["spec"]["template"]["spec"]


def names(items: list, key: str = "name") -> list:
    """Return the merge keys of a list of objects."""
    return [item[key] for item in items]


# kubectl set / rollout / scale / label / annotate


def test_set_image_merges_by_container_name_and_strips_directives():
    body = {"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
                                           "containers": [{"image": "geo:2", "name": "app"}]}}}}
    out = patched(deployment(), body)
    containers = pod_spec(out)["containers"]
    assert names(containers) == ["app", "sidecar"]
    assert containers[0]["image"] == "geo:2" and containers[0]["env"] == [{"name": "A", "value": "1"}]
    assert containers[1] == {"name": "sidecar", "image": "envoy:1"}
    assert "$setElementOrder/containers" not in pod_spec(out)


def test_set_env_merges_env_by_name_in_set_element_order():
    body = {"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
        "containers": [{"$setElementOrder/env": [{"name": "A"}, {"name": "FOO"}],
                        "env": [{"name": "FOO", "value": "bar"}], "name": "app"}]}}}}
    env = pod_spec(patched(deployment(), body))["containers"][0]["env"]
    assert env == [{"name": "A", "value": "1"}, {"name": "FOO", "value": "bar"}]


def test_set_env_update_replaces_value_from_with_null():
    obj = deployment()
    pod_spec(obj)["containers"][0]["env"] = [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]
    body = {"spec": {"template": {"spec": {"containers": [
        {"env": [{"name": "A", "value": "2", "valueFrom": None}], "name": "app"}]}}}}
    assert pod_spec(patched(obj, body))["containers"][0]["env"] == [{"name": "A", "value": "2"}]


def test_rollout_restart_adds_a_template_annotation():
    stamp = {"kubectl.kubernetes.io/restartedAt": "2026-11-29T19:45:08Z"}
    out = patched(deployment(), {"spec": {"template": {"metadata": {"annotations": stamp}}}})
    assert out["spec"]["template"]["metadata"]["annotations"] == {"x": "y", **stamp}
    assert pod_spec(out) == pod_spec(deployment())


def test_scale_is_a_merge_patch():
    assert patched(deployment(), b'{"spec":{"replicas":0}}', MERGE)["spec"]["replicas"] == 0


def test_label_and_annotate_merge_patches_remove_with_null():
    pod = {"kind": "Pod", "metadata": {"name": "p", "labels": {"k": "v", "app": "geo"}, "annotations": {"a": "1"}}}
    out = patched(pod, {"metadata": {"labels": {"k": None, "tier": "web"}}}, MERGE, "Pod")
    assert out["metadata"]["labels"] == {"app": "geo", "tier": "web"}
    out = patched(pod, {"metadata": {"annotations": {"a": None, "b": "2"}}}, MERGE + "; charset=utf-8", "Pod")
    assert out["metadata"]["annotations"] == {"b": "2"}


def test_rollout_undo_json_patch_replaces_template_and_annotations():
    template = {"metadata": {"labels": {"app": "geo"}}, "spec": {"containers": [{"name": "app", "image": "geo:0"}]}}
    annotations = {"deployment.kubernetes.io/revision": "1"}
    ops = [{"op": "replace", "path": "/spec/template", "value": template},
           {"op": "replace", "path": "/metadata/annotations", "value": annotations}]
    out = patched(deployment(), ops, JSON_PATCH)
    assert out["spec"]["template"] == template and out["metadata"]["annotations"] == annotations


# kubectl patch


def test_default_patch_null_deletes_node_selector():
    out = patched(deployment(), {"spec": {"template": {"spec": {"nodeSelector": None}}}})
    assert "nodeSelector" not in pod_spec(out)


def test_service_ports_merge_by_port():
    out = patched(service(), {"spec": {"ports": [{"port": 9090, "targetPort": 9090}]}}, kind="Service")
    assert out["spec"]["ports"] == [{"name": "http", "port": 80, "targetPort": 8080},
                                    {"name": "metrics", "port": 9090, "targetPort": 9090}]


def test_new_list_item_without_set_element_order_comes_first_as_upstream():
    out = patched(service(), {"spec": {"ports": [{"port": 443, "name": "https"}]}}, kind="Service")
    assert names(out["spec"]["ports"], "port") == [443, 80, 9090]
    added = {"spec": {"template": {"spec": {"containers": [{"name": "redis", "image": "redis"}]}}}}
    assert names(pod_spec(patched(deployment(), added))["containers"]) == ["redis", "app", "sidecar"]


def test_json_patch_remove_and_replace():
    out = patched(deployment(), [{"op": "remove", "path": "/spec/template/spec/nodeSelector"}], JSON_PATCH)
    assert "nodeSelector" not in pod_spec(out)
    out = patched(service(), [{"op": "replace", "path": "/spec/ports/0/targetPort", "value": 80}], JSON_PATCH)
    assert out["spec"]["ports"][0]["targetPort"] == 80


def test_json_patch_failures_are_422_and_malformed_ops_400():
    test_op = b'[{"op":"test","path":"/spec/replicas","value":5},{"op":"replace","path":"/spec/replicas","value":1}]'
    assert failure(deployment(), test_op, JSON_PATCH).code == 422
    assert failure(deployment(), b'[{"op":"remove","path":"/spec/nope"}]', JSON_PATCH).code == 422
    assert failure(deployment(), b'{"op":"remove"}', JSON_PATCH).code == 400
    assert failure(deployment(), b'[{"path":"/spec"}]', JSON_PATCH).code == 400


# directives


def test_patch_delete_removes_a_container():
    body = {"spec": {"template": {"spec": {"containers": [{"$patch": "delete", "name": "sidecar"}]}}}}
    assert names(pod_spec(patched(deployment(), body))["containers"]) == ["app"]


def test_patch_replace_on_a_map_replaces_it_whole():
    body = {"spec": {"template": {"metadata": {"labels": {"$patch": "replace", "app": "geo", "v": "2"}}}}}
    assert patched(deployment(), body)["spec"]["template"]["metadata"]["labels"] == {"app": "geo", "v": "2"}


def test_patch_replace_in_a_list_replaces_the_list():
    body = {"spec": {"template": {"spec": {"containers": [{"name": "solo", "image": "x"}, {"$patch": "replace"}]}}}}
    assert pod_spec(patched(deployment(), body))["containers"] == [{"name": "solo", "image": "x"}]


def test_patch_delete_on_a_map_and_explicit_merge():
    out = patched(deployment(), {"spec": {"strategy": {"$patch": "delete"}, "template": {"$patch": "merge"}}})
    assert "strategy" not in out["spec"] and out["spec"]["template"] == deployment()["spec"]["template"]


def test_retain_keys_clears_unlisted_fields():
    body = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate", "rollingUpdate": None}}}
    assert patched(deployment(), body)["spec"]["strategy"] == {"type": "Recreate"}
    volume = {"$retainKeys": ["configMap", "name"], "name": "data", "configMap": {"name": "cm"}}
    out = patched(deployment(), {"spec": {"template": {"spec": {"volumes": [volume]}}}})
    assert pod_spec(out)["volumes"] == [{"name": "data", "configMap": {"name": "cm"}}]


def test_retain_keys_must_name_every_patched_field():
    body = b'{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate","rollingUpdate":{"maxSurge":2}}}}'
    error = failure(deployment(), body)
    assert error.code == 400 and "rollingUpdate" in str(error)


def test_finalizers_union_and_delete_from_primitive_list():
    out = patched(deployment(), {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}})
    assert out["metadata"]["finalizers"] == ["b"]
    out = patched(deployment(), {"metadata": {"finalizers": ["b", "c"]}})
    assert out["metadata"]["finalizers"] == ["a", "b", "c"]
    ordered = {"metadata": {"$setElementOrder/finalizers": ["a", "b", "c"], "finalizers": ["c"]}}
    assert patched(deployment(), ordered)["metadata"]["finalizers"] == ["a", "b", "c"]


def test_set_element_order_reorders_without_content_change():
    body = {"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}]}}}}
    assert names(pod_spec(patched(deployment(), body))["containers"]) == ["sidecar", "app"]


def test_set_element_order_must_list_the_patched_items():
    body = {"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "app"}],
                                           "containers": [{"name": "other", "image": "x"}]}}}}
    assert failure(deployment(), json.dumps(body).encode()).code == 422


# apply


def test_client_side_apply_patch_with_last_applied_annotation():
    applied = json.dumps({"kind": "Deployment", "spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "nginx:1.26"}]}}}})
    body = {"metadata": {"annotations": {LAST_APPLIED: applied}, "labels": {"app": None}},
            "spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "app"}],
                                           "containers": [{"image": "nginx:1.26", "name": "app"},
                                                          {"$patch": "delete", "name": "sidecar"}]}}}}
    out = patched(deployment(), body)
    assert out["metadata"]["annotations"][LAST_APPLIED] == applied
    assert out["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert out["metadata"]["labels"] == {}
    assert [(c["name"], c["image"]) for c in pod_spec(out)["containers"]] == [("app", "nginx:1.26")]


def test_server_side_apply_yaml_partial_body_merges():
    body = b"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: geo
  annotations: {note: "2026-01-01T00:00:00Z"}
spec:
  replicas: 5
  template:
    spec:
      containers:
      - name: app
        image: geo:3
"""
    out = patched(deployment(), body, APPLY)
    assert out["spec"]["replicas"] == 5 and out["metadata"]["annotations"]["note"] == "2026-01-01T00:00:00Z"
    assert [(c["name"], c["image"]) for c in pod_spec(out)["containers"]] == [("app", "geo:3"), ("sidecar", "envoy:1")]


def test_server_side_apply_json_body_creates_from_empty():
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "b"}}
    assert patched({}, cm, APPLY, kind="") == cm


# per-kind merge keys


def test_container_fields_merge_by_their_own_keys():
    body = {"spec": {"template": {"spec": {"containers": [{"name": "app",
            "ports": [{"containerPort": 9090}], "volumeMounts": [{"name": "logs", "mountPath": "/logs"}],
            "args": ["--c"], "envFrom": [{"configMapRef": {"name": "cm"}}]}]}}}}
    app = pod_spec(patched(deployment(), body))["containers"][0]
    assert names(app["ports"], "containerPort") == [9090, 8080]
    assert names(app["volumeMounts"], "mountPath") == ["/logs", "/data"]
    assert app["args"] == ["--c"] and app["envFrom"] == [{"configMapRef": {"name": "cm"}}]


def test_tolerations_are_replaced():
    body = {"spec": {"template": {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}}}}
    assert pod_spec(patched(deployment(), body))["tolerations"] == [{"key": "b", "operator": "Exists"}]


def test_cronjob_pod_template_is_found_under_job_template():
    cron = {"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {
        "containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}}}}}}
    body = {"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "z"}]}}}}}}
    out = patched(cron, body, kind="CronJob")
    assert out["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"] == [
        {"name": "a", "image": "x"}, {"name": "b", "image": "z"}]


def test_pod_init_containers_and_image_pull_secrets_merge_by_name():
    pod = {"kind": "Pod", "spec": {"initContainers": [{"name": "i", "image": "x"}],
                                   "imagePullSecrets": [{"name": "r1"}], "containers": [{"name": "c"}]}}
    body = {"spec": {"initContainers": [{"name": "i", "image": "y"}], "imagePullSecrets": [{"name": "r2"}]}}
    out = patched(pod, body, kind="Pod")
    assert out["spec"]["initContainers"] == [{"name": "i", "image": "y"}]
    assert names(out["spec"]["imagePullSecrets"]) == ["r2", "r1"]


def test_node_taints_are_replaced_as_kubectl_taint_expects():
    node = {"kind": "Node", "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"},
                                                {"key": "gpu", "effect": "NoExecute"}]},
            "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"},
                                     {"type": "Hostname", "address": "n"}],
                       "conditions": [{"type": "Ready", "status": "True"}]}}
    body = {"spec": {"taints": [{"key": "gpu", "effect": "NoExecute"}], "unschedulable": True},
            "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.2"}],
                       "conditions": [{"type": "Ready", "status": "False"}]}}
    out = patched(node, body, kind="Node")
    assert out["spec"] == {"taints": [{"key": "gpu", "effect": "NoExecute"}], "unschedulable": True}
    assert out["status"]["addresses"] == [{"type": "InternalIP", "address": "10.0.0.2"},
                                          {"type": "Hostname", "address": "n"}]
    assert out["status"]["conditions"] == [{"type": "Ready", "status": "False"}]


def test_status_conditions_merge_by_type_for_any_kind():
    conditions = [{"type": "A", "status": "True"}, {"type": "B", "status": "True"}]
    obj = {"kind": "Widget", "status": {"conditions": conditions}, "spec": {"items": [1, 2]}}
    out = patched(obj, {"status": {"conditions": [{"type": "B", "status": "False"}]}, "spec": {"items": [3]}},
                  kind="Widget")
    assert out["status"]["conditions"] == [{"type": "A", "status": "True"}, {"type": "B", "status": "False"}]
    assert out["spec"]["items"] == [3]


def test_owner_references_merge_by_uid_and_managed_fields_replace():
    meta = {"ownerReferences": [{"uid": "1", "name": "rs-a"}], "managedFields": [{"manager": "a"}]}
    body = {"metadata": {"ownerReferences": [{"uid": "1", "controller": True}], "managedFields": [{"manager": "b"}]}}
    out = patched({"kind": "Pod", "metadata": meta}, body, kind="Pod")
    assert out["metadata"] == {"ownerReferences": [{"uid": "1", "name": "rs-a", "controller": True}],
                               "managedFields": [{"manager": "b"}]}


def test_endpoints_subsets_are_replaced():
    ep = {"kind": "Endpoints", "subsets": [{"addresses": [{"ip": "10.0.0.1"}]}]}
    out = patched(ep, {"subsets": [{"addresses": [{"ip": "10.0.0.2"}]}]}, kind="Endpoints")
    assert out["subsets"] == [{"addresses": [{"ip": "10.0.0.2"}]}]


def test_persistent_volume_claim_ref_null_clears_it():
    pv = {"kind": "PersistentVolume", "spec": {"capacity": {"storage": "1Gi"},
                                               "claimRef": {"name": "data", "namespace": "default", "uid": "u"}}}
    out = patched(pv, b'{"spec":{"claimRef":null}}', kind="PersistentVolume")
    assert out["spec"] == {"capacity": {"storage": "1Gi"}}


# errors and purity


def test_malformed_json_is_a_400_naming_the_problem():
    error = failure(deployment(), b'{"spec": {"replicas": }')
    assert error.code == 400 and "not valid JSON" in str(error) and "line 1" in str(error)
    assert failure(deployment(), b"", MERGE).code == 400
    assert failure(deployment(), b"a: [unclosed", APPLY).code == 400


def test_patch_that_is_not_an_object_is_a_400():
    for body, ctype in [(b"[1, 2]", SMP), (b'"spec"', MERGE), (b"- a\n- b\n", APPLY)]:
        error = failure(deployment(), body, ctype)
        assert error.code == 400 and "must be a JSON object" in str(error)


def test_unsupported_content_type_is_a_415_listing_the_supported_types():
    error = failure(deployment(), b"{}", "application/json")
    assert error.code == 415 and all(t in str(error) for t in PATCH_TYPES)


def test_unmergeable_list_items_are_422():
    no_key = {"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}
    assert failure(deployment(), json.dumps(no_key).encode()).code == 422
    bad = {"spec": {"template": {"spec": {"containers": [{"name": "app", "$patch": "squash"}]}}}}
    assert failure(deployment(), json.dumps(bad).encode()).code == 422


def test_results_share_nothing_with_the_input():
    obj = deployment()
    for out in (strategic_merge(obj, {"spec": {"replicas": 1}}, "Deployment"),
                merge_patch(obj, {"spec": {"replicas": 1}}),
                json_patch(obj, [{"op": "replace", "path": "/spec/replicas", "value": 1}])):
        pod_spec(out)["containers"][0]["image"] = "mutated"
        out["metadata"]["labels"]["new"] = "x"
    assert obj == deployment()


def test_set_element_order_on_a_list_the_schema_lacks_merges_by_the_key_it_names():
    obj = {"kind": "Widget", "spec": {"gates": [{"n": "a", "v": 1}, {"n": "b"}]}}
    body = {"spec": {"$setElementOrder/gates": [{"n": "b"}, {"n": "a"}], "gates": [{"n": "a", "v": 2}]}}
    assert patched(obj, body, kind="Widget")["spec"]["gates"] == [{"n": "b"}, {"n": "a", "v": 2}]
