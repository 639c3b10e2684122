"""The exercise contract as data (grader_tests/contract.toml): its schema, and that it says what
the reference takes."""

from __future__ import annotations

import inspect
import tomllib

import pytest

from attention_course.grading import contract, course_graders
from tests.course import ASSIGNMENTS, COURSE

TEXT = (COURSE.contract_file or COURSE.root).read_text()


def test_the_contract_names_every_argument_of_every_graded_function_as_the_reference_does():
    found = course_graders.contract(COURSE)
    reference = course_graders.reference(COURSE)
    graded = {f for a in ASSIGNMENTS.values() for f in a.graded}
    assert set(found.functions) == graded
    for name, spec in found.functions.items():
        params = inspect.signature(getattr(reference, name)).parameters
        assert spec.names == list(params), name
        for a in spec.arguments:  # an optional argument has the reference's default
            default = params[a.name].default
            assert a.optional == (default is not inspect.Parameter.empty), (name, a.name)
            if a.optional:
                assert a.default == default, (name, a.name)


@pytest.mark.parametrize(
    "edit, words",
    [
        (
            lambda d: d["functions"]["softmax"].update(argumnets=[]),
            "functions.softmax.argumnets: unknown key (did you mean 'arguments'?)",
        ),
        (
            lambda d: d["functions"]["softmax"]["arguments"][0].update(edges=["big"]),
            "'big' is not an edge of array arguments (known: large, fine, spread, neg_inf)",
        ),
        (
            lambda d: d["functions"]["softmax"]["arguments"][0].update(array=["...", "m"]),
            "uses the size 'm', not in sizes",
        ),
        (
            lambda d: d["functions"]["softmax"]["arguments"][0].update(mask=["n"]),
            "must be exactly one of array, mask, size, flag, axis (it is array, mask)",
        ),
        (lambda d: d["sizes"]["seq"].update(usual=[5, 2]), "1 <= low <= high, not [5, 2]"),
        (
            lambda d: d["functions"]["split_heads"]["sizes"].update(d_model="heads * width"),
            "'width' is no plain size here",
        ),
        (
            lambda d: d["functions"]["causal_mask"]["arguments"][0].update(edges=["indivisible"]),
            "can only be indivisible when a size is a product of 'n'",
        ),
    ],
)
def test_a_mistake_in_the_contract_is_one_line_that_says_where(edit, words):
    data = tomllib.loads(TEXT)
    edit(data)
    with pytest.raises(contract.ContractError) as found:
        contract.parse(data, "contract.toml")
    message = str(found.value)
    assert message.startswith("contract.toml: ") and "\n" not in message
    assert words in message, message


def test_a_course_without_a_contract_has_an_empty_one(tmp_path):
    assert contract.load(tmp_path / "nothing.toml").functions == {}
    bad = tmp_path / "bad.toml"
    bad.write_text("[sizes\n")
    with pytest.raises(contract.ContractError, match="not a readable TOML file"):
        contract.load(bad)
