"""The catalogue of wrong and correct implementations proves the hidden graders work.

Each catalogue file defines one graded function. It is appended to the reference (so its
definitions override the reference's) and graded for that one function through the real
grading path (`grade_file` in process, as grading jobs and `check` grade, with a sandboxed
worker; tests/grading/test_run_graders.py shows the graders' pytest process gives the same reports):

- `catalogue/wrong/<function>__<mistake>.py` must lose points, and fail every test its
  `# caught-by:` header names (the tests meant to catch that mistake) and, unless it is listed
  in BROAD, no other; one that names only the 0-point test of a pasted helper keeps full marks
  (the helper's bug is named, and costs points in attention_basics only); its
  `# misconception:` line names the mistake, and every failing test's hint names that one
  (grader_tests/misconceptions.py), says which failure it follows from, or names none, never
  another (benchmarks/hint_accuracy.py prints the shares);
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
    # Arithmetic in float16 is off by about 1e-3 of each weight: every test but the read-only
    # one fails, and on large scores by 1e-3 or not, as the draw has near ties or not.
    "softmax__half_precision",
    "softmax__half_precision_called_by_sdpa",
    # Weights of shape (seq_len_q, num_heads, seq_len_k): judged as weights where that shape
    # happens to be the per-head one (as many heads as queries), on the output elsewhere.
    "multi_head_attention__weights_heads_positions_swapped",
    # Raises for every odd d_model and never for an even one: which tests that costs depends on
    # the parity of the widths drawn (some column-block draw always has an odd one).
    "split_heads__checks_even_width",
}


@dataclass(frozen=True)
class Entry:
    path: Path
    kind: str  # "wrong" or "correct"
    function: str
    caught_by: tuple[str, ...]
    callers: tuple[tuple[str, str], ...] = ()  # (caller graded too, its only failing test)
    misconception: str = ""  # the label of its mistake (grader_tests/misconceptions.py)

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
    label = ""
    if kind == "wrong":
        assert comment.startswith("# misconception: "), f"{path.name}: no '# misconception:' line"
        label = comment.removeprefix("# misconception: ").strip()
        assert re.fullmatch(r"[a-z][a-z0-9_]*", label), f"{path.name}: label {label!r}"
        comment = lines[3 + len(callers)]
    assert comment.startswith("# ") and len(comment) > 10, (
        f"{path.name}: no line saying its mistake"
    )
    return Entry(path, kind, function, caught_by, tuple(callers), label)


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
    tests = {(f, t.name) for f in ASSIGNMENT_OF for t in load(COURSE, f)[1] if t.points > 0}
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


# The graders' inputs are drawn per submission from a secret seed: every verdict of the catalogue
# must be the same under any. Graded directly (tests/direct_grading.py: the catalogue is the
# course's own code), under the seed each entry had above (which checks the direct grading
# against the sandboxed one) and under two more (the correct variants under twenty, below).
SEEDS = [hashlib.sha256(f"catalogue seed {i}".encode()).hexdigest()[:32] for i in range(2)]


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


def test_every_correct_variant_keeps_full_marks_under_twenty_seeds():
    """A correct variant gets full marks whatever the submission's seed: twenty of them, each
    drawing its own inputs over the whole contract."""
    reference = REFERENCE_FILE.read_text()
    seeds = [hashlib.sha256(f"correct seed {i}".encode()).hexdigest()[:32] for i in range(20)]
    for e in ENTRIES:
        if e.kind != "correct":
            continue
        program = [("variant", reference + "\n\n" + e.path.read_text())]
        for seed in seeds:
            failed = [
                t
                for t, passed in grade_here(COURSE, program, e.function, seed).items()
                if not passed
            ]
            assert not failed, f"{e.key} under seed {seed}: {failed}"


def _sandboxed(report: GradeReport, entry: Entry) -> dict[tuple[str, str], bool]:
    return {(f, t.test): t.passed for f in entry.functions for t in report.functions[f].tests}


def test_direct_grading_gives_the_sandboxed_verdicts(graded, verdicts):
    for e in ENTRIES:
        seed = graded[e.key].seed
        assert seed is not None and seed not in SEEDS
        assert verdicts[e.key][seed] == _sandboxed(graded[e.key], e), e.key


def test_every_verdict_is_the_same_under_two_other_seeds(graded, verdicts):
    assert len(set(SEEDS)) == 2
    for e in ENTRIES:
        sandboxed = _sandboxed(graded[e.key], e)
        for seed in SEEDS:
            differ = sorted(
                t
                for t, p in verdicts[e.key][seed].items()
                if p != sandboxed[t] and (e.path.stem not in BROAD or t[1] in e.caught_by)
            )
            assert not differ, f"{e.key} under seed {seed}: {differ} change"


def _hint_verdicts(report: GradeReport, entry: Entry) -> list[tuple[str, str]]:
    """(test, how its hint stands) for each failing test of the entry's function: "named" (its
    diagnosis is the entry's misconception), "follows" (it says which failure it follows
    from, or names the function it was charged to), "none" or "other:<label>"."""
    found = []
    for t in report.functions[entry.function].tests:
        if t.passed:
            continue
        if t.diagnosis == entry.misconception or (
            t.message.endswith("not implemented yet") and entry.misconception == "not_implemented"
        ):
            found.append((t.test, "named"))
        elif t.follows_from or t.charged_to:
            found.append((t.test, "follows"))
        elif t.diagnosis is None:
            found.append((t.test, "none"))
        else:
            found.append((t.test, f"other:{t.diagnosis}"))
    return found


@pytest.mark.parametrize(
    "entry", [e for e in ENTRIES if e.kind == "wrong"], ids=lambda e: e.path.stem
)
def test_hints_never_name_another_misconception(graded, entry):
    """A failing test's hint names the entry's own misconception, says which failure it
    follows from, or names none; never another mistake (the code would be blamed for what it
    does not do). Its label is a model of the course, or a mistake the engine tells itself."""
    from attention_course.grading import course_graders
    from attention_course.grading.diagnosis import ARRAY_TRUTH, IN_PLACE

    known = course_graders.misconceptions(COURSE).labels | {
        IN_PLACE.label,
        ARRAY_TRUTH.label,
        "not_implemented",
    }
    assert entry.misconception in known, f"no model of {entry.misconception!r}"
    report = graded[entry.key]
    wrong = [(t, how) for t, how in _hint_verdicts(report, entry) if how.startswith("other")]
    assert not wrong, f"hints naming another misconception: {wrong}"


def test_hints_name_the_misconception_of_nine_in_ten_failures(graded):
    """Over the whole catalogue, at least 90% of the failing tests' hints name the entry's
    misconception or the failure they follow from (benchmarks/hint_accuracy.py)."""
    verdicts = [
        how for e in ENTRIES if e.kind == "wrong" for _, how in _hint_verdicts(graded[e.key], e)
    ]
    told = sum(how in ("named", "follows") for how in verdicts)
    assert len(verdicts) > 200 and told / len(verdicts) >= 0.9, (told, len(verdicts))


def test_hints_hold_no_code_of_the_reference_or_the_graders(graded):
    """No failure message of any wrong implementation holds a line of the reference's or the
    graders' code (a hint explains the idea; it never hands over the finished code)."""
    sources = [REFERENCE_FILE, *sorted(REFERENCE_FILE.parent.glob("test_*.py"))]
    contract = (REFERENCE_FILE.parents[1] / "docs" / "exercise-contract.md").read_text()
    code = {  # (the contract's own words, `d_k = d_model // num_heads` say, may be quoted)
        line.strip()
        for path in sources
        for line in path.read_text().splitlines()
        if len(line.strip()) > 24
        and not line.strip().startswith(('"', "#", "def ", "@"))
        and line.strip() not in contract
    }
    assert len(code) > 100
    for e in ENTRIES:
        if e.kind != "wrong":
            continue
        for fs in graded[e.key].functions.values():
            for t in fs.tests:
                leaked = [line for line in code if line in t.message]
                assert not leaked, (e.key, t.test, leaked)


