"""The expert model: analyzers on outputs captured from the twin, the no-leak rule, replay determinism, the roles,
and end-to-end episodes of every task type."""

from __future__ import annotations

import doctest
import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest

import aoi.models.expert as expert_pkg
from aoi.agents.actions import env_action
from aoi.env import make
from aoi.models.base import ModelError
from aoi.models.expert import ExpertModel, checks, executor, instructions, observer
from aoi.models.expert.analyzers import (
    by_kind,
    chaos,
    config,
    deployments,
    events,
    logs,
    metrics,
    pods,
    services,
    storage,
    traces,
)
from aoi.models.expert.contract import ObserverContext, ShownFinding, SubAgentContext
from aoi.models.expert.findings import read
from aoi.models.expert.taxonomy import FAULT_THRESHOLD, LABELS, label
from aoi.problems import families
from aoi.problems.registry import make as make_problem
from aoi.problems.registry import problem_ids
from aoi.tasks import FAULT_TYPES, SYSTEM_LEVELS

PACKAGE = Path(expert_pkg.__file__).parent
ROLES = ("observer", "probe", "executor", "compressor")
COMMON_WORDS = {"user", "search"}  # targets that are also everyday words (a database user, re.search)


class Twin:
    """One reset episode of a problem; `run` plays read-only commands and returns their observations."""

    def __init__(self, problem_id: str):
        self.env = make(problem_id, max_steps=200)
        self.env.reset()
        self.ns = self.env.problem.namespace

    def run(self, command: str) -> str:
        return self.env.step(env_action("exec_shell", command.format(ns=self.ns)), role="probe")[0]

    def act(self, api: str, *args) -> str:
        return self.env.step(env_action(api, *args), role="probe")[0]

    def pod(self, prefix: str) -> str:
        listing = self.run("kubectl get pods -n {ns}")
        return next(line.split()[0] for line in listing.splitlines() if re.match(rf"{prefix}-\w+-\w+ ", line))


@pytest.fixture(scope="module")
def twin():
    opened: dict[str, Twin] = {}

    def get(problem_id: str) -> Twin:
        if problem_id not in opened:
            opened[problem_id] = Twin(problem_id)
        return opened[problem_id]

    yield get
    for t in opened.values():
        t.env.close()


def survey(t: Twin, check: str) -> str:
    """Return what the probe's survey check of that name shows in this episode."""
    return t.run(checks.call(check, checks.Seen(t.ns, []), [])[1]["command"])


# --- analyzers on captured outputs -------------------------------------------------------------------------------

def test_every_symptom_class_is_filed_under_labels_aiopslab_accepts():
    assert {(kind, entry.system_level, entry.fault_type) for kind, entry in LABELS.items()
            if entry.system_level not in SYSTEM_LEVELS or entry.fault_type not in FAULT_TYPES} == set()


def test_pods_finds_the_crash_loop_and_ignores_start_up_restarts(twin):
    t = twin("revoke_auth_mongodb-detection-1")
    found = pods.analyze(survey(t, "pods"))
    assert ("crash_loop", "geo") in {(e.kind, e.component) for e in found}
    healthy = pods.analyze(survey(twin("noop_detection_hotel_reservation-1"), "pods"))
    assert [e for e in healthy if label(e.kind).confidence >= FAULT_THRESHOLD] == []


def test_pods_sees_a_chaos_killed_container_restart(twin):
    found = pods.analyze(survey(twin("container_kill-detection"), "pods"))
    assert ("restarted", "geo") in {(e.kind, e.component) for e in found}


def test_events_name_the_scheduling_reason(twin):
    found = events.analyze(survey(twin("assign_to_non_existent_node_social_net-detection-1"), "events"))
    assert [(e.kind, e.component) for e in found] == [("unschedulable_selector", "user-service")]
    claims = events.analyze(survey(twin("redeploy_without_PV-detection-1"), "events"))
    assert {e.component for e in by_kind(claims, "unbound_claim")} >= {"mongodb-geo", "mongodb-rate"}


