"""Known sources: the course's own (course.toml's [similarity] base, this course's course text)
and `--base PATH...` (a file, a notebook, a folder). What students share because it is in one
counts as common and is shown as from it; a source that cannot be read is one line, exit 2."""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest

from attention_course.classgrade.nbgrader_api import copy_course
from attention_course.course import Course
from attention_course.errors import UserError
from attention_course.settings import SIMILARITY
from attention_course.similarity.base import BaseError, base_kgrams, read_source
from attention_course.similarity.compare import compare_class
from tests.course import COURSE_ROOT
from tests.similarity import realistic
from tests.similarity.realistic import ASSIGNMENT

SMALL = ["dmitri", "paolo", "amara", "bilal", "chen", "hana", "kofi", "omar", "sven", "wen"]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = copy_course(tmp_path_factory.mktemp("base") / "course", COURSE_ROOT)
    cells = realistic.write_class(root, SMALL)
    return root, cells


def test_the_course_declares_the_course_text_as_a_known_source():
    ((name, path),) = Course.load(COURSE_ROOT).similarity_base
    assert name == "the course text" and path == COURSE_ROOT / "source" / "course_text.py"
    source = read_source(path, name)
    # the whole file, and each function alone (chapter and week: two softmax definitions)
    assert len(source.pieces) == 1 + 7
    assert sum(p.startswith("def softmax(") for p in source.pieces) == 2
    parts = Course.load(COURSE_ROOT).parts()  # a copy of the course carries it
    assert any(path.is_relative_to(part) for part in parts)


def test_a_python_file_a_notebook_and_a_folder_are_read(tmp_path):
    code = "def softmax(z, axis=-1):\n    return np.exp(z) / np.exp(z).sum()\n"
    (tmp_path / "last_year.py").write_text(code)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# notes"), nbformat.v4.new_code_cell(code)]
    nbformat.write(nb, tmp_path / "repo.ipynb")
    (tmp_path / "README.md").write_text("not code")
    py = read_source(tmp_path / "last_year.py")
    book = read_source(tmp_path / "repo.ipynb")
    folder = read_source(tmp_path)
    assert py.name == "last_year.py" and py.pieces == (code, code.strip())
    assert book.pieces == (code, code.strip())
    assert folder.name == tmp_path.name and len(folder.pieces) == 4  # both files, not README
    hashes = base_kgrams([py], ("softmax", "causal_mask"), {})
    assert hashes["softmax"] and set(hashes["softmax"].values()) == {"last_year.py"}
    # normalised for another function, the softmax's name is a placeholder: other k-grams
    assert hashes["causal_mask"] and hashes["causal_mask"].keys() != hashes["softmax"].keys()


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: p / "missing.py", "no such file or folder"),
        (
            lambda p: (p / "notes.txt").write_text("x") and p / "notes.txt",
            "must be a .py or .ipynb",
        ),
        (lambda p: (p / "bad.ipynb").write_text("{not json") and p / "bad.ipynb", "not valid JSON"),
        (lambda p: (p / "list.ipynb").write_text("[1, 2]") and p / "list.ipynb", "no cells"),
        (lambda p: (p / "bin.py").write_bytes(b"\xff\xfe\x00") and p / "bin.py", "not UTF-8"),
        (lambda p: (p / "empty").mkdir() or p / "empty", "no .py or .ipynb file"),
    ],
)
def test_a_source_that_cannot_be_read_is_named_with_the_reason(tmp_path, make, message):
    path = make(tmp_path)
    with pytest.raises(BaseError, match=message) as caught:
        read_source(path)
    assert str(path) in str(caught.value) and isinstance(caught.value, UserError)


