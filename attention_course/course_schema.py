"""course.toml's declared schema (JSON Schema), and reading the file against it.

The schema is the one description of every table and key a course may write: `check` refuses a
file that breaks it in one line (the file, the line, what is wrong and, for a mistyped key, the
known key nearest to it), and `reference` writes docs/course-toml.md from it (regenerated with
`python -m attention_course.course_schema`; a test keeps the committed page fresh). The
defaults stay where they are declared, in settings.py: the tables that override a settings
object (`[limits]` the limits on student code, `[hub_check]`, `[gradescope]`, `[lms]`) take
their keys, types and defaults from its fields, so a new limit is a key of `[limits]` at once.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import json
import re
import sys
import tomllib
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from attention_course.errors import UserError
from attention_course.settings import (
    AFTER_DUE,
    COURSE_FILE,
    DEFAULT,
    GRADESCOPE,
    GRADESCOPE_VISIBILITY,
    HUB_CHECK,
    LMS,
    LMS_FORMATS,
    Limits,
)

NAMES: dict[str, Any] = {
    "type": "array",
    "items": {"type": "string", "minLength": 1},
    "description": "a list of names",
}
# course.toml's own tables (the others are read from settings.py's declarations below).
COURSE_TABLE: dict[str, Any] = {
    "description": "The course: its id and where its graders' files are.",
    "required": ["id"],
    "properties": {
        "id": {"type": "string", "minLength": 1, "description": "the course's id"},
        "graders": {
            "type": "string",
            "default": "grader_tests",
            "description": "the graders' folder (never released)",
        },
        "reference": {
            "type": "string",
            "default": "grader_tests/reference.py",
            "description": "the reference solution (the graders' folder's reference.py)",
        },
        "contract": {
            "type": "string",
            "default": "grader_tests/contract.toml",
            "description": "the exercise contract as data (the graders' draws read it)",
        },
        "misconceptions": {
            "type": "string",
            "default": "grader_tests/misconceptions.py",
            "description": "the mistakes the feedback can name",
        },
    },
}
ASSIGNMENT_TABLE: dict[str, Any] = {
    "description": "One assignment (`[assignments.<name>]`, one table each, at least one).",
    "required": ["functions"],
    "properties": {
        "functions": {
            **NAMES,
            "minItems": 1,
            "description": "its graded functions, in notebook order",
        },
        "helpers": {
            **NAMES,
            "default": [],
            "description": "functions the student brings from an earlier assignment",
        },
    },
}
QUIZ_TABLE: dict[str, Any] = {
    "description": "The graded quiz (optional).",
    "required": ["assignment", "quizzes"],
    "properties": {
        "assignment": {
            "type": "string",
            "minLength": 1,
            "description": "the graded quiz's nbgrader assignment",
        },
        "quizzes": {**NAMES, "description": "the banks it holds, in order"},
        "banks": {
            "type": "string",
            "default": "quiz/banks",
            "description": "the banks' folder (answer keys: never released)",
        },
        "formulas": {
            "type": "string",
            "description": "the named formulas that compute templated answers (default: "
            "formulas.py beside the banks' folder)",
        },
    },
}
SIMILARITY_TABLE: dict[str, Any] = {
    "description": "The similarity report (optional).",
    "properties": {
        "base": {
            "type": "object",
            "additionalProperties": {"type": "string", "minLength": 1},
            "default": {},
            "description": 'known sources students may share code from: { "name" = "path" }',
        },
    },
}
LMS_PLATFORM: dict[str, Any] = {
    "issuer": {"type": "string", "description": "the platform's issuer (the launches' iss)"},
    "client_id": {"type": "string", "description": "the tool's client id on the platform"},
    "deployments": {**NAMES, "description": "the accepted deployment ids"},
    "contexts": {**NAMES, "description": "only these LMS courses (default: any)"},
    "authorize_url": {"type": "string", "description": "the platform's OIDC authorization"},
    "jwks_url": {"type": "string", "description": "the platform's keys"},
    "token_url": {"type": "string", "description": "AGS access tokens"},
    "token_audience": {"type": "string", "description": "the token's audience, if not token_url"},
    "lineitems": {"type": "string", "description": "the line items, else a launch's"},
    "format": {"enum": list(LMS_FORMATS), "description": "the CSV export's default LMS"},
}
# What course.toml may hold of HubCheck (the rest are the service's own options).
HUB_CHECK_KEYS = ("per_day", "window", "workers", "pending_per_student", "after_due", "wait")
# Keys that were settings once: their explanation instead of "not a setting".
RETIRED = {
    "callees": "no longer listed: a graded function may call any function of its notebook (the "
    "exercise contract), and a bug of the one it calls costs points in that one's tests only; "
    "remove the key",
}
# The smallest value of a limit, where it is not "more than 0".
LIMIT_BOUNDS: dict[str, dict[str, float]] = {
    "wall_factor": {"minimum": 1},
    "idle_share": {"minimum": 0, "exclusiveMaximum": 1},
    "max_restarts": {"minimum": 0},
}


def field_notes(cls: type) -> dict[str, str]:
    """The comment of each field of a settings dataclass, as settings.py writes it: the field
    line's own, else the comment lines just above it (and above the fields before it)."""
    notes: dict[str, str] = {}
    block: list[str] = []
    after_field = False
    lines = _source_lines(inspect.getfile(cls))
    start = lines.index(next(line for line in lines if line.startswith(f"class {cls.__name__}")))
    for line in lines[start + 1 :]:
        if line.strip() and not line.startswith(" "):
            break  # the class ends
        text = line.strip()
        field = re.match(r"(\w+): [^=]+=[^#]*?(?:#\s*(.*))?$", text)
        if text.startswith("#"):
            block = [] if after_field else block
            block.append(text.lstrip("# "))
            after_field = False
        elif field:
            notes[field[1]] = field[2] or " ".join(block)
            after_field = True
        else:
            block, after_field = [], False
    return notes


