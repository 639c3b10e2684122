"""The released notebooks' visible checks catch the classic mistakes, each with its own hint.

Each case pastes a wrong implementation from the catalogue (tests/catalogue/wrong/) into the
released notebook, whose other solution cells hold the instructor's code, runs it as a student
would, and asserts that the function's visible-checks cell fails with an AssertionError carrying
the matching hint, and that no cell ends in a numpy FloatingPointError. `nbgrader validate` must
not say "Success" for a submission the hidden graders mark down.
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from tests.course import ASSIGNMENTS
from tests.notebook_runs import errors, execute, filled_release

CATALOGUE = Path(__file__).resolve().parent.parent / "catalogue" / "wrong"
ASSIGNMENT_OF = {f: a.name for a in ASSIGNMENTS.values() for f in a.graded}

# catalogue entry -> words of the hint its function's visible checks must fail with
HINTS = {
    "softmax__no_max_shift": "subtract the maximum before np.exp",
    "softmax__global_max": "by its OWN maximum",
    "softmax__course_text": "an all -inf slice must give zeros",
    "softmax__ignores_axis": "normalise along `axis`",
    "softmax__in_place": "must not modify its input",
    "softmax__max_without_keepdims": "with keepdims=True",
    "softmax__over_axis0": "each row (slice along axis=-1) must sum to 1",
    "create_qkv__roles_swapped": "X @ W_q, X @ W_k, X @ W_v",
    "create_qkv__value_from_w_k": "W_v is narrower here",
    "create_qkv__einsum_2d_only": "2-D-only einsum",
    "causal_mask__tril": "True means FORBIDDEN",
    "causal_mask__triu_k0": "not k=0",
    "causal_mask__float": "must return a bool array",
    "scaled_dot_product_attention__no_scaling": "were not divided by",
    "scaled_dot_product_attention__scale_by_v_width": "not of the values",
    "scaled_dot_product_attention__d_k_from_first_axis": "were not divided by",
    "scaled_dot_product_attention__divide_by_d_k": "not d_k itself",
    "scaled_dot_product_attention__mask_inverted": "(True = forbidden)",
    "scaled_dot_product_attention__mask_ignored": "(True = forbidden)",
    "scaled_dot_product_attention__mask_zero_scores": "a score of 0, is not that",
    "scaled_dot_product_attention__mask_after_softmax": "zeroing weights afterwards",
    "scaled_dot_product_attention__mask_minus_1e9": "not uniform weights",
    "scaled_dot_product_attention__softmax_over_queries": "not over the queries",
    "scaled_dot_product_attention__returns_weights_first": "return (output, weights)",
    "scaled_dot_product_attention__k_transpose": "K.T reverses them all",
    "scaled_dot_product_attention__scales_q_in_place": "do not scale Q in place",
    "self_attention__ignores_causal": "weights above the diagonal must be 0",
    "self_attention__causal_as_tril": "weights above the diagonal must be 0",
    "self_attention__mask_from_first_axis": "X.shape[-2], not X.shape[0]",
    "cross_attention__ignores_mask": "pass the mask on",
    "cross_attention__values_from_x": "keys AND values from context",
    "cross_attention__roles_swapped": "queries from X, keys from context",
    "split_heads__reshape_direct": "mixes tokens and heads",
    "split_heads__reshape_no_transpose": "then swap the first two",
    "split_heads__transpose_2d_only": "not fixed axes (1, 0, 2)",
    "split_heads__no_value_error": "must raise ValueError",
    "combine_heads__reversed_heads": "heads concatenated in order",
    "combine_heads__reshape_no_transpose": "heads concatenated in order",
    "combine_heads__transpose_2d_only": "not fixed axes (1, 0, 2)",
    "multi_head_attention__averaged_weights": "not averaged",
    "multi_head_attention__no_w_o": "then @ W_o",
    "multi_head_attention__scaled_by_d_model": "not sqrt(d_model)",
    "multi_head_attention__mixed_heads": "must be attention on columns",
    "multi_head_attention__mask_head0_only": "the mask must apply to every head",
    "attention_cost__multiply_add_one_flop": "score_flops = 2 *",
    "attention_cost__bytes_ignore_heads": "4 heads store 4 weight matrices",
    "attention_cost__linear_in_seq_len": "score_flops = 2 *",
}

# A pasted helper with a classic mistake, in masks_and_heads: named as the helper's.
PASTED_NO_SCALING = """def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
"""


def _function(entry: str) -> str:
    return entry.split("__")[0]


def _pasted(entry: str) -> str:
    """The catalogue's code as a student would paste it: catalogue files may call the first
    assignment's create_qkv, which masks_and_heads does not have, so it is written out."""
    code = (CATALOGUE / f"{entry}.py").read_text()
    if ASSIGNMENT_OF[_function(entry)] == "masks_and_heads":
        code = code.replace("create_qkv(X, W_q, W_k, W_v)", "(X @ W_q, X @ W_k, X @ W_v)")
    return code


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict]:
    """Every case run once (two at a time): case -> errors by cell id."""
    cases = {
        entry: (
            ASSIGNMENT_OF[_function(entry)],
            {_function(entry): _pasted(entry)},
        )
        for entry in HINTS
    }
    cases["pasted_helper_no_scaling"] = (
        "masks_and_heads",
        {"scaled_dot_product_attention": PASTED_NO_SCALING},
    )
    cases["split_heads_called"] = (
        "masks_and_heads",
        {"split_heads": _pasted("split_heads__reshape_no_transpose")},
    )
    for name in ASSIGNMENTS:
        cases[f"solution/{name}"] = (name, {})
    folder = tmp_path_factory.mktemp("visible")

    def run(case: str):
        assignment, replace = cases[case]
        return case, errors(execute(filled_release(assignment, replace), folder))

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(run, cases))