@pytest.mark.parametrize("problem_id, kind, component", [
    ("scale_pod_zero_social_net-detection-1", "replicas_zero", "user-service"),
    ("misconfig_app_hotel_res-detection-1", "image_unlike_siblings", "geo"),
    ("wrong_bin_usage-detection-1", "command_unlike_siblings", "profile"),
])
def test_deployments_find_the_odd_one_out(twin, problem_id, kind, component):
    found = deployments.analyze(survey(twin(problem_id), "deployments"))
    strong = [(e.kind, e.component) for e in found if e.kind != "unavailable"]
    assert strong == [(kind, component)]


def test_deployments_say_what_the_siblings_run(twin):
    wrong = deployments.analyze(survey(twin("wrong_bin_usage-detection-1"), "deployments"))[0]
    assert wrong.facts["expected"] == ["profile"] and wrong.facts["runs"] == "geo"
    image = deployments.analyze(survey(twin("misconfig_app_hotel_res-detection-1"), "deployments"))
    assert by_kind(image, "image_unlike_siblings")[0].facts["expected"] == "yinfangchen/hotelreservation:latest"
    assert deployments.analyze(survey(twin("noop_detection_social_network-1"), "deployments")) == []


def test_chaos_names_the_selected_service(twin):
    found = chaos.analyze(survey(twin("network_delay_hotel_res-detection-1"), "chaos"))
    assert [(e.component, e.facts["kind"], e.facts["action"]) for e in found] == [("user", "networkchaos", "delay")]


def test_services_compare_target_ports_with_container_ports(twin):
    t = twin("k8s_target_port-misconfig-detection-2")
    found = services.port_mismatches(survey(t, "services"), survey(t, "pod_ports"))
    assert [(e.component, e.facts["target"], e.facts["expected"]) for e in found] == [("text-service", 9999, 9090)]
    quiet = twin("noop_detection_social_network-1")
    assert services.port_mismatches(survey(quiet, "services"), survey(quiet, "pod_ports")) == []


def test_storage_finds_released_volumes_behind_pending_claims(twin):
    t = twin("redeploy_without_PV-detection-1")
    assert len(storage.pending_claims(t.run("kubectl get pvc -n {ns}"))) == 6
    released = storage.released_volumes(t.run("kubectl get pv"), t.ns)
    assert {e.facts["claim"] for e in released} >= {f"{t.ns}/geo-pvc", f"{t.ns}/rate-pvc"}


def test_config_reads_tls_flags_and_scripts(twin):
    tls = twin("auth_miss_mongodb-detection-1")
    found = config.analyze(tls.run("kubectl get configmap url-shorten-mongodb -n {ns} -o yaml"))
    assert [(e.kind, e.facts["mode"]) for e in found] == [("tls_required", "requireTLS")]
    flags = twin("astronomy_shop_cart_service_failure-detection-1")
    on = config.analyze(flags.run("kubectl get configmap flagd-config -n {ns} -o yaml"))
    assert [e.component for e in on] == ["cartFailure"]
    assert json.loads(on[0].facts["fixed"])["flags"]["cartFailure"]["defaultVariant"] == "off"
    scripts = config.analyze(twin("revoke_auth_mongodb-detection-1").run(
        "kubectl get configmap failure-admin-geo -n {ns} -o yaml"))
    assert {op for e in scripts for op in e.facts["ops"]} >= {"grantRolesToUser", "createUser"}


def test_config_reads_a_tls_mode_however_yaml_spells_it():
    def modes(conf: str) -> list[str]:
        doc = {"kind": "ConfigMap", "metadata": {"name": "db"}, "data": {"mongod.conf": conf}}
        return [e.facts["mode"] for e in config.analyze(json.dumps(doc)) if e.kind == "tls_required"]

    assert modes("net:\n  tls:\n    mode: requireTLS\n") == ["requireTLS"]
    assert modes('net: {"\\x74ls": {mode: "require\\x53SL"}}') == ["requireSSL"]  # escapes spell "tls", "S"
    assert modes("x: &m requireTLS\nnet: {ssl: {mode: *m}}") == ["requireTLS"]
    assert modes("net:\n  tls:\n    mode: allowTLS\n") == modes('{"flags": {"tlsOff": {}}}') == []


def test_config_reads_mounts_from_describe(twin):
    t = twin("revoke_auth_mongodb-detection-1")
    assert config.mounts(t.run("kubectl describe deployment mongodb-geo -n {ns}"))["failure-admin-geo"] == "/scripts"


