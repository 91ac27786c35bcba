"""The shared protocols: roles and statuses read as their plain strings, tools render their prompt lines."""

from __future__ import annotations

import json

from aoi.protocols import CREDENTIAL_ROLES, ENV_ROLES, MODEL_ROLES, SHELL_ROLES, Role, Status, Tool, ToolResult
from aoi.trajectory import Step, Trajectory


def test_roles_and_statuses_serialise_as_their_values():
    text = json.dumps({"role": Role.PROBE, "status": Status.FORMAT_ERROR})
    assert text == '{"role": "probe", "status": "format_error"}'
    assert Role.PROBE == "probe" and f"{Role.EXECUTOR}" == "executor" and {"probe": 1}[Role.PROBE] == 1


def test_role_subsets_hold_what_their_users_accept():
    assert set(MODEL_ROLES) == {"observer", "probe", "executor", "compressor"}
    assert set(SHELL_ROLES) == {"probe", "executor"} and "admin" in CREDENTIAL_ROLES and None in ENV_ROLES


def test_old_trajectories_load_with_their_status_strings():
    old = Trajectory("p", "detection", steps=[Step("probe", "x", status="truncated"), Step("probe", "y")]).to_dict()
    old["steps"][1]["status"] = "repeated"
    loaded = Trajectory.from_dict(json.loads(json.dumps(old)))
    assert loaded.steps[0].status == "truncated" and loaded.steps[1].status is Status.REPEATED
    assert loaded.counts() == {"truncated": 1, "repeated": 1}


def test_a_tool_renders_its_declared_signature_and_description():
    tool = Tool(name="read_file", parameters={"path": '"..."', "op": '"summary|page"'}, description="reads\na CSV",
                more=True)
    assert tool.line() == '- read_file {"path": "...", "op": "summary|page", ...}: reads\n  a CSV'
    assert Tool(name="finish", parameters={"report": '"..."'}).line() == '- finish {"report": "..."}'
    assert ToolResult("out").status is Status.OK