def test_too_large_a_source_is_refused(tmp_path):
    path = tmp_path / "huge.py"
    path.write_text("x = 1\n" * (SIMILARITY.base_bytes // 6 + 10))
    with pytest.raises(BaseError, match="more than"):
        read_source(path)


def test_a_pair_who_both_took_a_known_source_is_not_a_pair(course, tmp_path):
    """Both handed in last year's solution (dmitri's code): with it declared, they share
    nothing of their own; the lines are shown as from it."""
    root, cells = course
    (tmp_path / "last_year.py").write_text("\n\n".join(cells["dmitri"].values()))
    before = compare_class(ASSIGNMENT, root)
    after = compare_class(ASSIGNMENT, root, base=[tmp_path / "last_year.py"])
    assert before.score("dmitri", "paolo") == pytest.approx(1.0)
    assert after.score("dmitri", "paolo") < 0.05
    assert after.known == ["the course text", "last_year.py"]
    shown = after.known_lines[("paolo", "softmax")]
    assert "last_year.py" in shown.values()
    assert not any({p.a, p.b} == {"dmitri", "paolo"} for p in after.pairs)


def test_the_course_text_can_be_left_out(course):
    root, _ = course
    found = compare_class(ASSIGNMENT, root, course_base=False)
    assert found.known == [] and not any(
        "the course text" in lines.values() for lines in found.known_lines.values()
    )


def test_the_command_takes_base_and_refuses_a_missing_one(course, tmp_path):
    root, cells = course
    (tmp_path / "last_year.py").write_text(cells["dmitri"]["softmax"])
    run = [sys.executable, "-m", "attention_course.cli.main", "similarity", ASSIGNMENT]
    run += ["--course", str(root), "--out", str(tmp_path / "out")]
    ok = subprocess.run(
        run + ["--base", str(tmp_path / "last_year.py")], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stderr
    assert "known sources: the release, the course text, last_year.py" in ok.stdout
    missing = subprocess.run(
        run + ["--base", str(tmp_path / "nowhere.py")], capture_output=True, text=True
    )
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert (
        missing.stderr.strip()
        .splitlines()[-1]
        .endswith(f"{tmp_path / 'nowhere.py'}: no such file or folder (a known source)")
    )
    plain = subprocess.run(run + ["--no-course-base"], capture_output=True, text=True)
    assert plain.returncode == 0 and "known sources: the release, no other" in plain.stdout


@pytest.mark.parametrize(
    "table, message",
    [
        ('[similarity]\nbase = "source/course_text.py"\n', 'a table of "name" = "path"'),
        ("[similarity]\nbases = {}\n", "bases: not a setting"),
        ("similarity = 3\n", "[similarity] must be a table"),
    ],
)
def test_a_wrong_similarity_table_in_course_toml_is_one_line(tmp_path, table, message):
    root = copy_course(tmp_path / "course", COURSE_ROOT)
    text = (root / "course.toml").read_text()
    text = text[: text.index("[similarity]")]
    (root / "course.toml").write_text(table + text if "[" not in table else text + table)
    with pytest.raises(UserError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Course.load(root)


def test_every_function_of_a_source_counts_whatever_its_name():
    """The week's `attention` (never called `scaled_dot_product_attention`) is in the base of
    scaled_dot_product_attention: a source's functions are kept even when nothing calls them."""
    from attention_course.similarity.fingerprint import kgram_hashes
    from attention_course.similarity.normalise import normalise

    ((name, path),) = Course.load(COURSE_ROOT).similarity_base
    function = "scaled_dot_product_attention"
    base = base_kgrams([read_source(path, name)], (function,), {})[function]
    handed = (
        f"def {function}(Q, K, V, mask=None):\n"
        "    d_k = K.shape[-1]\n"
        "    scores = Q @ K.T / np.sqrt(d_k)\n"
        "    weights = softmax(scores)\n"
        "    return weights @ V\n"
    )
    labels = normalise(handed, function).labels
    body = labels[labels.index("Return") :]  # the signature differs: a parameter more
    grams = kgram_hashes(body, SIMILARITY.kgram)
    assert len(grams) > 5 and all(h in base for h in grams)
