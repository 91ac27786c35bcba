"""Allow-listed text filters: the options each may take, and checks of awk, sed and jq programs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aoi.safety import sedscript
from aoi.safety.shellwords import Refused


@dataclass(frozen=True)
class Filter:
    """What one filter may be given: options with and without values, and how many non-file operands."""

    flags: str = ""                # short options without a value
    valued: str = ""               # short options that take a value
    long: frozenset = frozenset()  # long options without a value
    long_valued: dict = field(default_factory=dict)  # long option -> how many values it takes
    operands: int = 0              # patterns, programs or sets; never file names (files are local reads)
    script_flags: str = ""         # options whose value is the program (then no program operand is allowed)


def _long(text: str) -> frozenset:
    return frozenset(text.split())


GREP = Filter("EFGPivwxyclLnhHoqsaz0123456789", "eABCm",
              _long("extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case invert-match "
                    "word-regexp line-regexp count only-matching quiet silent no-messages line-number with-filename "
                    "no-filename files-with-matches files-without-match text null-data"),
              {"regexp": 1, "after-context": 1, "before-context": 1, "context": 1, "max-count": 1, "color": 1,
               "colour": 1}, operands=1, script_flags="e")
HEAD = Filter("qvz0123456789", "nc", _long("quiet silent verbose zero-terminated"), {"lines": 1, "bytes": 1})
# Filters that AOI passes through; anything else after a pipe is refused. No option that names a file is listed.
FILTERS = {
    "grep": GREP, "egrep": GREP, "fgrep": GREP, "head": HEAD, "tail": HEAD,
    "wc": Filter("lwcmL", long=_long("lines words bytes chars max-line-length")),
    "sort": Filter("bdfgiMhnRrVsuzc", "ktS", _long("ignore-leading-blanks dictionary-order ignore-case reverse "
                                                 "general-numeric-sort human-numeric-sort numeric-sort month-sort "
                                                 "version-sort random-sort stable unique zero-terminated check"),
                   {"key": 1, "field-separator": 1, "buffer-size": 1, "sort": 1}),
    "uniq": Filter("cdDiuz", "fsw", _long("count repeated unique ignore-case zero-terminated"),
                   {"skip-fields": 1, "skip-chars": 1, "check-chars": 1}),
    "cut": Filter("sz", "bcdf", _long("only-delimited complement zero-terminated"),
                  {"bytes": 1, "characters": 1, "delimiter": 1, "fields": 1, "output-delimiter": 1}),
    "tr": Filter("cCdst", long=_long("complement delete squeeze-repeats truncate-set1"), operands=2),
    "awk": Filter(valued="Fv", long_valued={"field-separator": 1, "assign": 1}, operands=1),
    "sed": Filter("nErsuz", "el", _long("quiet silent regexp-extended separate unbuffered null-data posix sandbox"),
                  {"expression": 1, "line-length": 1}, operands=1, script_flags="e"),
    "jq": Filter("rjcsnaSCMeR", long=_long("raw-output join-output compact-output slurp null-input ascii-output "
                                          "sort-keys color-output monochrome-output tab exit-status raw-input seq"),
                 long_valued={"indent": 1, "arg": 2, "argjson": 2}, operands=1),
}
INSTEAD = "keep to the filter's plain options and read only its input from the pipe"
PROGRAM_LIMIT = 4000  # characters of an awk, sed or jq program; longer ones are not one-line filters

# Checked twice: with "strings" blanked, and with strings and /regex/ literals blanked (awk literals cannot run
# code, so "kube-system" or " -> " stay allowed); a construct visible in either reading is refused.
AWK_FORBIDDEN = re.compile(r"\bsystem\s*\(|\bgetline\b|\bENVIRON\b|\bARGV\b|\bARGC\b|\bPROCINFO\b|@|\|&"
                           r"|\bprintf?\b[^;}\n]*(?:>|(?<!\|)\|(?!\|))")
AWK_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
AWK_OPERAND_END = re.compile(r"(?:[A-Za-z_][A-Za-z_0-9]*|[0-9.]+|[)\]$])\s*$")  # before this, `/` is division
AWK_KEYWORDS = {"print", "printf", "return", "in", "case", "do", "else", "getline"}
# jq strings can interpolate code, so they are not blanked; `.env` fields and `env:` object keys stay allowed.
JQ_FORBIDDEN = re.compile(r"\$ENV\b|(?<![\w.$\"])env\b(?!\s*:)|\binput_filename\b|\$__loc__|\b(?:import|include)\b")


def _options(name: str, argv: list[str]) -> tuple[list[str], list[str]]:
    """Walk a filter's argv; return (programs given by option, operands) or raise Refused."""
    spec, scripts, operands, i = FILTERS[name], [], [], 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--" or arg == "-" or not arg.startswith("-"):
            operands.extend(argv[i + 1:] if arg == "--" else [arg])
            i = len(argv) if arg == "--" else i + 1
            continue
        used, option, value = (_long_option if arg.startswith("--") else _short)(name, spec, arg, argv, i)
        if option and (option in spec.script_flags if len(option) == 1 else option in ("regexp", "expression")):
            scripts.append(value)
        i += used
    return scripts, operands