@cache
def _source_lines(path: str) -> list[str]:
    return Path(path).read_text().splitlines()


def _value_schema(default: object) -> dict[str, Any]:
    """The JSON Schema of a settings field, from its default's type."""
    if isinstance(default, bool):
        return {"type": "boolean"}
    if isinstance(default, int):
        return {"type": "integer", "minimum": 1}
    if isinstance(default, float):
        return {"type": "number", "exclusiveMinimum": 0}
    if isinstance(default, tuple):
        return dict(NAMES)
    return {"type": "string"}


def _settings_table(
    instance: object, description: str, keys: Sequence[str] | None = None
) -> dict[str, Any]:
    """A table overriding the fields `keys` (default: every field) of a settings object."""
    notes = field_notes(type(instance))
    names = keys or [f.name for f in dataclasses.fields(instance)]  # type: ignore[arg-type]
    properties = {}
    for name in names:
        default = getattr(instance, name)
        properties[name] = {
            **_value_schema(default),
            "default": list(default) if isinstance(default, tuple) else default,
            "description": notes.get(name, ""),
        }
    return {"description": description, "properties": properties}


def _table(spec: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, **spec}


@cache
def schema() -> dict[str, Any]:
    """course.toml's JSON Schema."""
    limits = _settings_table(
        DEFAULT,
        "The limits on student code (settings.Limits; times in seconds, sizes in bytes), for "
        "every place this course is graded: autograde, check, Dask workers, Gradescope, the "
        "hub's checks.",
    )
    for name, bounds in LIMIT_BOUNDS.items():
        schema_of = limits["properties"][name]
        schema_of.pop("minimum", None), schema_of.pop("exclusiveMinimum", None)
        schema_of.update(bounds)
    hub_check = _settings_table(
        HUB_CHECK,
        "Checks with the hidden graders before the deadline (settings.HubCheck); the check "
        "service's options win over these.",
        HUB_CHECK_KEYS,
    )
    hub_check["properties"]["after_due"]["enum"] = list(AFTER_DUE)
    gradescope = _settings_table(
        GRADESCOPE, "What Gradescope's results show students, and when (settings.Gradescope)."
    )
    for name in ("result", "tests", "stdout"):
        gradescope["properties"][name]["enum"] = list(GRADESCOPE_VISIBILITY)
    lms = _settings_table(
        LMS,
        "The course's LTI 1.3 platform, and the LMS settings it overrides (settings.Lms).",
    )
    lms["properties"] = {**LMS_PLATFORM, **lms["properties"]}
    lms["required"] = ["issuer", "client_id", "deployments"]
    lms["properties"]["id_token_max_age"]["minimum"] = 1
    tables = {
        "course": COURSE_TABLE,
        "assignments": {
            "description": ASSIGNMENT_TABLE["description"],
            "minProperties": 1,
            "additionalProperties": _table(ASSIGNMENT_TABLE),
        },
        "quiz": QUIZ_TABLE,
        "similarity": SIMILARITY_TABLE,
        "limits": limits,
        "hub_check": hub_check,
        "gradescope": gradescope,
        "lms": lms,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": COURSE_FILE,
        "description": "A course folder's declaration (attention_course/course_schema.py).",
        "type": "object",
        "required": ["course", "assignments"],
        "additionalProperties": False,
        "properties": {
            name: ({"type": "object", **spec} if "additionalProperties" in spec else _table(spec))
            for name, spec in tables.items()
        },
    }


