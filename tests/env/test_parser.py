"""The action parser: AIOpsLab's ResponseParser rules, edge cases included (reference/aiopslab.md 1.4)."""

from __future__ import annotations

import doctest

import pytest

from aoi.env import parser
from aoi.env.parser import FORMAT_FAILURE, PREFIX, ParsedAction, ParseError, parse

FENCE = "```"


def block(call: str, before: str = "", after: str = "") -> str:
    """Wrap a call in one well-formed fenced block."""
    return f"{before}{FENCE}\n{call}\n{FENCE}{after}"


def test_plain_block():
    assert parse(block('exec_shell("kubectl get pods")')) == ParsedAction("exec_shell", ["kubectl get pods"], {}, [])


@pytest.mark.parametrize("reply", [
    f"{FENCE}python\nexec_shell(\"ls\")\n{FENCE}",              # a language tag
    f"{FENCE}bash\nsubmit()\n{FENCE}",
    f"  {FENCE}\n  exec_shell(\"ls\")\n  {FENCE}",               # an indented fence
    block("exec_shell(\"ls\")") + "\n" + block("submit()"),      # two blocks
    "exec_shell(\"ls\")",                                        # no block at all
    f"{FENCE}exec_shell(\"ls\"){FENCE}",                         # everything on one line
])
def test_format_failures(reply):
    with pytest.raises(ParseError) as err:
        parse(reply)
    assert str(err.value) == FORMAT_FAILURE
    assert str(err.value).startswith("Error parsing response: Format validation failure.")


def test_text_outside_the_block_is_context():
    action = parse(block("submit()", before="Thought: all good.\n", after="\nDone."))
    assert action.api == "submit" and action.args == [] and action.context == ["Thought: all good.", "Done."]


def test_fence_after_text_on_the_same_line():
    assert parse(f"Action: {FENCE}\nsubmit()\n{FENCE}").api == "submit"


def test_command_keyword_and_single_quotes():
    assert parse(block("exec_shell(command=\"kubectl get ns\")")).args == ["kubectl get ns"]
    assert parse(block("exec_shell('kubectl get ns')")).args == ["kubectl get ns"]
    assert parse(block("exec_shell(command='ls -l')")).args == ["ls -l"]


def test_escaped_quotes_are_unescaped():
    reply = block('exec_shell("kubectl get pods -o jsonpath=\\"{.items[0].metadata.name}\\" -n x")')
    assert parse(reply).args == ['kubectl get pods -o jsonpath="{.items[0].metadata.name}" -n x']
    assert parse(block("exec_shell('echo \\'hi\\' there')")).args == ["echo 'hi' there"]


def test_shell_quirks_kept_for_parity():
    # Every outer quote character is stripped, so a command ending in an escaped quote loses it.
    assert parse(block('exec_shell("echo \\"hi\\"")')).args == ['echo "hi\\']
    # Every "command=" is removed once the argument starts with it.
    assert parse(block('exec_shell(command="echo command=1")')).args == ["echo 1"]
    # Double quotes inside single quotes stay as they are.
    assert parse(block("exec_shell('grep \"x\" f')")).args == ['grep "x" f']


@pytest.mark.parametrize("call", ['exec_shell("ls", timeout=60)', "exec_shell(ls)", 'exec_shell("ls", 10)',
                                  "exec_shell(cmd)"])
def test_shell_needs_one_quoted_string(call):
    with pytest.raises(ParseError, match="^Error parsing response: exec_shell commands must be quoted strings"):
        parse(block(call))


def test_empty_shell_call():
    assert parse(block("exec_shell()")) == ParsedAction("exec_shell", [], {}, [])


def test_submit_arguments():
    assert parse(block('submit("Yes")')).args == ["Yes"]
    assert parse(block('submit(["geo", "mongodb-geo"])')).args == [["geo", "mongodb-geo"]]
    assert parse(block('submit([])')).args == [[]]
    analysis = '{"system_level": "Application", "fault_type": "Misconfiguration"}'
    assert parse(block(f"submit({analysis})")).args == [{"system_level": "Application",
                                                         "fault_type": "Misconfiguration"}]
    assert parse(block('submit(("a", "b"))')).args == [["a", "b"]]
    assert parse(block("submit(True, None, 3)")).args == [True, None, 3]


def test_kwargs_are_parsed_and_left_to_the_caller():
    # AIOpsLab stores args[0] or the args list as the solution: submit(has_anomaly="Yes") stores [] (scoring).
    action = parse(block('submit(has_anomaly="Yes")'))
    assert action.args == [] and action.kwargs == {"has_anomaly": "Yes"}
    assert parse(block('get_logs(namespace="test-social-network", service="user-service")')).kwargs == {
        "namespace": "test-social-network", "service": "user-service"}
    assert parse(block('get_metrics("astronomy-shop", 10)')).args == ["astronomy-shop", 10]


@pytest.mark.parametrize("call", ["submit(-1)", "submit(foo)", "submit([x])", "submit(1 + 2)", "submit([(1, 2)])",
                                  "submit(\"a\" \"b\" +)"])
def test_non_literal_arguments_fail(call):
    with pytest.raises(ParseError, match="^Error parsing response: the arguments are not plain literals"):
        parse(block(call))


def test_no_call_found():
    with pytest.raises(ParseError, match="^Error parsing response: no API call found"):
        parse(block("submit"))


def test_unknown_api_is_left_to_the_caller():
    action = parse(block('restart_everything("now")'))
    assert action.api == "restart_everything" and action.args == ["now"]
    assert parse(block("  get_logs ('ns', 'svc')")).api == "get_logs"


def test_multiline_call():
    reply = block('submit({\n  "system_level": "Virtualization",\n  "fault_type": "Operation Error"\n})')
    assert parse(reply).args[0]["fault_type"] == "Operation Error"


def test_errors_keep_the_prefix():
    assert FORMAT_FAILURE.startswith(PREFIX) and PREFIX == "Error parsing response: "


def test_doctests():
    assert doctest.testmod(parser).failed == 0
