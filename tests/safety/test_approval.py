"""The approval gate: rules first (first match wins), then auto, ask or deny; rule validation errors."""

import io

import pytest

from aoi.safety import DEFAULT_RULES, ApprovalPolicy, RuleError, parse_rules

NS = "test-hotel-reservation"
RESTART = f"kubectl rollout restart deploy/geo -n {NS}"


class Script:
    """A prompt that answers from a list and remembers the questions (fails when it runs out)."""

    def __init__(self, *answers: str):
        self.answers, self.questions = list(answers), []

    def __call__(self, question: str) -> str:
        self.questions.append(question)
        return self.answers.pop(0)


@pytest.mark.parametrize("mode, status", [("auto", "approved"), ("deny", "denied")])
def test_modes_without_a_matching_rule(mode, status):
    assert ApprovalPolicy(mode).decide(RESTART).status == status


@pytest.mark.parametrize("command", [
    "kubectl delete pv geo-pv", f"kubectl delete pvc geo-pvc -n {NS}",
    f"kubectl delete persistentvolumeclaim/x -n {NS}",
    "kubectl delete ns x", f"kubectl delete sts mongo -n {NS}", "kubectl rollout restart deploy/coredns -n kube-system",
    "kubectl -n kube-system delete pod coredns-1",
])
def test_default_rules_deny_even_in_auto_mode(command):
    decision = ApprovalPolicy("auto").decide(command)
    assert decision.status == "denied" and decision.reason.startswith("Rule "), decision


def test_default_rules_leave_ordinary_fixes_alone():
    policy = ApprovalPolicy("auto")
    for command in (RESTART, f"kubectl delete pod geo-1 -n {NS}", "kubectl patch pv geo-pv -p '{}'",
                    f"kubectl scale deploy/geo --replicas=1 -n {NS}"):
        assert policy.decide(command).status == "approved", command


def test_first_match_wins():
    rules = [{"allow": {"verbs": ["rollout restart"], "namespaces": [NS]}, "reason": "restarts are routine"},
             {"deny": {"verbs": ["rollout"]}, "reason": "no rollouts"}]
    policy = ApprovalPolicy("deny", rules)
    assert policy.decide(RESTART) == ("approved", "Rule 0 (allow): restarts are routine.")
    assert policy.decide(f"kubectl rollout undo deploy/geo -n {NS}") == ("denied", "Rule 1 (deny): no rollouts.")
    assert ApprovalPolicy("deny", rules[::-1]).decide(RESTART).status == "denied"


def test_rules_match_aliases_globs_names_and_the_default_namespace():
    rules = parse_rules("""
- deny: {resources: [deploy], names: ["mongodb-*"]}
  reason: databases are hands-off
- deny: {namespaces: [default]}
""")
    policy = ApprovalPolicy("auto", rules)
    assert policy.decide(f"kubectl rollout restart deployment.apps/mongodb-geo -n {NS}").status == "denied"
    assert policy.decide(f"kubectl rollout restart deploy/geo -n {NS}").status == "approved"
    assert policy.decide("kubectl delete pod x").reason == "Rule 1 (deny): no reason given."


def test_allow_rules_need_every_target_to_match():
    policy = ApprovalPolicy("deny", [{"allow": {"resources": ["deployments"]}}])
    assert policy.decide(f"kubectl rollout restart deploy/a -n {NS}").status == "approved"
    assert policy.decide(f"kubectl rollout restart deploy/a sts/b -n {NS}").status == "denied"


def test_ask_mode_uses_the_prompt_and_shows_the_preview():
    prompt = Script("y", "no", "YES")
    policy = ApprovalPolicy("ask", prompt=prompt)
    assert policy.decide(RESTART, preview="deployment.apps/geo restarted (server dry run)").status == "approved"
    assert policy.decide(RESTART).reason == "The operator declined the change (answered 'no')."
    assert policy.decide(RESTART).status == "approved"
    assert RESTART in prompt.questions[0] and "restarted (server dry run)" in prompt.questions[0]
    assert "Dry-run preview" not in prompt.questions[1]


def test_ask_mode_rules_still_come_first():
    prompt = Script()
    assert ApprovalPolicy("ask", prompt=prompt).decide("kubectl delete pv x").status == "denied"
    assert prompt.questions == []


def test_ask_mode_without_a_terminal_denies():
    decision = ApprovalPolicy("ask", stdin=io.StringIO("y\n")).decide(RESTART)
    assert decision.status == "denied" and "not a TTY" in decision.reason


def test_ask_mode_treats_end_of_input_as_no():
    def closed(question):
        raise EOFError

    assert ApprovalPolicy("ask", prompt=closed).decide(RESTART).status == "denied"


def test_unreadable_commands_are_denied():
    decision = ApprovalPolicy("auto").decide("kubectl delete pod x; rm -rf /")
    assert decision.status == "denied" and "could not be read" in decision.reason


def test_default_rules_are_rules():
    assert [rule.effect for rule in DEFAULT_RULES] == ["deny"] * 4
    assert ApprovalPolicy().rules == DEFAULT_RULES and ApprovalPolicy(rules=[]).rules == []


@pytest.mark.parametrize("rules, message", [
    ([{"deny": {"verbs": "delete"}}], "rule 0: 'deny.verbs' must be a list of non-empty strings"),
    ([{}, {"deny": {"colour": ["red"]}}], "rule 0: needs exactly one of 'allow' or 'deny'"),
    ([{"deny": {}}, {"deny": {"colour": ["red"]}}], "rule 1: 'deny' must map some of verbs, resources"),
    ([{"allow": {}, "deny": {}}], "rule 0: needs exactly one of 'allow' or 'deny'"),
    ([{"deny": {"verbs": [""]}}], "rule 0: 'deny.verbs' must be a list of non-empty strings"),
    ([{"deny": {}, "reason": 3}], "rule 0: 'reason' must be a string"),
    (["deny everything"], "rule 0: expected a mapping"),
    ("deny: {}", "rules must be a list of mappings"),
])
def test_rule_errors_name_the_rule_and_field(rules, message):
    with pytest.raises(RuleError, match=message.replace("(", r"\(")):
        parse_rules(rules)


def test_unknown_mode_is_an_error():
    with pytest.raises(ValueError, match="use one of auto, ask, deny"):
        ApprovalPolicy("maybe")