# ---- Reading a file against it


def check(path: Path, text: str, data: dict[str, Any], spec: dict[str, Any] | None = None) -> None:
    """UserError (one line: the file, the line, what is wrong) unless `data`, read from `text`,
    keeps course.toml's schema (or `spec`, a part of it). Of several mistakes, the first in the
    file is told."""
    spec = spec or schema()
    if valid(data, spec):
        return
    import jsonschema  # type: ignore[import-untyped]

    validator = jsonschema.Draft202012Validator(spec)
    # (where, what, missing): of the mistakes, a missing key or table is told last
    found = [(*_problem(e, data), e.validator == "required") for e in validator.iter_errors(data)]
    if not found:
        return
    lines = _key_lines(text)
    # the first in the file; a missing table (no line) last
    where, message, _ = min(found, key=lambda p: (p[2], _line(lines, p[0]) or len(text)))
    line = _line(lines, where)
    raise UserError(f"{path}{f':{line}' if line else ''}: {message}")


def table(root: Path, name: str) -> dict[str, Any]:
    """The table `name` of the course.toml in `root` (empty when it has none), checked against
    its part of the schema (UserError: one line, as `check`): for what reads one table of a
    course.toml, such as a Gradescope zip's settings or the hub's checks."""
    path = root / COURSE_FILE
    try:
        text = path.read_text()
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"{path}: not readable ({exc})") from None
    if name not in data:
        return {}
    part = {"type": "object", "properties": {name: schema()["properties"][name]}}
    check(path, text, {name: data[name]}, part)
    return data[name]


