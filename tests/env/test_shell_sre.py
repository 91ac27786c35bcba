"""exec_shell as an SRE uses it: the Astronomy Shop kafka flag turned off by editing the flag file in the
ConfigMap's YAML view and applying it back, in one pipeline, scores success and strict success."""

from __future__ import annotations

import pytest

from aoi.env import make
from aoi.problems import solutions

PROBLEM = "astronomy_shop_kafka_queue_problems-mitigation-1"
FLAG_OFF = """'/"kafkaQueueProblems"/,/defaultVariant/ s/"defaultVariant": "on"/"defaultVariant": "off"/'"""


ROLE_MANIFEST = """cat <<EOF | kubectl apply -f - -n {ns}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: wide
rules: [{{apiGroups: ["*"], resources: ["*"], verbs: ["*"]}}]
EOF"""


@pytest.mark.parametrize("role", [None, "executor"])
def test_kafka_flag_fixed_through_a_yaml_edit_pipeline(role):
    env = make(PROBLEM)
    try:
        env.reset()
        ns = env.problem.namespace
        fix = (f"kubectl get cm flagd-config -n {ns} -o yaml | sed {FLAG_OFF} | kubectl apply -f - "
               f"&& kubectl rollout restart deployment/flagd -n {ns}")
        observation = env.step(solutions.shell(fix), role=role)[0]
        assert "configmap/flagd-config configured" in observation, observation
        assert "deployment.apps/flagd restarted" in observation, observation
        flags = env.step(solutions.shell(f"kubectl get cm flagd-config -n {ns} -o yaml | grep -A7 kafkaQueue"))[0]
        assert '"defaultVariant": "off"' in flags, flags
        refused = env.step(solutions.shell(ROLE_MANIFEST.format(ns=ns)), role="executor")[0]
        assert refused.startswith("Error: Forbidden by AOI's command policy (executor role): Changing roles"), refused
        info = env.step(solutions.answer(env.problem))[4]
        assert info["results"]["success"] is True and info["results"]["strict_success"] is True, info["results"]
    finally:
        env.close()
