"""Config files read at start: parse them as the real program (or its image's entrypoint) does, or refuse to start.

A refusal is the lines printed before exiting and the exit code; None means the file is accepted. Only parse-level
refusals are modelled (unparsable text, a wrong top-level shape, an unknown redis directive or a wrong argument
count); option values are not validated. Message formats are the programs' own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

from aoi.twin.behaviour.programs.mongo_values import UNDEFINED, tojson
from aoi.twin.behaviour.redis_directives import FREE_ARITY, STANDARD


@dataclass(frozen=True)
class Refusal:
    """What a program prints when it refuses its config file, and the code it exits with."""

    lines: list[str]
    exit_code: int


INI_LINE = re.compile(r"^\s*[^=:]+\s*=")  # the mongo image's test for the pre-2.6 "key = value" format
JS_YAML = {"mapping values are not allowed here": "bad indentation of a mapping entry",
           "expected <block end>": "bad indentation of a mapping entry",
           "expected ',' or ']'": "missed comma between flow collection entries",
           "expected ',' or '}'": "missed comma between flow collection entries",
           "special characters are not allowed": "the stream contains non-printable characters"}
YAML_CPP = {"mapping values are not allowed here": "illegal map value", "expected <block end>": "end of map not found",
            "expected ',' or ']'": "end of sequence flow not found", "expected ',' or '}'": "end of map flow not found",
            "special characters are not allowed": "unknown token"}


def _yaml_problem(exc: yaml.YAMLError, table: dict[str, str]) -> tuple[str, int, int]:
    """Return (message, line, column) of a PyYAML error, the message in the other parser's words where known."""
    problem = getattr(exc, "problem", None) or str(exc)
    mark = getattr(exc, "problem_mark", None)
    said = next((said for key, said in table.items() if key in problem), problem.split(",")[0].strip())
    return said, (mark.line if mark else 0), (mark.column if mark else 0)


def mongo_start(command: list[str], text: str | None) -> Refusal | None:
    """Return how a mongo container refuses its --config file: through the image's entrypoint, or mongod directly.

    Example:
        >>> mongo_start(["mongod"], "- net").lines[0], mongo_start([], "- net").exit_code
        ('No map found at top level of YAML config', 1)
    """
    if text is None:
        return _bad_options("Error opening config file: No such file or directory")
    through_entrypoint = not command or command[0].rsplit("/", 1)[-1] == "docker-entrypoint.sh"
    return (through_entrypoint and mongo_entrypoint(text)) or mongod(text)


def mongo_entrypoint(text: str) -> Refusal | None:
    """Return how the mongo image's entrypoint refuses a --config file (it loads it with js-yaml first), or None.

    Example:
        >>> mongo_entrypoint("- net").lines[:2]
        ['error: unexpected "js-yaml.js" output while parsing config:', '[ "net" ]']
        >>> mongo_entrypoint("net:\\n  port: 27017\\n") is None
        True
    """
    first = next((line for line in text.splitlines() if not re.match(r"^\s*(#|$)", line)), "")
    if INI_LINE.match(first):
        return None  # the entrypoint warns and leaves an INI-style file to mongod
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        said, line, col = _yaml_problem(exc, JS_YAML)
        source = text.splitlines()[line] if line < len(text.splitlines()) else ""
        output = [f"uncaught exception: YAMLException: {said} at line {line + 1}, column {col + 1}:",
                  f"    {source}", "    " + " " * col + "^", "exiting with code -4"]
        return Refusal(['error: unexpected "js-yaml.js" output while parsing config:', *output], 1)
    if isinstance(doc, dict):
        return None
    printed = tojson(UNDEFINED if text.strip() == "" else doc)  # js-yaml loads an empty file as undefined
    return Refusal(['error: unexpected "js-yaml.js" output while parsing config:', *printed.splitlines()], 1)