@pytest.mark.parametrize("problem_id, pod, kind, component", [
    ("revoke_auth_mongodb-detection-2", "rate", "db_unauthorized", "mongodb-rate"),
    ("user_unregistered_mongodb-detection-1", "geo", "db_auth_failed", "mongodb-geo"),
    ("auth_miss_mongodb-detection-1", "url-shorten-service", "db_unreachable", "url-shorten-mongodb"),
    ("wrong_bin_usage-detection-1", "profile", "wrong_binary", "profile"),
])
def test_logs_name_the_cause(twin, problem_id, pod, kind, component):
    t = twin(problem_id)
    name = t.pod(pod)
    text = t.run(f"kubectl logs {name} -n {{ns}} --tail 40") + t.run(f"kubectl logs {name} -n {{ns}} --previous")
    assert (kind, component) in {(e.kind, e.component) for e in logs.analyze(name, text)}


def test_traces_find_failing_and_slow_services(twin):
    t = twin("astronomy_shop_cart_service_failure-detection-1")
    path = re.search(r"exported to: (\S+)", t.act("get_traces", t.ns, 5)).group(1)
    from aoi.agents import filereader

    found = traces.analyze(filereader.read(path, "aggregate", by="service_name"))
    assert "cart" in {e.component for e in by_kind(found, "trace_errors")}
    slow = twin("astronomy_shop_recommendation_service_cache_failure-detection-1")
    path = re.search(r"exported to: (\S+)", slow.act("get_traces", slow.ns, 5)).group(1)
    assert by_kind(traces.analyze(filereader.read(path, "aggregate", by="service_name")),
                   "slow_service")[0].component == "recommendation"


def test_metrics_find_cpu_hogs_and_dropped_packets(twin):
    from aoi.agents import filereader

    def summary(problem_id: str, metric: str) -> str:
        t = twin(problem_id)
        folder = re.search(r"directory: (\S+)", t.act("get_metrics", t.ns, 5)).group(1)
        return filereader.read(f"{folder}/container/kpi_{metric}.csv")

    hot = metrics.cpu(summary("astronomy_shop_ad_service_high_cpu-detection-1", "container_cpu_usage_seconds_total"))
    assert [e.component for e in hot] == ["ad"]
    drops = metrics.drops(summary("network_loss_hotel_res-detection-1",
                                  "container_network_receive_packets_dropped_total"))
    assert [e.component for e in drops] == ["user"]
    assert metrics.drops(summary("noop_detection_hotel_reservation-1",
                                 "container_network_receive_packets_dropped_total")) == []


# --- the rules ------------------------------------------------------------------------------------------------------

def test_no_problem_ids_families_or_targets_in_the_package():
    """The expert reasons from evidence: nothing in it may name a problem, a fault family or a target."""
    names = set(problem_ids()) | {f.name for f in families.FAMILIES}
    names |= {stem for stem, _, _, _ in families.FLAG_PROBLEMS}
    targets = {t for pid in problem_ids() for p in [make_problem(pid)]
               for t in (*p.valid_targets, *p.answers.localization) if t}
    specific = {t for t in targets if "-" in t or re.search("[A-Z]", t)}  # hyphenated names, camelCase flags
    words = targets - specific - COMMON_WORDS
    text = "\n".join(p.read_text() for p in PACKAGE.rglob("*") if p.suffix in (".py", ".md", ".yaml"))
    leaked = sorted(n for n in names | specific if n.lower() in text.lower())
    leaked += sorted(w for w in words if re.search(rf"\b{re.escape(w)}\b", text, re.IGNORECASE))
    assert leaked == [], f"the expert package names {leaked}; reason from evidence instead"


def test_doctests_of_the_package_pass():
    for info in pkgutil.walk_packages([str(PACKAGE)], "aoi.models.expert."):
        result = doctest.testmod(importlib.import_module(info.name))
        assert result.failed == 0, info.name