def test_enough_mistakes_are_checked():
    assert len(HINTS) >= 10
    for entry in HINTS:
        assert (CATALOGUE / f"{entry}.py").exists(), entry


@pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
def test_instructor_solution_passes_every_visible_check(runs, assignment):
    assert runs[f"solution/{assignment}"] == {}


@pytest.mark.parametrize("entry", sorted(HINTS))
def test_visible_check_fails_with_its_hint(runs, entry):
    found = runs[entry]
    cell = f"{_function(entry)}_tests"
    assert cell in found, f"the visible checks of {_function(entry)} passed: {found}"
    ename, message = found[cell]
    assert ename == "AssertionError", (ename, message)
    assert HINTS[entry] in message, message
    assert not [c for c, (e, _) in found.items() if e == "FloatingPointError"], found


def test_pasted_helper_bug_is_named_first(runs):
    found = runs["pasted_helper_no_scaling"]
    for function in ("self_attention", "cross_attention", "multi_head_attention"):
        ename, message = found[f"{function}_tests"]
        assert ename == "AssertionError"
        assert message.startswith("pasted scaled_dot_product_attention: weights (0.1, 0.9)")
    assert "helpers_check" in found


def test_a_callees_mistake_is_named_where_the_graders_charge_it(runs):
    """A split_heads that forgets the axis swap: its own checks fail; combine_heads' pass (they
    no longer call it), as its grader gives combine_heads full marks; multi_head_attention's
    checks, which fail through it, name split_heads as the graders do."""
    found = runs["split_heads_called"]
    assert "split_heads_tests" in found
    assert "combine_heads_tests" not in found, found.get("combine_heads_tests")
    ename, message = found["multi_head_attention_tests"]
    assert ename == "AssertionError"
    assert "multi_head_attention calls split_heads, whose own visible checks have not passed" in (
        message
    ), message


def _validate(path: Path) -> str:
    nbgrader = Path(sys.executable).with_name("nbgrader")
    proc = subprocess.run(
        [str(nbgrader), "validate", path.name], cwd=path.parent, capture_output=True, text=True
    )
    return proc.stdout + proc.stderr


GLOBAL_MAX = """def softmax(z, axis=-1):
    e = np.exp(z - np.max(z))
    return e / np.sum(e, axis=axis, keepdims=True)
"""


@pytest.mark.parametrize(
    ("assignment", "replace", "failed_cell"),
    [
        ("attention_basics", {"softmax": GLOBAL_MAX}, "the row [1, 2] came out wrong"),
        ("masks_and_heads", {"scaled_dot_product_attention": PASTED_NO_SCALING}, "(0.1, 0.9)"),
        ("attention_basics", {}, None),
    ],
    ids=["softmax_global_max", "pasted_sdpa_no_scaling", "solution"],
)
def test_nbgrader_validate(tmp_path, assignment, replace, failed_cell):
    """The two submissions the hidden graders mark down (7/10 and 50/60 before) no longer get
    "Success!"; the instructor's solution still does."""
    path = tmp_path / f"{assignment}.ipynb"
    nbformat.write(filled_release(assignment, replace, demos=()), path)
    out = _validate(path)
    if failed_cell is None:
        assert "Success! Your notebook passes all the tests." in out, out[-2000:]
    else:
        assert "Success" not in out, out[-2000:]
        assert "VALIDATION FAILED" in out and failed_cell in out, out[-3000:]


def _printed(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")


def test_checks_of_a_function_calling_a_later_one_wait_for_it(tmp_path):
    """A correct self_attention that calls cross_attention, defined further down (the contract
    lets a graded function use the other functions of its notebook), raises no NameError under
    Restart & Run All: its visible checks say what they wait for, and pass once
    cross_attention is defined."""
    code = (CATALOGUE.parent / "correct" / "self_attention__via_cross_attention.py").read_text()
    nb = execute(filled_release("masks_and_heads", {"self_attention": code}), tmp_path)
    assert errors(nb) == {}
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
    waits = _printed(cells["self_attention_tests"])
    assert "need cross_attention, which is defined further down" in waits, waits
    assert "visible checks passed" not in waits
    later = _printed(cells["cross_attention_tests"])
    assert "self_attention's visible checks, now that cross_attention is defined:" in later
    assert later.count("visible checks passed") == 2, later
