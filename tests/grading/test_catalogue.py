"""The catalogue of wrong and correct implementations proves the hidden graders work.

Each catalogue file defines one graded function. It is appended to the reference (so its
definitions override the reference's) and graded for that one function through the real
grading path (`grade_file` in process, as grading jobs and `check` grade, with a sandboxed
worker; tests/grading/test_run_graders.py shows the graders' pytest process gives the same reports):

- `catalogue/wrong/<function>__<mistake>.py` must lose points, and fail every test its
  `# caught-by:` header names (the tests meant to catch that mistake) and, unless it is listed
  in BROAD, no other; one that names only the 0-point test of a pasted helper keeps full marks
  (the helper's bug is named, and costs points in attention_basics only);
- every grader test is named by a wrong implementation outside BROAD, so each can fail, and
  near misses (float16 arithmetic, a probability floor) show the value tolerances bite;
- `catalogue/correct/<function>__<variant>.py` must get full marks;
- a wrong implementation may name, after its `# caught-by:` line, graded functions of its
  notebook that call it (`# caller-keeps-points: <caller>, fails only <0-point test>`): the
  caller (the reference's, or a correct one the entry defines), which then calls the wrong
  function, is graded too and must keep full marks, failing only the 0-point test that names
  the wrong function (the mistake costs points once, in its own function's tests;
  grading/session.py).
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from attention_course.grading.graders import GradeReport
from tests.conftest import grade_reference_variants
from tests.course import ASSIGNMENTS, COURSE, REFERENCE_FILE
from tests.direct_grading import grade_here

CATALOGUE = Path(__file__).resolve().parent.parent / "catalogue"
WRONG = sorted((CATALOGUE / "wrong").glob("*.py"))
CORRECT = sorted((CATALOGUE / "correct").glob("*.py"))
ASSIGNMENT_OF = {f: a.name for a in ASSIGNMENTS.values() for f in a.graded}

# A wrong implementation fails exactly the tests its header names, so the catalogue also pins
# down the partial credit of each mistake. These break more than one header line can list (every
# call errors, or every value is off): they fail at least the tests named, and maybe others.
BROAD = {
    "softmax__global_max",
    "softmax__max_without_keepdims",
    "softmax__no_max_shift",
    "softmax__over_axis0",
    "scaled_dot_product_attention__d_k_from_first_axis",
    "scaled_dot_product_attention__mask_inverted",
    "scaled_dot_product_attention__mask_zero_scores",
    "cross_attention__values_from_x",
    "multi_head_attention__mixed_heads",
    # Right-shaped only when the inputs they confuse have equal shapes: elsewhere they raise.
    "scaled_dot_product_attention__output_from_keys",
    "scaled_dot_product_attention__mask_transposed",
    "self_attention__values_unprojected",
    "cross_attention__values_with_w_k",
}


@dataclass(frozen=True)
class Entry:
    path: Path
    kind: str  # "wrong" or "correct"
    function: str
    caught_by: tuple[str, ...]
    callers: tuple[tuple[str, str], ...] = ()  # (caller graded too, its only failing test)

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.path.stem}"

    @property
    def functions(self) -> list[str]:
        """What it is graded for: its function, and the callers that must keep their points."""
        return [self.function, *(caller for caller, _ in self.callers)]


CALLER = re.compile(r"# caller-keeps-points: (\w+), fails only (\w+)$")


def _header(path: Path, kind: str) -> Entry:
    lines = path.read_text().splitlines()
    assert len(lines) >= 3, f"{path.name}: too short for its header"
    assert lines[0].startswith("# function: "), f"{path.name}: line 1 must be '# function: ...'"
    function = lines[0].removeprefix("# function: ").strip()
    assert path.stem.startswith(f"{function}__"), f"{path.name}: name must be {function}__*.py"
    caught_by: tuple[str, ...] = ()
    comment = lines[1]
    if kind == "wrong":
        assert lines[1].startswith("# caught-by: "), f"{path.name}: line 2 must be '# caught-by:'"
        names = lines[1].removeprefix("# caught-by: ").split(",")
        caught_by = tuple(n.strip() for n in names if n.strip())
        assert caught_by, f"{path.name}: caught-by names no test"
        comment = lines[2]
    callers = []
    while kind == "wrong" and (found := CALLER.match(comment)):
        callers.append((found[1], found[2]))
        comment = lines[2 + len(callers)]
    assert not comment.startswith("# caller"), f"{path.name}: malformed caller line {comment!r}"
    assert comment.startswith("# ") and len(comment) > 10, f"{path.name}: no misconception line"
    return Entry(path, kind, function, caught_by, tuple(callers))


ENTRIES = [_header(p, "wrong") for p in WRONG] + [_header(p, "correct") for p in CORRECT]


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, GradeReport]:
    """Every catalogue file (and the plain reference, per assignment), graded 2 at a time."""
    variants = {
        e.key: (ASSIGNMENT_OF[e.function], e.functions, e.path.read_text()) for e in ENTRIES
    }
    for name in ASSIGNMENTS:
        variants[f"reference/{name}"] = (name, None, "")
    return grade_reference_variants(tmp_path_factory.mktemp("catalogue"), variants, in_process=True)


def _failed(report: GradeReport, function: str) -> set[str]:
    return {t.test for t in report.functions[function].tests if not t.passed}


def _defines(entry: Entry) -> set[str]:
    tree = ast.parse(entry.path.read_text())
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


def test_catalogue_size():
    assert len(WRONG) >= 30
    assert len(CORRECT) >= 8


def test_every_grader_test_is_named_by_a_precise_wrong_implementation():
    """Every grader test can fail: some wrong implementation outside BROAD names it, and so
    fails it and only the tests it names (test_wrong_implementation_is_caught)."""
    from attention_course.grading.runner import load

    named = {
        (e.function, test)
        for e in ENTRIES
        if e.kind == "wrong" and e.path.stem not in BROAD
        for test in e.caught_by
    } | {caller for e in ENTRIES for caller in e.callers}
    tests = {(f, t.name) for f in ASSIGNMENT_OF for t in load(COURSE, f)[0]}
    assert len(tests) >= 60
    assert not sorted(tests - named), "named by no precise wrong implementation"


def test_every_graded_function_has_a_wrong_implementation():
    covered = {e.function for e in ENTRIES if e.kind == "wrong"}
    graded = {f for a in ASSIGNMENTS.values() for f in a.graded}
    assert graded <= covered, f"no wrong implementation of {sorted(graded - covered)}"


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.key)
def test_file_defines_a_graded_function(entry):
    assert entry.function in ASSIGNMENT_OF
    assert entry.function in _defines(entry), f"{entry.path.name} does not define its function"


@pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
def test_reference_gets_full_marks(graded, assignment):
    report = graded[f"reference/{assignment}"]
    assert not report.cell_errors and not report.notes
    assert set(report.functions) == set(ASSIGNMENTS[assignment].graded)
    for name, fs in report.functions.items():
        assert fs.tests, f"no grader test for {name}"
        assert fs.score == fs.max_score, f"{name}: {fs.feedback()}"


@pytest.mark.parametrize(
    "entry", [e for e in ENTRIES if e.kind == "wrong"], ids=lambda e: e.path.stem
)
def test_wrong_implementation_is_caught(graded, entry):
    report = graded[entry.key]
    assert not report.cell_errors, f"the program did not load: {report.cell_errors}"
    fs = report.functions[entry.function]
    names = {t.test for t in fs.tests}
    unknown = set(entry.caught_by) - names
    assert not unknown, f"caught-by names tests that do not exist: {sorted(unknown)}"
    if any(t.points for t in fs.tests if t.test in entry.caught_by):
        assert fs.score < fs.max_score
    else:  # only a 0-point test: a pasted helper's bug is named, and costs nothing here
        assert fs.score == fs.max_score, fs.feedback()
    failed = _failed(report, entry.function)
    missed = [t for t in entry.caught_by if t not in failed]
    assert not missed, f"not caught by {missed}:\n{fs.feedback()}"
    if entry.path.stem not in BROAD:
        extra = sorted(failed - set(entry.caught_by))
        assert not extra, f"also fails {extra} (too harsh, or add them to caught-by)"
    for t in fs.tests:
        assert "could not check" not in t.message, f"grader error in {t.test}: {t.message}"


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.callers], ids=lambda e: e.path.stem)
def test_correct_caller_keeps_its_points_and_names_the_wrong_callee(graded, entry):
    """A correct caller of the wrong function loses no points: only its 0-point test fails,
    naming the wrong function; the wrong function lost its own (above)."""
    report = graded[entry.key]
    assert report.functions[entry.function].score < report.functions[entry.function].max_score
    for caller, zero_point in entry.callers:
        fs = report.functions[caller]
        assert fs.score == fs.max_score, fs.feedback()
        assert _failed(report, caller) == {zero_point}, fs.feedback()
        named = next(t for t in fs.tests if t.test == zero_point)
        assert named.points == 0
        above = ASSIGNMENTS[ASSIGNMENT_OF[caller]].graded.index(entry.function) < (
            ASSIGNMENTS[ASSIGNMENT_OF[caller]].graded.index(caller)
        )
        where = "graded above" if above else "graded below"
        assert f"because {entry.function}, {where}," in named.message, named.message
        assert f"Fix {entry.function}." in named.message


@pytest.mark.parametrize(
    "entry", [e for e in ENTRIES if e.kind == "correct"], ids=lambda e: e.path.stem
)
def test_correct_variant_gets_full_marks(graded, entry):
    report = graded[entry.key]
    assert not report.cell_errors, f"the program did not load: {report.cell_errors}"
    fs = report.functions[entry.function]
    assert fs.tests and fs.max_score > 0
    assert fs.score == fs.max_score, fs.feedback()


def test_whole_array_max_is_told_underflow_not_overflow(graded):
    """Shifting by the whole array's maximum breaks the rows far below it (underflow to 0 / 0),
    not the row near 1000: the message says so."""
    fs = graded["wrong/softmax__global_max"].functions["softmax"]
    large = next(t for t in fs.tests if t.test == "test_large_inputs_do_not_overflow")
    assert not large.passed
    assert "its own maximum" in large.message and "overflows" not in large.message


# The graders' inputs are drawn per submission from a secret seed: every verdict of the catalogue
# must be the same under any. Graded directly (tests/direct_grading.py: the catalogue is the
# course's own code), under the seed each entry had above (which checks the direct grading
# against the sandboxed one) and under five more.
SEEDS = [hashlib.sha256(f"catalogue seed {i}".encode()).hexdigest()[:32] for i in range(5)]


@pytest.fixture(scope="module")
def verdicts(graded) -> dict[str, dict[str, dict[tuple[str, str], bool]]]:
    """Entry key -> seed -> (function, test) -> passed."""
    reference = REFERENCE_FILE.read_text()
    found: dict[str, dict[str, dict[tuple[str, str], bool]]] = {}
    for e in ENTRIES:
        program = [("variant", reference + "\n\n" + e.path.read_text())]
        seeds = [graded[e.key].seed, *SEEDS]
        found[e.key] = {
            s: {
                (f, test): passed
                for f in e.functions
                for test, passed in grade_here(COURSE, program, f, s).items()
            }
            for s in seeds
        }
    return found


def _sandboxed(report: GradeReport, entry: Entry) -> dict[tuple[str, str], bool]:
    return {(f, t.test): t.passed for f in entry.functions for t in report.functions[f].tests}


def test_direct_grading_gives_the_sandboxed_verdicts(graded, verdicts):
    for e in ENTRIES:
        seed = graded[e.key].seed
        assert seed is not None and seed not in SEEDS
        assert verdicts[e.key][seed] == _sandboxed(graded[e.key], e), e.key


def test_every_verdict_is_the_same_under_five_other_seeds(graded, verdicts):
    assert len(set(SEEDS)) == 5
    for e in ENTRIES:
        sandboxed = _sandboxed(graded[e.key], e)
        for seed in SEEDS:
            differ = sorted(t for t, p in verdicts[e.key][seed].items() if p != sandboxed[t])
            assert not differ, f"{e.key} under seed {seed}: {differ} change"


# entry -> (test, words its message must hold: the misconception's, words it must not hold:
# another misconception's, a raw numpy error's, or a pasted one-line fix)
HINTS = {
    "softmax__min_shift": ("test_large_inputs_do_not_overflow", ["overflowed"], ["underflow"]),
    "softmax__global_max": (
        "test_large_inputs_do_not_overflow",
        ["underflowed", "whole array"],
        ["overflowed"],
    ),
    "softmax__axis_one_for_last": (
        "test_large_inputs_do_not_overflow",
        ["number of dimensions"],
        ["overflow", "underflow"],
    ),
    "cross_attention__default_causal_mask": (
        "test_queries_from_x_keys_from_context",
        ["mask=None means no mask", "seq_len_k = 5"],
        ["could not be broadcast", "raised ValueError"],
    ),
    "scaled_dot_product_attention__mask_after_softmax": (
        "test_mask_applied_before_softmax",
        ["before the softmax", "zeroed after the softmax"],
        ["np.where("],
    ),
    "scaled_dot_product_attention__mask_by_boolean_index": (
        "test_broadcast_mask_with_batch",
        ["indexing the scores with the mask", "boolean index"],
        ["np.where(", "did not match"],
    ),
    "multi_head_attention__mask_without_head_axis": (
        "test_mask_applies_to_every_head",
        ["no head axis", "lands on head b"],
        ["None, :, :"],
    ),
    "combine_heads__transpose_2d_only": (
        "test_batched_input",
        ["fixed axes (1, 0, 2)", "single sequence"],
        ["np.swapaxes", "don't match"],
    ),
    "split_heads__transpose_2d_only": (
        "test_batched_input",
        ["fixed axes (1, 0, 2)", "single sequence"],
        ["np.swapaxes", "cannot reshape"],
    ),
    "scaled_dot_product_attention__k_transpose": (
        "test_batched_equals_per_slice_loop",
        ["reverses every axis", "inner sizes differ"],
        ["K.T", "np.swapaxes", "gufunc"],
    ),
    "softmax__float32_inside": ("test_rows_on_different_scales", ["computed in float64"], []),
    "scaled_dot_product_attention__float32_inside": (
        "test_values_match_reference",
        ["computed in float64"],
        [],
    ),
    "attention_cost__float_counts": ("test_returns_dict_of_numbers", ["not an int"], []),
    "attention_cost__true_division_d_k": (
        "test_returns_dict_of_numbers",
        ["do not divide", "d_model // num_heads"],
        [],
    ),
}


@pytest.mark.parametrize("stem", sorted(HINTS))
def test_hint_names_the_misconception(graded, stem):
    """The hint is decided by what the code did: its misconception's words, never another
    misconception's, a raw numpy error or the fix's code."""
    test, words, never = HINTS[stem]
    entry = next(e for e in ENTRIES if e.kind == "wrong" and e.path.stem == stem)
    fs = graded[entry.key].functions[entry.function]
    result = next(t for t in fs.tests if t.test == test)
    assert not result.passed, f"{stem} passes {test}"
    for word in words:
        assert word in result.message, (word, result.message)
    for word in never:
        assert word not in result.message, (word, result.message)


def test_untouched_stub_is_not_implemented_yet_and_nothing_else(graded):
    fs = graded["wrong/softmax__not_implemented"].functions["softmax"]
    assert fs.score == 0
    failed = [t for t in fs.tests if not t.passed]
    assert failed and {t.message for t in failed} == {"softmax is not implemented yet"}


def test_shape_mismatches_carry_their_property_on_every_test(graded):
    """A cross_attention that builds a mask nobody asked for stops on numpy's shape error in
    every call with seq_len_q != seq_len_k: each failure says what the shapes must be."""
    fs = graded["wrong/cross_attention__default_causal_mask"].functions["cross_attention"]
    failed = [t for t in fs.tests if not t.passed]
    assert len(failed) >= 5
    for t in failed:
        assert "mask=None means no mask" in t.message and "broadcast together" not in t.message