# The keywords `valid` knows: every one the schema uses (a test keeps it so).
KEYWORDS = frozenset(
    ("type", "properties", "additionalProperties", "required", "enum", "items")
    + ("minimum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "minItems")
    + ("minProperties", "default", "description", "title", "$schema")
)
_TYPES: dict[str, type | tuple[type, ...]] = {
    "object": dict,
    "array": list,
    "string": str,
    "integer": (int, float),  # a float with no fraction is a whole number too
    "number": (int, float),
    "boolean": bool,
}


def valid(value: Any, spec: dict[str, Any]) -> bool:
    """Whether `value` keeps `spec` (the schema's keywords, KEYWORDS): what most files are,
    told without importing jsonschema (some 0.3 s of a command's start); `check` asks
    jsonschema itself what is wrong with a file that is not."""
    kind = spec.get("type")
    if kind and not (
        isinstance(value, _TYPES[kind]) and (kind == "boolean" or not isinstance(value, bool))
    ):
        return False
    if kind == "integer" and isinstance(value, float) and not value.is_integer():
        return False
    if "enum" in spec and value not in spec["enum"]:
        return False
    if isinstance(value, dict):
        return _valid_table(value, spec)
    if isinstance(value, list):
        items = spec.get("items", {})
        return len(value) >= spec.get("minItems", 0) and all(valid(v, items) for v in value)
    if isinstance(value, str):
        return len(value) >= spec.get("minLength", 0)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (
            value >= spec.get("minimum", value)
            and value > spec.get("exclusiveMinimum", value - 1)
            and value < spec.get("exclusiveMaximum", value + 1)
        )
    return True


def _valid_table(value: dict[str, Any], spec: dict[str, Any]) -> bool:
    properties, other = spec.get("properties", {}), spec.get("additionalProperties", True)
    if len(value) < spec.get("minProperties", 0):
        return False
    if any(key not in value for key in spec.get("required", ())):
        return False
    for key, item in value.items():
        inner = properties.get(key, other)
        if inner is False or (isinstance(inner, dict) and not valid(item, inner)):
            return False
    return True


def _problem(error: Any, data: dict[str, Any]) -> tuple[tuple[str, ...], str]:
    """(where in the file, as keys; what is wrong) of one schema error."""
    at = tuple(str(p) for p in error.absolute_path if not isinstance(p, int))
    kind, instance, rule = error.validator, error.instance, error.validator_value
    if kind == "additionalProperties" and isinstance(instance, dict):
        known = sorted(error.schema.get("properties", {}))
        key = next(k for k in instance if k not in known)
        return (*at, key), _unknown(at, key, known)
    if kind == "required":
        missing = next(k for k in rule if k not in instance)
        if at:
            return at, f"{_name(at)} needs {missing}"
        if missing == "assignments":
            return at, "no [assignments.<name>] declared"
        return at, f"no [{missing}] table"
    if isinstance(error.absolute_path[-1] if error.absolute_path else None, int):
        return at, f"{_name(at)} must be a list of names ({_shown(instance)} is not one)"
    if kind == "minProperties" and at == ("assignments",):
        return at, "no [assignments.<name>] declared"
    return at, f"{_name(at)} {_expected(error.schema, kind)}, not {_shown(instance)}"


def _unknown(at: tuple[str, ...], key: str, known: list[str]) -> str:
    if key in RETIRED:
        return f"{_name((*at, key))}: {RETIRED[key]}"
    what = "a table of course.toml" if not at else "a setting"
    near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"did you mean {near[0]}?" if near else f"known: {', '.join(known)}"
    return f"{_name((*at, key))}: not {what} ({hint})"


def _name(at: tuple[str, ...]) -> str:
    """A place in the file as people write it: `[limits] call_timeout`, `[assignments.a]`."""
    table = 2 if at[:1] == ("assignments",) else 1
    head, keys = at[:table], at[table:]
    return f"[{'.'.join(head)}]" + (f" {'.'.join(keys)}" if keys else "")


def _expected(spec: dict[str, Any], kind: str) -> str:
    """What a value should be, in words."""
    kinds = {
        "object": "must be a table",
        "array": "must be a list of names",
        "string": "must be a string",
        "integer": "must be a whole number",
        "number": "must be a number",
        "boolean": "must be true or false",
    }
    if spec.get("additionalProperties", {}) == {"type": "string", "minLength": 1}:
        return 'must be a table of "name" = "path"'
    if kind == "enum":
        return f"must be one of {', '.join(map(str, spec['enum']))}"
    said = kinds.get(str(spec.get("type")), "is not allowed here")
    bounds = [
        f"{word} {spec[rule]:g}"
        for rule, word in (
            ("minimum", "at least"),
            ("exclusiveMinimum", "more than"),
            ("exclusiveMaximum", "less than"),
        )
        if rule in spec
    ]
    if kind == "minLength" or (kind == "minItems" and spec.get("type") == "array"):
        bounds.append("not empty")
    return said + (f" ({', '.join(bounds)})" if bounds else "")


def _shown(value: object) -> str:
    kinds = {dict: "a table", list: "a list", bool: "true or false", str: "a string"}
    if type(value) in (int, float) or (isinstance(value, str) and value):
        return json.dumps(value) if len(repr(value)) < 40 else kinds.get(type(value), "this")
    return kinds.get(type(value), "this") if value not in ("", [], {}) else "empty"


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?")
_PART = re.compile(r"\"([^\"]*)\"|'([^']*)'|([\w-]+)")
_KEY = re.compile(
    r"""^\s*((?:"[^"]*"|'[^']*'|[\w-]+)(?:\s*\.\s*(?:"[^"]*"|'[^']*'|[\w-]+))*)\s*="""
)


def _keys(dotted: str) -> tuple[str, ...]:
    """The keys of a dotted TOML key (`a."b.c".d`)."""
    return tuple("".join(parts) for parts in _PART.findall(dotted))


def _key_lines(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """(line number, the keys it declares) of each table header and key line of a TOML file."""
    found: list[tuple[int, tuple[str, ...]]] = []
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), 1):
        if header := _HEADER.match(line):
            table = _keys(header[1])
            found.append((number, table))
        elif key := _KEY.match(line):
            found.append((number, (*table, *_keys(key[1]))))
    return found


