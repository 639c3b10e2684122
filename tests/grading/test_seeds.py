"""The graders' inputs are drawn per submission from a secret key of the grading side."""

from __future__ import annotations

import json
import stat
from types import SimpleNamespace

import numpy as np
import pytest

from attention_course.grading import harness, runner, seeds
from attention_course.grading.feedback import cell_feedback
from attention_course.settings import GRADING_KEY_ENV
from tests.conftest import grade_reference_variants
from tests.course import COURSE, REFERENCE_FILE
from tests.direct_grading import grade_here


@pytest.fixture
def course(tmp_path, monkeypatch):
    monkeypatch.delenv(GRADING_KEY_ENV, raising=False)
    return SimpleNamespace(root=tmp_path / "course", id="a-course")


def test_the_key_is_made_once_readable_by_its_owner_only(course):
    course.root.mkdir()
    key = seeds.grading_key(course)
    path = course.root / ".grading" / "grading.key"
    assert len(key) == 32 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert seeds.grading_key(course) == key  # read back, not made again
    other = SimpleNamespace(root=course.root.parent / "other", id="a-course")
    (other.root).mkdir()
    assert seeds.grading_key(other) != key  # each course its own


def test_the_environment_gives_the_key(course, monkeypatch):
    monkeypatch.setenv(GRADING_KEY_ENV, "ab" * 16)
    assert seeds.grading_key(course) == bytes.fromhex("ab" * 16)
    assert not course.root.exists()  # no key file made
    for bad in ("not hex", "abcd"):
        monkeypatch.setenv(GRADING_KEY_ENV, bad)
        with pytest.raises(seeds.GradingKeyError, match=GRADING_KEY_ENV):
            seeds.grading_key(course)


def test_each_submission_has_its_own_seed_under_each_key(course, tmp_path, monkeypatch):
    a, b = tmp_path / "a.ipynb", tmp_path / "b.ipynb"
    a.write_text("one")
    b.write_text("two")
    monkeypatch.setenv(GRADING_KEY_ENV, "01" * 16)
    seed = seeds.submission_seed(course, "attention_basics", a)
    assert seeds.SEED.fullmatch(seed)
    assert seeds.submission_seed(course, "attention_basics", a) == seed  # reproducible
    assert seeds.submission_seed(course, "attention_basics", b) != seed
    assert seeds.submission_seed(course, "masks_and_heads", a) != seed
    monkeypatch.setenv(GRADING_KEY_ENV, "02" * 16)
    assert seeds.submission_seed(course, "attention_basics", a) != seed  # the key is the secret


def test_the_seed_follows_the_files_bytes_not_its_name(course, tmp_path, monkeypatch):
    """Every student's notebook has the same name: the seed is the file's content's. The same
    bytes under two names give one seed; other bytes under one name give another."""
    monkeypatch.setenv(GRADING_KEY_ENV, "01" * 16)
    one, two = tmp_path / "alice", tmp_path / "bob"
    one.mkdir()
    two.mkdir()
    (one / "attention_basics.ipynb").write_text("the same notebook")
    (two / "other-name.ipynb").write_text("the same notebook")
    same = [
        seeds.submission_seed(course, "attention_basics", p / n)
        for p, n in ((one, "attention_basics.ipynb"), (two, "other-name.ipynb"))
    ]
    assert same[0] == same[1]
    (two / "attention_basics.ipynb").write_text("another notebook")
    other = seeds.submission_seed(course, "attention_basics", two / "attention_basics.ipynb")
    assert other != same[0]


def test_a_seed_given_by_hand_is_checked():
    assert seeds.check_seed(" " + "AB" * 16 + "\n") == "ab" * 16
    for bad in ("", "12", "g" * 32, "1" * 33):
        with pytest.raises(ValueError, match="32 hex digits"):
            seeds.check_seed(bad)


