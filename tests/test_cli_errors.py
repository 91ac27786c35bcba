"""Exit codes and error lines CI can trust (issue 27, item 4 and the errors of item 5): a model that cannot be used
stops `aoi run` and `aoi eval` before anything starts (no run folder, no "resume"), `--approval ask` needs a
terminal, episodes that could not run fail the eval, and every error - option mistakes included - is one line on
stderr, so `aoi run ... > out.txt` still shows it."""

from __future__ import annotations

import json
import os
import pty
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from aoi.models.base import ModelError
from aoi.models.check import check_model
from aoi.models.registry import FORMS
from aoi.safety.approval import NO_TERMINAL

PROBLEM = "noop_detection_hotel_reservation-1"
NO_KEY = "error: no API key for https://api.openai.com/v1: set AOI_API_KEY or OPENAI_API_KEY, or pass api_key=...\n"
KEYS = ("AOI_", "OPENAI_", "OPENROUTER_")


def aoi(*args: str, cwd: Path, env: dict | None = None, stdin=subprocess.DEVNULL,
        timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `python -m aoi ARGS` with no API key in the environment; stdout and stderr apart."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(KEYS)} | {"COLUMNS": "80"} | (env or {})
    return subprocess.run([sys.executable, "-m", "aoi", *args], cwd=cwd, env=environ, stdin=stdin,
                          capture_output=True, text=True, timeout=timeout, check=False)


def free_port() -> int:
    """Return a loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def refused(port: int) -> str:
    return (f"error: no model server answers at http://127.0.0.1:{port}/v1 (Connection refused); start it (e.g. "
            "`ollama serve`, vLLM, llama.cpp) or point the spec or model.base_url at a running one\n")


def test_eval_without_an_api_key_stops_before_the_run_folder(tmp_path):
    done = aoi("eval", "--problems", PROBLEM, "--model", "openai:gpt-4o", "--out", "run", cwd=tmp_path)
    assert (done.returncode, done.stderr, done.stdout) == (2, NO_KEY, "")
    assert not (tmp_path / "run").exists() and "resume" not in done.stdout


def test_run_without_an_api_key_says_so_on_stderr_in_one_line(tmp_path):
    done = aoi("run", PROBLEM, "--model", "openai:gpt-4o", cwd=tmp_path)  # 80 columns: the line is not wrapped
    assert (done.returncode, done.stderr, done.stdout) == (2, NO_KEY, "")
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("command", ["eval", "run"])
def test_a_server_on_this_machine_that_does_not_listen_is_refused_at_start(tmp_path, command):
    port = free_port()
    spec = f"vllm:qwen@http://127.0.0.1:{port}"
    args = ["--problems", PROBLEM, "--out", "run"] if command == "eval" else [PROBLEM]
    done = aoi(command, *args, "--model", spec, cwd=tmp_path)
    assert (done.returncode, done.stderr, done.stdout) == (2, refused(port), "")
    assert not (tmp_path / "run").exists()


def test_eval_with_a_spec_of_no_known_form_is_refused_at_start(tmp_path):
    done = aoi("eval", "--problems", PROBLEM, "--model", "gpt4o", "--out", "run", cwd=tmp_path)
    assert done.returncode == 2 and not (tmp_path / "run").exists()
    assert done.stderr == (f"error: invalid configuration: model.spec = 'gpt4o' (from overrides): unknown model kind "
                           f"'gpt4o'; use one of {', '.join(FORMS)} (a bare model name needs its provider, e.g. "
                           "openai:gpt4o)\n")


def test_check_model_connects_to_a_listening_server_and_contacts_no_other_machine(tmp_path):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        check_model(f"vllm:qwen@http://127.0.0.1:{server.getsockname()[1]}")
        check_model(f"local:tiny+server=http://127.0.0.1:{server.getsockname()[1]}/v1")
    check_model("vllm:qwen@http://10.255.255.1:8000")  # elsewhere: not contacted (a connect would fail here)
    port = free_port()
    with pytest.raises(ModelError, match=r"^no model server answers at http://127\.0\.0\.1:\d+/v1 \(Connection "
                       r"refused\); start it \(`aoi serve-model`\) or fix \+server= in the spec$"):
        check_model(f"local:tiny+server=http://127.0.0.1:{port}/v1")


def test_check_model_reads_local_files_without_loading_them(tmp_path):
    with pytest.raises(ModelError) as missing:
        check_model(f"local:{tmp_path / 'none'}")
    assert str(missing.value) == (f"no local model at {tmp_path / 'none'}: give 'tiny', 'smollm2', a directory with "
                                  "config.json (save_pretrained) or a .gguf file")
    with pytest.raises(ModelError) as adapter:
        check_model(f"local:tiny+adapter={tmp_path}")
    assert str(adapter.value) == (f"{tmp_path} is not a PEFT adapter directory (no adapter_config.json); train one "
                                  "with `aoi train sft --out DIR` or save one with peft's model.save_pretrained(DIR)")
    with pytest.raises(ValueError, match=r"^unknown part 'colour=red' in local:tiny\+colour=red; use local:"):
        check_model("local:tiny+colour=red")
    check_model("local:tiny")  # nothing loaded: a base that exists passes


@pytest.mark.parametrize("command", ["run", "eval"])
def test_approval_ask_without_a_terminal_is_refused_at_start(tmp_path, command):
    args = [PROBLEM] if command == "run" else ["--problems", PROBLEM, "--out", "run"]
    done = aoi(command, *args, "--model", "expert", "--approval", "ask", cwd=tmp_path)  # stdin: /dev/null
    assert (done.returncode, done.stderr, done.stdout) == (2, f"error: {NO_TERMINAL}\n", "")
    assert not (tmp_path / "run").exists() and not (tmp_path / "runs").exists()


def test_eval_approval_ask_needs_thread_workers_to_reach_the_terminal(tmp_path):
    terminal, other_end = pty.openpty()  # a real terminal on stdin: ask mode passes that check
    try:
        done = aoi("eval", "--problems", PROBLEM, "--model", "expert", "--approval", "ask", "--out", "run",
                   cwd=tmp_path, stdin=other_end)
    finally:
        os.close(terminal)
        os.close(other_end)
    assert done.returncode == 2 and not (tmp_path / "run").exists()
    assert done.stderr == ("error: approval mode ask asks on this terminal, which process workers cannot reach; "
                           "pass --executor thread, or --approval auto or deny\n")


def test_eval_exits_1_when_episodes_could_not_run(tmp_path):
    broken = tmp_path / "broken"  # passes the start check (config.json is there), fails when a worker loads it
    broken.mkdir()
    (broken / "config.json").write_text("{}")
    done = aoi("eval", "--problems", PROBLEM, "--model", f"local:{broken}", "--executor", "thread", "--out", "run",
               cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.startswith("error: 1 episode(s) could not run (first: ValueError: ")
    assert done.stderr.endswith("); fix that and run the same command again to run them\n")
    assert done.stderr.count("\n") == 1


def test_run_writes_the_error_of_an_episode_that_ended_early_to_stderr(tmp_path):
    decide = {"phase": "survey", "next": "probe", "instruction": "list the pods", "context": ""}
    script = tmp_path / "short.json"
    script.write_text(json.dumps([{"role": "observer", "text": json.dumps(decide)}]))  # the probe has no answer
    with open(tmp_path / "out.txt", "w") as out:
        done = subprocess.run([sys.executable, "-m", "aoi", "run", PROBLEM, "--model", f"replay:{script}"],
                              cwd=tmp_path, stdout=out, stderr=subprocess.PIPE, text=True, timeout=300,
                              stdin=subprocess.DEVNULL, env=os.environ | {"COLUMNS": "80"})
    assert done.returncode == 1
    assert done.stderr.startswith("error: the episode ended early: ModelError: the observer's model failed 3 times")
    assert done.stderr.count("\n") == 1
    kept = (tmp_path / "out.txt").read_text()  # > out.txt keeps the progress and the verdict; the error stays visible
    assert "trajectory" in kept and "ended early" not in kept


@pytest.mark.parametrize("args, line", [
    (["run", "--foo"], "error: No such option: --foo; `aoi run --help` lists the options"),
    (["run"], "error: Missing argument 'problem_id'; `aoi run --help` lists the options"),
    (["eval"], "error: Missing option '--out'; `aoi eval --help` lists the options"),
    (["--bogus"], "error: No such option: --bogus; `aoi --help` lists the options"),
    (["problems", "list", "--task-type", "x"], "error: Invalid value for --task-type: unknown task type 'x'; choose "
     "from detection, localization, analysis, mitigation; `aoi problems list --help` lists the options"),
    (["twin", "up", "--kubeconfig-dir", "k", "--port", "99999"], "error: Invalid value for '--port': Input should "
     "be less than or equal to 65535; `aoi twin up --help` lists the options"),
    (["report", "/nonexistent"], "error: /nonexistent has no results.jsonl; pass a directory written by `aoi eval "
     "--out DIR`"),
])
def test_every_error_is_one_line_on_stderr(tmp_path, args, line):
    done = aoi(*args, cwd=tmp_path, timeout=60)
    assert (done.returncode, done.stderr, done.stdout) == (2, line + "\n", "")


def test_a_bare_group_still_prints_its_help(tmp_path):
    done = aoi("problems", cwd=tmp_path, timeout=60)
    assert "Usage: aoi problems" in done.stdout and "error:" not in done.stderr
