"""The simulated shell's resource limits bound what generators and command substitutions make, not only steps.

Memory is asserted through sizes: what a generator printed and what a substitution captured stay under their
limits, and a word list past its limit stops the script before the loop starts.
"""

from __future__ import annotations

import pytest

from aoi.env.shell import exec_shell
from aoi.shellsim.context import ExecContext, ExecResult
from aoi.shellsim.limits import GENERATED_LIMIT, SUBST_LIMIT, WORD_LIMIT
from aoi.shellsim.registry import default_registry
from aoi.shellsim.shell import bash_program, sh_program

RUNAWAY_FOR = "for i in $(seq 1 50000000); do :; done"
ONE_MIB = f"printf '%0{GENERATED_LIMIT}d' 0 > /tmp/big"  # a file of exactly GENERATED_LIMIT bytes


def sh(script: str, bash: bool = False) -> ExecResult:
    """Run a script with sh (or bash) in a fresh empty container."""
    ctx = ExecContext({"metadata": {"name": "p"}}, "c", {}, {"/tmp/": b""}, [], 0.0, programs=default_registry())
    return (bash_program if bash else sh_program)(["bash" if bash else "sh", "-c", script], ctx)


def test_the_runaway_for_of_the_reaudit_stops_at_the_word_limit():
    observation = exec_shell(RUNAWAY_FOR, None, 0.0).observation
    assert observation.startswith("[ERROR] Docker command execution failed: ")
    assert f"sh: 1: stopped: an expansion made more than {WORD_LIMIT} words: Argument list too long" in observation
    assert "seq: memory exhausted" in observation  # the generator said first why its list is short
    result = sh(RUNAWAY_FOR)
    assert result.exit_code == 124 and result.stdout == b""


def test_seq_prints_at_most_its_limit_and_says_so():
    result = sh("seq 1 50000000")
    assert result.exit_code == 1 and len(result.stdout) < GENERATED_LIMIT
    assert result.stdout.endswith(b"\n165668\n")  # whole numbers only, the last one ended
    assert result.stderr.startswith(b"seq: memory exhausted (the simulated shell's generators make at most 1 MiB")
    assert sh("seq 1 50000000 | head -3").stdout == b"1\n2\n3\n"
    assert sh("seq 2 4 | paste -sd+ 2>/dev/null || seq -s, 3").stdout == b"1,2,3\n"


@pytest.mark.parametrize("script, expected", [
    ("seq 3", b"1\n2\n3\n"), ("seq -s, 2 4", b"2,3,4\n"), ("seq -w 8 10", b"08\n09\n10\n"),
    ("seq -w 1 2 10", b"01\n03\n05\n07\n09\n"), ("seq 0.5 0.5 2", b"0.5\n1\n1.5\n2\n"), ("seq 3 1", b""),
    (f"echo $(seq 2 {WORD_LIMIT}) | wc -w", f"{WORD_LIMIT - 1}\n".encode()),  # with echo: WORD_LIMIT words
])
def test_what_fits_the_limits_is_unchanged(script, expected):
    result = sh(script)
    assert (result.stdout, result.stderr, result.exit_code) == (expected, b"", 0)


@pytest.mark.parametrize("script", [
    f"set -- $(seq 1 {WORD_LIMIT + 1})",
    f"x=$(seq 1 {WORD_LIMIT + 1}); for w in $x; do :; done",
    f"echo $(seq 1 {WORD_LIMIT // 2 + 1}) $(seq 1 {WORD_LIMIT // 2})",  # two words together pass it
])
def test_more_words_than_the_limit_stop_the_script(script):
    result = sh(script)
    assert result.exit_code == 124 and result.stdout == b""
    assert f"stopped: an expansion made more than {WORD_LIMIT} words".encode() in result.stderr


@pytest.mark.parametrize("script", [
    f"{ONE_MIB}; x=$(cat /tmp/big /tmp/big); echo never",
    f"{ONE_MIB}; y=$(head -c 100000 /tmp/big); x=$(while :; do echo $y; done); echo never",
    f"{ONE_MIB}; echo $(echo $(cat /tmp/big /tmp/big)); echo never",
])
def test_a_command_substitution_captures_at_most_its_limit(script):
    result = sh(script)
    assert result.exit_code == 124 and b"never" not in result.stdout
    assert result.stderr == (b"sh: 1: stopped: a command substitution's output grew past 1 MiB: Cannot allocate "
                             b"memory (the simulated shell's limit: narrow what the command prints)\n")
    assert SUBST_LIMIT == GENERATED_LIMIT  # so the one-MiB file fits one capture and two do not


def test_a_substitution_at_the_limit_is_kept_whole():
    assert sh(f"{ONE_MIB}; x=$(cat /tmp/big); echo ${{#x}}").stdout == f"{SUBST_LIMIT}\n".encode()


def test_a_substitution_is_not_charged_with_what_the_script_printed_before_it():
    result = sh(f"{ONE_MIB}; cat /tmp/big /tmp/big; x=$(while false; do :; done; echo in); echo $x")
    assert (len(result.stdout), result.stdout[-3:], result.exit_code) == (2 * GENERATED_LIMIT + 3, b"in\n", 0)


@pytest.mark.parametrize("script, program, status", [
    (f"printf '%0{GENERATED_LIMIT + 1}d' 7", "printf", 1), (f"printf '%.{GENERATED_LIMIT + 1}f' 1", "printf", 1),
    (f"awk 'BEGIN {{ printf \"%{GENERATED_LIMIT + 1}s\", \"x\" }}'", "awk", 2),
])
def test_a_format_wider_than_the_limit_is_refused(script, program, status):
    result = sh(script)
    assert (result.stdout, result.exit_code) == (b"", status)
    assert result.stderr.startswith(f"{program}: memory exhausted (the simulated shell's generators".encode())


@pytest.mark.parametrize("bash, message, status", [(False, b"sh: 1: x: unset\n", 2),
                                                   (True, b"bash: line 1: x: unset\n", 1)])
def test_an_expansion_error_in_a_for_list_exits_the_shell_with_its_message(bash, message, status):
    result = sh("for i in ${x:?unset}; do :; done; echo after", bash=bash)
    assert (result.stdout, result.stderr, result.exit_code) == (b"", message, status)