def test_the_seed_is_recorded_for_the_instructor(course):
    course.root.mkdir()
    path = seeds.record(course, "attention_basics", "alice", "attention_basics", "1" * 32)
    seeds.record(course, "attention_basics", "alice", "extra", "2" * 32)
    assert path == course.root / ".grading" / "seeds" / "attention_basics" / "alice.json"
    assert json.loads(path.read_text()) == {"attention_basics": "1" * 32, "extra": "2" * 32}
    for student in ("../x", ".hidden", ""):
        with pytest.raises(ValueError):
            seeds.record(course, "attention_basics", student, "n", "1" * 32)


def _softmax_inputs(seed):
    """The first argument of every softmax call the graders make for `seed`."""
    calls = runner.collect(COURSE, ["softmax"], seed)[1]
    return [c.args[0] for c in calls if c.function == "softmax"]


def test_random_inputs_follow_the_seed_and_hand_written_ones_do_not():
    fixed, again = _softmax_inputs(None), _softmax_inputs(None)
    one, one_again, two = (
        _softmax_inputs("1" * 32),
        _softmax_inputs("1" * 32),
        _softmax_inputs("2" * 32),
    )
    for a, b in ((fixed, again), (one, one_again)):  # the same seed, the same inputs
        assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    same = [
        np.shape(x) == np.shape(y) and np.array_equal(x, y) for x, y in zip(one, two, strict=True)
    ]
    assert not all(same) and any(same)  # drawn ones differ, hand-written ones do not
    large = np.array([[1000.0, 1001.0], [-1000.0, -1001.0]])  # hand-written
    assert any(np.array_equal(x, large) for x in two)
    assert sum(same) <= 3  # few are hand-written: the rest is drawn anew
    # the graders' source is given each time: nothing of it lives in the engine between two
    assert not hasattr(harness, "rng") and not hasattr(harness, "set_seed")


def _literal(x: np.ndarray) -> str:
    return (
        f"np.frombuffer(bytes.fromhex({x.tobytes().hex()!r}), {x.dtype.str!r}).reshape({x.shape})"
    )


# A softmax that is wrong everywhere but on the inputs the softmax grader draws with no seed (its
# own fixed one), which the student has guessed or seen.
KNOWS_THE_DEFAULT_INPUTS = f"""
_known = [{", ".join(_literal(np.asarray(x)) for x in _softmax_inputs(None))}]
_right = softmax
def softmax(z, axis=-1):
    if any(np.shape(z) == k.shape and np.array_equal(z, k, equal_nan=True) for k in _known):
        return _right(z, axis)
    return np.full(np.shape(z), 0.5)
"""
PLAIN = """
def softmax(z, axis=-1):
    return np.full(np.shape(z), 0.5)
"""


@pytest.fixture(scope="module")
def special_cased(tmp_path_factory):
    variants = {
        "knows": ("attention_basics", ["softmax"], KNOWS_THE_DEFAULT_INPUTS),
        "plain": ("attention_basics", ["softmax"], PLAIN),
    }
    return grade_reference_variants(tmp_path_factory.mktemp("seeds"), variants)


def test_knowing_the_default_inputs_gains_nothing_under_the_secret_seed(special_cased):
    knows, plain = (special_cased[k].functions["softmax"] for k in ("knows", "plain"))
    assert special_cased["knows"].seed != special_cased["plain"].seed  # each its own
    assert [t.passed for t in knows.tests] == [t.passed for t in plain.tests]
    assert knows.score == plain.score < plain.max_score
    shown = cell_feedback(special_cased["knows"], "softmax") + knows.feedback()
    assert special_cased["knows"].seed not in shown  # for the instructor only
    # with the graders' own fixed seeds, the trick would have paid
    program = [("variant", REFERENCE_FILE.read_text() + KNOWS_THE_DEFAULT_INPUTS)]
    fixed = grade_here(COURSE, program, "softmax", None)
    assert sum(fixed.values()) > sum(t.passed for t in knows.tests)