def _line(lines: Iterable[tuple[int, tuple[str, ...]]], at: tuple[str, ...]) -> int | None:
    """The line that declares `at`, else the nearest line above it in the file's tables."""
    best, shared = None, 0
    if not at:
        return None  # the file as a whole
    for number, keys in lines:
        common = next(
            (i for i, (a, b) in enumerate(zip(keys, at, strict=False)) if a != b),
            min(len(keys), len(at)),
        )
        if common == len(at):
            return number
        if common > shared and common == len(keys):
            best, shared = number, common
    return best


# ---- The settings a course overrides


def limits(data: dict[str, Any]) -> Limits:
    """settings.DEFAULT with course.toml's `[limits]` (a file that keeps the schema)."""
    table = data.get("limits", {})
    values: dict[str, Any] = {
        name: type(getattr(DEFAULT, name))(value)  # a number of the field's own type
        for name, value in table.items()
    }
    return dataclasses.replace(DEFAULT, **values)


# ---- The reference page


def reference() -> str:
    """docs/course-toml.md: every table and key of course.toml, from the schema."""
    out = [
        "# course.toml: every table and key",
        "",
        "<!-- Generated from attention_course/course_schema.py by "
        "`python -m attention_course.course_schema`: do not edit by hand. -->",
        "",
        "A course folder's `course.toml` declares the course. Every command reads it against "
        "this schema and refuses a file that breaks it in one line: the file, the line, what is "
        "wrong and, for a mistyped key, the nearest known key. The defaults are those of "
        "`attention_course/settings.py`. A JSON Schema of the file, for an editor that "
        "validates TOML (Taplo, Even Better TOML), is printed by "
        "`python -m attention_course.course_schema --json`.",
    ]
    for name, table in schema()["properties"].items():
        if name == "assignments":
            name, table = "assignments.<name>", table["additionalProperties"]
        required = set(table.get("required", ()))
        out += ["", f"## `[{name}]`", "", table["description"], ""]
        out += ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
        for key, spec in table["properties"].items():
            default = "required" if key in required else _default(spec.get("default"))
            meaning = spec.get("description", "").replace("|", "\\|")
            out.append(f"| `{key}` | {_type(spec)} | {default} | {meaning} |")
    return "\n".join(out) + "\n"


def _type(spec: dict[str, Any]) -> str:
    if "enum" in spec:
        return " or ".join(f'`"{v}"`' for v in spec["enum"])
    word = {
        "array": "list of strings",
        "object": "table",
        "number": "number",
        "integer": "integer",
        "boolean": "boolean",
        "string": "string",
    }[spec["type"]]
    bounds = [
        f"{sign} {spec[rule]:g}"
        for rule, sign in (
            ("minimum", "≥"),
            ("exclusiveMinimum", ">"),
            ("exclusiveMaximum", "<"),
        )
        if rule in spec
    ]
    return word + (f" ({', '.join(bounds)})" if bounds else "")


def _default(value: object) -> str:
    if value is None:
        return ""
    return f"`{json.dumps(value)}`"


def main(argv: Sequence[str] | None = None) -> int:
    """Print the reference page (docs/course-toml.md), or with --json the JSON Schema."""
    args = sys.argv[1:] if argv is None else list(argv)
    print(json.dumps(schema(), indent=2) if "--json" in args else reference(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