def test_untouched_stub_is_not_implemented_yet_and_nothing_else(graded):
    fs = graded["wrong/softmax__not_implemented"].functions["softmax"]
    assert fs.score == 0
    failed = [t for t in fs.tests if not t.passed]
    assert failed and {t.message for t in failed} == {"softmax is not implemented yet"}


def test_shape_mismatches_carry_their_property_once(graded):
    """A cross_attention that builds a mask nobody asked for stops on numpy's shape error in
    every call with seq_len_q != seq_len_k: the first test that meets it says what the shapes
    must be and what the code seems to do; the others say they follow from it, once."""
    fs = graded["wrong/cross_attention__default_causal_mask"].functions["cross_attention"]
    failed = [t for t in fs.tests if not t.passed]
    assert len(failed) >= 5
    first = failed[0]
    assert "mask=None means no mask" in first.message, first.message
    assert "seq_len_k" in first.message and "broadcast together" not in first.message
    for t in failed[1:]:
        if t.follows_from:
            assert t.message.startswith("Not judged on its own"), t.message
            assert t.follows_from in {u.test for u in failed}
        else:
            assert t.diagnosis == "default_causal_mask", t.message


_NUMBER = re.compile(r"-?\d+\.(\d+)(?:e[-+]?\d+)?")


def _reference_function(function: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location("_reference_for_leaks", REFERENCE_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, function)


def _shown_input(text: str) -> dict[str, object] | None:
    """The arguments of a counterexample as shown (`Q = np.array(...); K = ...`), or None when
    part of it is shown by its shape only."""
    import numpy as np

    args: dict[str, object] = {}
    for part in text.split("; "):
        name, sep, expr = part.partition(" = ")
        if not sep or not name.isidentifier():
            return None
        args[name] = eval(expr, {"np": np, "__builtins__": {}})  # the engine's own text
    return args


def _values(found: object) -> list[float]:
    import numpy as np

    if isinstance(found, tuple | list):
        return [v for part in found for v in _values(part)]
    if isinstance(found, dict):
        return [v for part in found.values() for v in _values(part)]
    array = np.asarray(found)
    if array.dtype.kind != "f":
        return []
    return [float(v) for v in array.ravel() if np.isfinite(v)]


def test_feedback_never_holds_the_references_values(graded):
    """The feedback of every wrong catalogue entry (what a student reads of each failing test:
    the property, the input, the hint) holds none of the values the reference returns on the
    input shown: a number of the feedback of two significant digits or more that is one of
    them rounded at its own decimals, and no input value, is an expected value given away."""
    reference = {}
    looked = 0
    for entry in (e for e in ENTRIES if e.kind == "wrong"):
        report = graded[entry.key]
        fs = report.functions[entry.function]
        text = fs.feedback()
        for t in fs.tests:
            example = t.counterexample or {}
            args = _shown_input(example.get("input", "")) if not t.passed else None
            if args is None:
                continue
            if entry.function not in reference:
                reference[entry.function] = _reference_function(entry.function)
            try:
                want = reference[entry.function](**args)
            except Exception:  # noqa: BLE001 (an input the reference refuses shows no value)
                continue
            inputs = set(_values(list(args.values())))
            secret = [v for v in _values(want) if v != round(v) and v not in inputs]
            looked += 1
            for number in _NUMBER.finditer(text):
                decimals = len(number[1])
                digits = number[0].lstrip("-").replace(".", "").strip("0")
                if decimals < 2 or "e" in number[0] or len(digits) < 2:
                    continue  # a round number (0.001, 0.5) says nothing of a value
                value = float(number[0])
                leaked = [v for v in secret if round(v, decimals) == value]
                assert not leaked, f"{entry.key}, {t.test}: {number[0]} is the reference's"
    assert looked >= 150, looked  # 209 failing tests with a shown input (December)
