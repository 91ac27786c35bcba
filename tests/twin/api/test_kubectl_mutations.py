"""Writes through kubectl: patch, scale, set, rollout, delete, label, annotate, replace, and their error lines."""

import json

import yaml

NS = "test-hotel-reservation"
FRONTEND = "hotel-reserv-frontend"


def deploy(served, name: str = "frontend") -> dict:
    """Return a deployment as kubectl sees it."""
    return json.loads(served.ok(f"get deploy {name} -n {NS} -o json"))


def container(served, name: str = "frontend") -> dict:
    """Return the first container of a deployment's template."""
    return deploy(served, name)["spec"]["template"]["spec"]["containers"][0]


def pods(served, service: str = "frontend") -> list[str]:
    """Return the pod names of a hotel service."""
    return [n.split("/")[1] for n in served.ok(f"get pods -n {NS} -l io.kompose.service={service} -o name").split()]


def replica_sets(served, service: str = "frontend") -> dict[str, dict]:
    """Return the ReplicaSets of a hotel service by name."""
    items = json.loads(served.ok(f"get rs -n {NS} -l io.kompose.service={service} -o json"))["items"]
    return {rs["metadata"]["name"]: rs for rs in items}


def test_strategic_merge_patch_merges_containers_by_name(hotel):
    patch = {"spec": {"template": {"spec": {"containers": [{"name": FRONTEND, "env": [{"name": "X", "value": "1"}]}]}}}}
    assert hotel.ok(["patch", "deploy", "frontend", "-n", NS, "-p", json.dumps(patch)]) == \
        "deployment.apps/frontend patched\n"
    env = container(hotel)["env"]
    assert {"name": "X", "value": "1"} in env and {"name": "JAEGER_SAMPLE_RATIO", "value": "1"} in env


def test_merge_patch_replaces_lists(hotel):
    hotel.ok(["patch", "deploy", "frontend", "-n", NS, "--type", "merge", "-p", '{"metadata":{"labels":{"x":"y"}}}'])
    assert deploy(hotel)["metadata"]["labels"] == {"io.kompose.service": "frontend", "x": "y"}
    patch = {"spec": {"template": {"spec": {"containers": [{"name": FRONTEND}]}}}}
    done = hotel.kubectl(["patch", "deploy", "frontend", "-n", NS, "--type", "merge", "-p", json.dumps(patch)])
    assert done.returncode == 1
    assert done.stderr.strip() == ('The Deployment "frontend" is invalid: spec.template.spec.containers[0].image: '
                                   "Required value")


def test_json_patch(hotel):
    ops = [{"op": "replace", "path": "/spec/replicas", "value": 2},
           {"op": "add", "path": "/metadata/annotations/team", "value": "sre"}]
    hotel.ok(["patch", "deploy", "frontend", "-n", NS, "--type", "json", "-p", json.dumps(ops)])
    d = deploy(hotel)
    assert d["spec"]["replicas"] == 2 and d["metadata"]["annotations"]["team"] == "sre"
    bad = hotel.kubectl(["patch", "deploy", "frontend", "-n", NS, "--type", "json", "-p",
                         '[{"op":"replace","path":"/spec/replicas","value":-1}]'])
    assert bad.stderr.strip() == ('The Deployment "frontend" is invalid: spec.replicas: Invalid value: -1: '
                                  "must be greater than or equal to 0")


def test_patch_of_a_missing_object(hotel):
    done = hotel.kubectl(["patch", "deploy", "nosuch", "-n", NS, "-p", "{}"])
    assert done.stderr.strip() == 'Error from server (NotFound): deployments.apps "nosuch" not found'


def test_scale_up_and_to_zero(hotel):
    assert hotel.ok(f"scale deploy/frontend -n {NS} --replicas=3") == "deployment.apps/frontend scaled\n"
    hotel.ok(f"rollout status deploy/frontend -n {NS}")
    assert len(pods(hotel)) == 3
    hotel.ok(f"scale deploy/frontend -n {NS} --replicas=0")
    hotel.ok(f"wait --for=delete pod -l io.kompose.service=frontend -n {NS} --timeout=30s")
    assert pods(hotel) == [] and deploy(hotel)["status"].get("replicas", 0) == 0
    assert hotel.ok(f"get deploy frontend -n {NS}").splitlines()[1].split()[1] == "0/0"


