"""`attention-course lms csv`'s files read as Canvas's and Moodle's gradebook importers read
them (tests/integrations/gradebook_import_rules.py, each rule naming its source): every student
found by the LMS's ids (from the hub's launches, a roster, or the nbgrader id as the login),
each score as the course's other tables give it (the late penalty off once), no number where
there is none (never a 0), the maximum as Canvas's points possible."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from attention_course.integrations.lms import csv_export, files
from attention_course.integrations.lms.identity import Decision
from attention_course.integrations.lms.scores import (
    GRADED,
    NOT_GRADED,
    PENDING,
    AssignmentGrades,
    LmsGrade,
)
from tests.integrations.gradebook_import_rules import (
    CanvasUser,
    ImportAborted,
    canvas_no_score,
    canvas_read,
    moodle_read,
)

WHEN = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
BASICS = AssignmentGrades(
    "attention_basics",
    35.0,
    (
        LmsGrade("lti-ada", GRADED, 35.0, 35.0, 0.0, WHEN),
        LmsGrade("lti-grace", GRADED, 31.5, 35.0, 3.5, WHEN),  # late: 35 less its 3.5
        LmsGrade("lti-hal", PENDING, None, submitted_at=WHEN, reason="not graded yet"),
        LmsGrade("lti-bob", NOT_GRADED, 0.0, 0.0, 0.0, WHEN, "not valid JSON"),
    ),
)
HEADS = AssignmentGrades(
    "masks_and_heads", 60.0, (LmsGrade("lti-ada", GRADED, 59.333333, 59.333333, 0.0, WHEN),)
)
CANVAS_USERS = [
    CanvasUser(101, "Ada Lovelace", "SIS-1", "ada"),
    CanvasUser(102, "Grace Hopper", "SIS-2", "grace"),
    CanvasUser(103, "Hal Abelson", "SIS-3", "hal"),
    CanvasUser(104, "Bob", "SIS-4", "bob"),
]


def _launched(root: Path, student: str, **ids: str) -> None:
    decision = Decision(student, False, f"sub-{student}", student, None, "d1", "c1", "", ids)
    files.record_launch(root, decision)


def _students(sets) -> list[str]:
    return sorted({g.student for s in sets for g in s.grades})


@pytest.fixture
def course(tmp_path: Path) -> Path:
    root = tmp_path / "course"
    root.mkdir()
    students = ("lti-ada", "lti-grace", "lti-hal", "lti-bob")
    for student, user in zip(students, CANVAS_USERS, strict=True):
        _launched(root, student, lms_user_id=str(user.id), login_id=user.login_id)
    return root


def test_canvas_finds_every_student_and_reads_each_score(course: Path):
    sets = [BASICS, HEADS]
    who, notes = csv_export.people(course, _students(sets))
    read = canvas_read(csv_export.canvas(sets, who).text, CANVAS_USERS)
    assert read.new_students == [] and not notes
    assert read.points_possible == {"attention_basics": "35", "masks_and_heads": "60"}
    basics = read.grades["attention_basics"]
    assert basics[101] == "35" and basics[102] == "31.5" and basics[104] == "0"
    assert canvas_no_score(basics[103]), "a submission not graded yet was given a number"
    assert read.grades["masks_and_heads"][101] == "59.33"  # two decimals, as Canvas compares
    assert canvas_no_score(read.grades["masks_and_heads"][102])


def test_canvas_matches_by_login_when_nothing_else_is_known(tmp_path: Path):
    root = tmp_path / "course"
    root.mkdir()
    grades = AssignmentGrades("attention_basics", 35.0, (LmsGrade("ada", GRADED, 30.0, 30.0),))
    who, notes = csv_export.people(root, ["ada"])
    read = canvas_read(csv_export.canvas([grades], who).text, CANVAS_USERS)
    assert read.grades["attention_basics"] == {101: "30"} and read.new_students == []
    assert "nbgrader id as their LMS login" in notes[0]


def test_a_roster_gives_the_lms_ids_and_its_text_stays_inert(tmp_path: Path):
    root = tmp_path / "course"
    root.mkdir()
    roster = tmp_path / "canvas-export.csv"
    roster.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section\n"
        '"=HYPERLINK(""http://x"")",101,SIS-1,a.lovelace,Attention\n'
    )
    grades = AssignmentGrades("attention_basics", 35.0, (LmsGrade("ada", GRADED, 30.0, 30.0),))
    listed = csv_export.read_roster(roster, "SIS Login ID")
    who, _ = csv_export.people(root, ["ada"], listed)
    assert who["ada"]["login_id"] == "ada"  # the roster's row is matched by --match only
    who, _ = csv_export.people(root, ["a.lovelace"], listed)
    grades = AssignmentGrades("attention_basics", 35.0, (LmsGrade("a.lovelace", GRADED, 30.0),))
    text = csv_export.canvas([grades], who).text
    assert "'=HYPERLINK" in text, "a roster's formula went into the file as a formula"
    assert canvas_read(text, CANVAS_USERS).grades["attention_basics"] == {101: "30"}


def test_moodle_imports_every_row_by_the_chosen_identity(course: Path):
    sets = [BASICS]
    who, _ = csv_export.people(course, _students(sets))
    users = [{"id": u.id, "username": u.login_id, "idnumber": u.sis_user_id} for u in CANVAS_USERS]
    for map_to in ("userid", "username"):
        made = csv_export.moodle(sets, who, map_to)
        read = moodle_read(made.text, map_to, map_to, users, {"attention_basics": "7"})
        assert read == {
            101: {"attention_basics": 35.0},
            102: {"attention_basics": 31.5},
            103: {"attention_basics": None},  # no grade, never 0
            104: {"attention_basics": 0.0},
        }, map_to
        new = moodle_read(made.text, map_to, map_to, users, {"attention_basics": "new"})
        assert 103 not in new or "attention_basics" not in new[103]


def test_moodle_rows_never_lack_the_identity(course: Path):
    """An empty identity gives Moodle's previous row's user the grades: such a student is left
    out and said, never written."""
    sets = [BASICS]
    who, _ = csv_export.people(course, _students(sets))
    made = csv_export.moodle(sets, who, "useridnumber")  # nobody's idnumber is known
    assert made.students == 0 and len(made.left_out) == 4
    assert made.text.strip() == "useridnumber,attention_basics"
    with pytest.raises(ImportAborted, match="usermappingerror"):
        bad = "username,attention_basics\r\nnobody-here,3\r\n"
        moodle_read(bad, "username", "username", [], {"attention_basics": "7"})