def _long_option(name: str, spec: Filter, arg: str, argv: list[str], i: int) -> tuple[int, str, str | None]:
    """Check one long option; return (tokens used, option, its first value)."""
    key, eq, value = arg[2:].partition("=")
    if key in spec.long and not eq:
        return 1, key, None
    if key not in spec.long_valued:
        raise Refused(f"`{name} {arg}` is refused (an option that is not allow-listed may read or write files) — "
                      f"{INSTEAD}.")
    take = spec.long_valued[key] - (1 if eq else 0)
    values = ([value] if eq else []) + argv[i + 1:i + 1 + take]
    if len(values) < spec.long_valued[key]:
        raise Refused(f"`{name} {arg}` is missing its value — give it one.")
    return 1 + take, key, values[0]


def _short(name: str, spec: Filter, arg: str, argv: list[str], i: int) -> tuple[int, str, str | None]:
    """Check a cluster of short options such as -rc or -n5; return (tokens used, option, its value)."""
    for j, letter in enumerate(arg[1:], 1):
        if letter in spec.valued:
            if j + 1 < len(arg):
                return 1, letter, arg[j + 1:]
            if i + 1 >= len(argv):
                raise Refused(f"`{name} -{letter}` is missing its value — give it one.")
            return 2, letter, argv[i + 1]
        if letter not in spec.flags:
            raise Refused(f"`{name} -{letter}` is refused (an option that is not allow-listed may read or write "
                          f"files or run commands) — {INSTEAD}.")
    return 1, "", None


def check(argv: list[str]) -> None:
    """Raise Refused unless argv is an allow-listed filter reading only its standard input.

    Example:
        >>> check(["grep", "-i", "error"])
        >>> check(["sed", "-i", "s/a/b/"])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        aoi.safety.shellwords.Refused: `sed -i` is refused (an option that is not allow-listed may read or write ...
    """
    name = argv[0]
    if name not in FILTERS:
        raise Refused(f"`{name}` cannot be piped into here — pipe into one of {', '.join(FILTERS)} instead.")
    scripts, operands = _options(name, argv)
    allowed = 0 if scripts and FILTERS[name].script_flags else FILTERS[name].operands
    if len(operands) > allowed:
        raise Refused(f"`{name}` was given {operands[allowed]!r} as a file or extra operand, which would read local "
                      f"files — {INSTEAD}.")
    programs = scripts + operands[:1] if name in ("awk", "sed", "jq") else []
    for program in programs:
        if len(program) > PROGRAM_LIMIT:
            raise Refused(f"A {name} program of {len(program)} characters is refused (at most {PROGRAM_LIMIT}) — "
                          "filter with a shorter program.")
        PROGRAM_CHECKS[name](program)


def _awk_literals_blanked(program: str) -> str:
    """Blank awk's string and regex literals, telling a regex from division by what precedes the slash."""
    out, i = [], 0
    while i < len(program):
        before = "".join(out[-64:])  # enough to see the preceding token, and linear in the program's length
        word = re.search(r"[A-Za-z_]+\s*$", before)
        regex = program[i] == "/" and (not AWK_OPERAND_END.search(before) or (word and word.group().strip() in
                                                                                AWK_KEYWORDS))
        if program[i] == '"' or regex:
            j = i + 1
            while j < len(program) and program[j] != program[i]:
                j += 2 if program[j] == "\\" else 1
            out.append(program[i] * 2)
            i = j + 1
            continue
        out.append(program[i])
        i += 1
    return "".join(out)


def _awk(program: str) -> None:
    """Refuse awk programs that run commands, read files or the environment, or redirect output."""
    readings = (AWK_STRING.sub('""', program), _awk_literals_blanked(program))
    found = next(filter(None, (AWK_FORBIDDEN.search(reading) for reading in readings)), None)
    if found:
        raise Refused(f"This awk program uses {found.group(0).strip()!r}, which can run commands, read files or "
                      f"environment variables, or write files — use a plain pattern {{ print }} program instead.")


def _jq(program: str) -> None:
    """Refuse jq programs that read the environment or load modules."""
    found = JQ_FORBIDDEN.search(program)
    if found:
        raise Refused(f"This jq filter uses {found.group(0)!r}, which reads environment variables or files — select "
                      "fields of the input instead.")


PROGRAM_CHECKS = {"awk": _awk, "jq": _jq, "sed": sedscript.check}
