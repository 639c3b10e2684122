"""course.toml's declared schema: a valid JSON Schema, the one `Course.load` keeps (its quick
check agrees with jsonschema's), every limit of settings.Limits in it, and the reference page
docs/course-toml.md generated from it."""

from __future__ import annotations

import tomllib
from dataclasses import fields
from pathlib import Path

import jsonschema
import pytest

from attention_course import course_schema
from attention_course.settings import DEFAULT, Limits
from tests.course import COURSE_ROOT
from tests.test_course import BROKEN

PAGE = COURSE_ROOT / "docs" / "course-toml.md"


def test_the_schema_is_a_json_schema_that_this_course_keeps():
    schema = course_schema.schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    data = tomllib.loads((COURSE_ROOT / "course.toml").read_text())
    jsonschema.validate(data, schema)
    assert course_schema.valid(data, schema)


def test_the_quick_check_knows_every_keyword_of_the_schema():
    """`valid` (what spares a command jsonschema's import) reads every keyword the schema
    uses: a keyword it did not know would be a rule it does not keep."""

    def keywords(node: object, under_properties: bool = False) -> set[str]:
        if isinstance(node, list):
            return set().union(*(keywords(n) for n in node)) if node else set()
        if not isinstance(node, dict):
            return set()
        found = set() if under_properties else set(node)
        for key, value in node.items():
            if key == "default" and not under_properties:
                continue
            found |= keywords(value, key == "properties" and not under_properties)
        return found

    used = keywords(course_schema.schema())
    assert used <= course_schema.KEYWORDS, used - course_schema.KEYWORDS


@pytest.mark.parametrize("text", [text for text, _ in BROKEN if not text.startswith("[course\n")])
def test_the_quick_check_agrees_with_jsonschema(text):
    data = tomllib.loads(text)
    schema = course_schema.schema()
    expected = jsonschema.Draft202012Validator(schema).is_valid(data)
    assert course_schema.valid(data, schema) == expected
    assert not expected  # each is broken


def test_every_limit_is_a_key_of_limits_with_its_default_and_its_comment():
    table = course_schema.schema()["properties"]["limits"]["properties"]
    assert list(table) == [f.name for f in fields(Limits)]
    for name, spec in table.items():
        assert spec["default"] == getattr(DEFAULT, name)
        assert spec["description"], f"{name} has no comment in settings.py"
    assert table["call_timeout"]["description"] == "CPU: one call of a graded function"
    assert table["idle_share"]["description"].startswith("A step past its CPU limit")


def test_the_reference_page_is_the_schemas(capsys):
    """docs/course-toml.md is generated: `python -m attention_course.course_schema > PAGE`."""
    assert course_schema.main([]) == 0
    assert capsys.readouterr().out == PAGE.read_text(), f"stale: regenerate {PAGE.name}"
    for table in course_schema.schema()["properties"]:
        assert f"## `[{table}" in PAGE.read_text()
    assert course_schema.main(["--json"]) == 0
    assert '"title": "course.toml"' in capsys.readouterr().out


def test_the_instructors_guide_names_every_table():
    guide = (COURSE_ROOT / "docs" / "instructors.md").read_text()
    for table in course_schema.schema()["properties"]:
        assert f"[{table}" in guide, table
    assert "course-toml.md" in guide and Path(PAGE).is_file()