def test_scale_of_a_missing_deployment(hotel):
    done = hotel.kubectl(f"scale deploy/nosuch -n {NS} --replicas=2")
    assert done.stderr.strip() == 'error: no objects passed to scale deployments.apps "nosuch" not found'


def test_set_image_rolls_out_revision_two(hotel):
    (first,) = replica_sets(hotel)
    out = hotel.ok(f"set image deploy/frontend -n {NS} {FRONTEND}=yinfangchen/hotelreservation:v2")
    assert out == "deployment.apps/frontend image updated\n"
    assert "successfully rolled out" in hotel.ok(f"rollout status deploy/frontend -n {NS}")
    rss = replica_sets(hotel)
    (second,) = set(rss) - {first}
    assert rss[second]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert rss[first]["spec"]["replicas"] == 0 and rss[second]["status"]["readyReplicas"] == 1
    hotel.twin.advance(5)  # the old pod may still be Terminating when the rollout is reported done, as on a cluster
    assert all(p.startswith(second + "-") for p in pods(hotel))
    history = hotel.ok(f"rollout history deploy/frontend -n {NS}").splitlines()
    assert history[:4] == ["deployment.apps/frontend ", "REVISION  CHANGE-CAUSE", "1         <none>",
                           "2         <none>"]


def test_set_env(hotel):
    assert hotel.ok(f"set env deploy/frontend -n {NS} FOO=bar") == "deployment.apps/frontend env updated\n"
    assert {"name": "FOO", "value": "bar"} in container(hotel)["env"]
    listed = hotel.ok(f"set env deploy/frontend -n {NS} --list")
    assert listed == f"# Deployment frontend, container {FRONTEND}\nJAEGER_SAMPLE_RATIO=1\nFOO=bar\n"


def test_rollout_restart_and_undo(hotel):
    assert hotel.ok(f"rollout restart deploy/frontend -n {NS}") == "deployment.apps/frontend restarted\n"
    annotations = deploy(hotel)["spec"]["template"]["metadata"]["annotations"]
    assert annotations["kubectl.kubernetes.io/restartedAt"] == "2025-06-02T09:05:00Z"  # the twin's clock
    hotel.ok(f"rollout status deploy/frontend -n {NS}")
    hotel.ok(f"set image deploy/frontend -n {NS} {FRONTEND}=yinfangchen/hotelreservation:v2")
    hotel.ok(f"rollout status deploy/frontend -n {NS}")
    assert hotel.ok(f"rollout undo deploy/frontend -n {NS}") == "deployment.apps/frontend rolled back\n"
    out = hotel.ok(f"rollout status deploy/frontend -n {NS}")
    assert out.splitlines()[-1] == 'deployment "frontend" successfully rolled out'
    assert container(hotel)["image"] == "yinfangchen/hotelreservation:latest"
    revisions = [line.split()[0] for line in hotel.ok(f"rollout history deploy/frontend -n {NS}").splitlines()[2:]
                 if line.strip()]
    assert revisions == ["1", "3", "4"] and len(replica_sets(hotel)) == 3
    done = hotel.kubectl(f"rollout undo deploy/frontend -n {NS} --to-revision=9")
    assert done.stderr.strip() == "error: unable to find specified revision 9 in history"


def test_deleted_pod_is_replaced_by_its_replica_set(hotel):
    (old,) = pods(hotel)
    assert hotel.ok(f"delete pod {old} -n {NS}") == f'pod "{old}" deleted\n'
    (new,) = pods(hotel)
    assert new != old and new.rsplit("-", 1)[0] == old.rsplit("-", 1)[0]


