"""`Kube.patch` sends the patch type it is asked for (strategic, merge, JSON) to a served twin.

The three types differ on lists, so each test reads back what the server applied: a strategic merge patch merges
containers by name, a merge patch replaces the whole list, a JSON patch edits one path. Fault injectors depend on
this through `Kube.patch` and `Kube.restart_deployment`; it must hold on kubernetes 30.1 (AIOpsLab's pin, which has
no `_content_type`) and on the newer client this project installs.
"""

from __future__ import annotations

import pytest

SOCIAL, NAME = "test-social-network", "compose-post-service"


def _container(kube, name: str) -> dict:
    """Return the first container of a Deployment's pod template."""
    return kube.deployment(SOCIAL, name)["spec"]["template"]["spec"]["containers"][0]


def test_strategic_patch_merges_containers_by_name(social_net):
    kube = social_net.kube
    body = {"spec": {"template": {"spec": {"containers": [{"name": NAME, "image": "example/compose:2"}]}}}}
    kube.patch(kube.apps.patch_namespaced_deployment, NAME, SOCIAL, body=body)
    box = _container(kube, NAME)
    assert box["image"] == "example/compose:2"
    assert box["command"] == ["ComposePostService"]  # kept: merged into the existing container


def test_merge_patch_replaces_the_container_list(social_net):
    kube, name = social_net.kube, "home-timeline-service"
    body = {"spec": {"template": {"spec": {"containers": [{"name": name, "image": "example/home:2"}]}}}}
    kube.patch(kube.apps.patch_namespaced_deployment, name, SOCIAL, body=body, kind="merge")
    box = _container(kube, name)
    assert box["image"] == "example/home:2"
    assert "command" not in box  # replaced: a merge patch swaps lists whole


def test_merge_patch_null_removes_a_config_map_key(social_net):
    kube, name = social_net.kube, "media-mongodb"
    kube.patch(kube.core.patch_namespaced_config_map, name, SOCIAL, body={"data": {"extra": "1"}}, kind="merge")
    kube.patch(kube.core.patch_namespaced_config_map, name, SOCIAL, body={"data": {"extra": None}}, kind="merge")
    assert "extra" not in kube.config_map(SOCIAL, name)["data"]
    assert "mongod.conf" in kube.config_map(SOCIAL, name)["data"]


def test_json_patch_edits_one_path(social_net):
    kube, name = social_net.kube, "user-service"
    kube.patch(kube.core.patch_namespaced_service, name, SOCIAL, kind="json",
               body=[{"op": "replace", "path": "/spec/ports/0/targetPort", "value": 9999}])
    assert kube.service(SOCIAL, name)["spec"]["ports"][0]["targetPort"] == 9999


def test_restart_deployment_stamps_the_template(social_net):
    kube, name = social_net.kube, "user-timeline-service"
    done = kube.restart_deployment(SOCIAL, name)
    stamp = done["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"]
    assert stamp.endswith("Z") and _container(kube, name)["command"] == ["UserTimelineService"]


def test_unknown_patch_kind_is_refused_with_the_choices(social_net):
    kube = social_net.kube
    with pytest.raises(ValueError, match="choose one of: strategic, merge, json"):
        kube.patch(kube.core.patch_namespaced_service, "user-service", SOCIAL, body={}, kind="apply")