def mongod(text: str) -> Refusal | None:
    """Return how mongod 4.4 refuses a --config file (YAML, or INI when the text is one scalar), or None.

    Example:
        >>> mongod("net: [a\\n").lines[0]
        'Error parsing YAML config file: yaml-cpp: error at line 2, column 1: end of sequence flow not found'
    """
    if "\x00" in text:
        return _bad_options("Config file has null bytes, ensure the file is saved as UTF-8 and not UTF-16.")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        said, line, col = _yaml_problem(exc, YAML_CPP)
        return _bad_options(f"Error parsing YAML config file: yaml-cpp: error at line {line + 1}, column {col + 1}: "
                            f"{said}")
    if doc is None or isinstance(doc, dict):
        return None
    if isinstance(doc, list):
        return _bad_options("No map found at top level of YAML config")
    return _ini(text)


def _ini(text: str) -> Refusal | None:
    """Return mongod's refusal of an INI-style file: its first line that is not `key = value`, or None."""
    for line in text.splitlines():
        if line.strip() and not line.strip().startswith("#") and "=" not in line:
            return _bad_options(f"Error parsing INI config file: the options configuration file contains an "
                                f"invalid line '{line.strip()}'")
    return None


def _bad_options(reason: str) -> Refusal:
    """Return mongod's exit on bad options: the reason, a hint, EXIT_BADOPTIONS (2)."""
    return Refusal([reason, "try 'mongod --help' for more information"], 2)


def redis_config_path(argv: list[str]) -> str | None:
    """Return the config file redis-server reads: its first argument unless that is an --option.

    Example:
        >>> redis_config_path(["redis-server", "/c/redis.conf"]), redis_config_path(["--port", "6380"])
        ('/c/redis.conf', None)
    """
    args = argv[1:] if argv and argv[0].rsplit("/", 1)[-1] in ("redis-server", "docker-entrypoint.sh") else argv
    return args[0] if args and not args[0].startswith("--") else None


def redis(text: str, version: str = "6.2.4") -> Refusal | None:
    """Return how redis-server refuses a config file (the first bad line), or None.

    Example:
        >>> redis("port 6379\\nno-such-directive yes\\n").lines[2:4]
        ['Reading the configuration file, at line 2', ">>> 'no-such-directive yes'"]
    """
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.split("\x00")[0].strip(" \t\r\n")  # C strings end at a NUL byte
        if not line or line.startswith("#"):
            continue
        argv = split_args(line)
        if argv is None:
            return _redis_error(version, number, line, "Unbalanced quotes in configuration line")
        if not argv:
            continue
        name = argv[0].lower()
        if name in STANDARD and len(argv) != 2:
            return _redis_error(version, number, line, "wrong number of arguments")
        if name not in STANDARD and name not in FREE_ARITY:
            return _redis_error(version, number, line, "Bad directive or wrong number of arguments")
    return None


def _redis_error(version: str, number: int, line: str, err: str) -> Refusal:
    return Refusal(["", f"*** FATAL CONFIG FILE ERROR (Redis {version}) ***",
                    f"Reading the configuration file, at line {number}", f">>> '{line}'", err], 1)


def split_args(line: str) -> list[str] | None:
    """Split a line as redis does (sdssplitargs): quotes group, a quote must close before a space; None if not.

    Example:
        >>> split_args('save "" 900'), split_args('rename-command "a b'), split_args('x "a"b')
        (['save', '', '900'], None, None)
    """
    args, i = [], 0
    while i < len(line):
        while i < len(line) and line[i].isspace():
            i += 1
        if i >= len(line):
            break
        word, i = _word(line, i)
        if word is None:
            return None
        args.append(word)
    return args


def _word(line: str, i: int) -> tuple[str | None, int]:
    """Read one argument from line[i:]; return (text, next index), text None when its quoting is broken."""
    quote, out = None, []
    while i < len(line):
        c = line[i]
        if quote is None and c.isspace():
            return "".join(out), i
        if quote is None and c in "\"'":
            quote = c
        elif c == quote:
            if i + 1 < len(line) and not line[i + 1].isspace():
                return None, i  # "closing quote must be followed by a space"
            return "".join(out), i + 1
        elif quote == '"' and c == "\\" and i + 1 < len(line):
            i += 1
            out.append({"n": "\n", "r": "\r", "t": "\t", "b": "\b", "a": "\a"}.get(line[i], line[i]))
        else:
            out.append(c)
        i += 1
    return (None, i) if quote else ("".join(out), i)