def test_deleting_a_deployment_collects_its_replica_sets_and_pods(hotel):
    assert hotel.ok(f"delete deploy frontend -n {NS}") == 'deployment.apps "frontend" deleted\n'
    hotel.twin.advance(5)
    done = hotel.kubectl(f"get deploy,rs,pods -n {NS} -l io.kompose.service=frontend")
    assert done.stdout == "" and done.stderr.strip() == f"No resources found in {NS} namespace."


def test_label_and_annotate(hotel):
    (pod,) = pods(hotel, "search")
    assert hotel.ok(f"label pod {pod} -n {NS} tier=backend") == f"pod/{pod} labeled\n"
    assert hotel.ok(f"get pods -n {NS} -l tier=backend -o name") == f"pod/{pod}\n"
    refused = hotel.kubectl(f"label pod {pod} -n {NS} tier=front")
    assert refused.stderr.strip() == "error: 'tier' already has a value (backend), and --overwrite is false"
    assert hotel.ok(f"label pod {pod} -n {NS} tier-") == f"pod/{pod} unlabeled\n"
    assert hotel.ok(f"annotate deploy search -n {NS} owner=sre") == "deployment.apps/search annotated\n"
    assert deploy(hotel, "search")["metadata"]["annotations"]["owner"] == "sre"


def test_replace_with_a_stale_resource_version_conflicts(hotel):
    stale = hotel.ok(f"get cm mongo-geo-script -n {NS} -o yaml")
    hotel.ok(["patch", "cm", "mongo-geo-script", "-n", NS, "--type", "merge", "-p", '{"data":{"extra":"1"}}'])
    done = hotel.kubectl("replace -f -", stdin=stale.encode())
    assert done.returncode == 1
    assert done.stderr.strip() == ('Error from server (Conflict): error when replacing "STDIN": Operation cannot be '
                                   'fulfilled on configmaps "mongo-geo-script": the object has been modified; please '
                                   "apply your changes to the latest version and try again")
    fresh = yaml.safe_load(hotel.ok(f"get cm mongo-geo-script -n {NS} -o yaml"))
    fresh["data"]["extra"] = "2"
    assert hotel.ok("replace -f -", stdin=yaml.safe_dump(fresh).encode()) == "configmap/mongo-geo-script replaced\n"


def test_server_dry_run_of_every_write_changes_nothing(hotel):
    (pod,) = pods(hotel, "geo")
    before = hotel.ok(f"get all,cm -n {NS} -o json")
    manifest = yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra", "namespace": NS},
                               "data": {"k": "v"}})
    previews = {
        f"delete pod {pod} -n {NS}": f'pod "{pod}" deleted (server dry run)',
        f"delete pod -l io.kompose.service=geo -n {NS}": f'pod "{pod}" deleted (server dry run)',
        f"delete deploy geo -n {NS}": 'deployment.apps "geo" deleted (server dry run)',
        f"scale deploy geo -n {NS} --replicas=0": "deployment.apps/geo scaled (server dry run)",
        f"set image deploy/geo -n {NS} hotel-reserv-geo=nginx": "deployment.apps/geo image updated (server dry run)",
        f"label pod {pod} -n {NS} tier=x": f"pod/{pod} labeled (server dry run)",
        f"annotate deploy geo -n {NS} owner=sre": "deployment.apps/geo annotated (server dry run)",
        f"set env deploy/geo -n {NS} X=1": "deployment.apps/geo env updated (server dry run)",
        "apply -f -": "configmap/extra created (server dry run)",
    }
    for command, shown in previews.items():
        stdin = manifest.encode() if command.startswith("apply") else None
        assert hotel.ok(f"{command} --dry-run=server", stdin=stdin).strip() == shown, command
    hotel.ok(["patch", "deploy", "geo", "-n", NS, "--dry-run=server", "-p", '{"spec":{"replicas":0}}'])
    hotel.twin.advance(30)
    assert pods(hotel, "geo") == [pod]
    assert hotel.ok(f"get all,cm -n {NS} -o json") == before