def test_the_probe_answers_a_replayed_conversation_the_same(twin):
    model, t = ExpertModel(), twin("revoke_auth_mongodb-detection-1")
    asked = SubAgentContext(budget=4, instruction=instructions.render("survey", t.ns), context="ns")
    messages = [{"role": "system", "content": "(the probe's prompt)"}, {"role": "user", "content": "(its task)"}]
    for _ in range(4):
        reply = model.complete(messages, role="probe", context=asked)
        assert model.complete(list(messages), role="probe", context=asked).text == reply.text
        command = json.loads(reply.text)["args"]["command"]
        messages += [{"role": "assistant", "content": reply.text}, {"role": "user", "content": t.run(command)}]
    report = json.loads(model.complete(messages, role="probe", context=asked).text)
    assert report["tool"] == "finish" and report["args"]["suspects"][0] == "geo"
    assert reply.input_tokens > 0 and reply.output_tokens > 0


def test_the_observer_reads_an_llm_probes_prose():
    prose = ShownFinding(iteration=1, source="probe", instruction="look around",
                         text="The api pod is in CrashLoopBackOff after 5 restarts.")
    context = ObserverContext(task_type="detection", namespace="shop", iteration=2, max_iterations=14, steps_left=20,
                              findings=(prose,))
    decision = observer.decide(read(context))
    assert decision["next"] == "submit" and decision["answer"] == "Yes"


def test_the_observer_needs_the_context_the_observer_sends():
    with pytest.raises(ModelError, match="context=ObserverContext"):
        ExpertModel().complete([{"role": "user", "content": "Task (detection):\nNamespace: shop"}], role="observer")


def test_the_executor_runs_each_command_then_checks_the_pods():
    asked = SubAgentContext(budget=4, instruction="Apply the fix:\n1. kubectl scale deployment api -n shop "
                            "--replicas=1", context="x")
    messages = [{"role": "system", "content": "(the executor's prompt)"}, {"role": "user", "content": "(its task)"}]
    first = json.loads(executor.respond(messages, asked))
    assert first["args"]["command"] == "kubectl scale deployment api -n shop --replicas=1"
    messages += [{"role": "assistant", "content": json.dumps(first)}, {"role": "user", "content": "scaled"}]
    second = json.loads(executor.respond(messages, asked))
    assert second["args"]["command"] == "kubectl get pods -n shop"
    messages += [{"role": "assistant", "content": json.dumps(second)},
                 {"role": "user", "content": "NAME         READY   STATUS    RESTARTS   AGE\n"
                                             "api-1        1/1     Running   0   5s"}]
    report = json.loads(executor.respond(messages, asked))["args"]
    assert report["changes"] == ["kubectl scale deployment api -n shop --replicas=1"] and report["verified"] is True


# --- end to end -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("problem_id, target", [
    ("noop_detection_social_network-1", None),
    ("revoke_auth_mongodb-detection-2", None),
    ("astronomy_shop_payment_service_failure-detection-1", None),
    ("k8s_target_port-misconfig-localization-3", None),
    ("network_loss_hotel_res-localization-1", None),
    ("astronomy_shop_ad_service_failure-localization-1", "paymentUnreachable"),
    ("user_unregistered_mongodb-analysis-2", None),
    ("assign_to_non_existent_node_social_net-analysis-1", None),
    ("redeploy_without_PV-mitigation-1", None),
    ("wrong_bin_usage-mitigation-1", None),
    ("auth_miss_mongodb-mitigation-1", None),
    ("scale_pod_zero_social_net-mitigation-1", "media-mongodb"),
])
@pytest.mark.parametrize("decision_format", ["standard", "compact"])
def test_the_expert_team_solves_problems_of_every_task_type(problem_id, target, decision_format):
    from jsonschema import validate

    from aoi.agents.runtime import run_episode
    from aoi.config import load_config
    from aoi.models.compact import reply_schema

    env = make(problem_id, target=target)
    try:
        model = ExpertModel()
        config = load_config(overrides={"model": "expert", "agent.decision_format": decision_format}, environ={})
        traj = run_episode(env, config, dict.fromkeys(ROLES, model))
    finally:
        env.close()
    assert traj.error is None
    for step in (s for s in traj.steps if s.role == "observer" and s.messages and decision_format == "compact"):
        validate(json.loads(step.text), reply_schema("observer", step.messages))  # what a local model could write
    results = traj.results
    solved = results["Detection Accuracy"] == "Correct" if "Detection Accuracy" in results else results["success"]
    assert solved and results["strict_success"], (traj.submission, results)
