"""The course's grades as a CSV that the LMS's gradebook imports (without LTI, or beside it):
per assignment or for the whole course, each student's row with the LMS's ids of the student.

Canvas (Grades > Import; canvas-lms lib/gradebook_importer.rb reads it): the columns
`Student, ID, SIS User ID, SIS Login ID, Section`, then one column per assignment named by its
title (an existing Canvas assignment of that title takes the scores; otherwise Canvas offers to
make it), and a second row `Points Possible` with each assignment's maximum. Canvas finds the
student by ID (its user id), else SIS User ID, else SIS Login ID, else the name. A score is a
number; no score yet is an empty cell.

Moodle (Grades > Import > CSV file; grade/import/csv/classes/load_data.php): one column of the
students' Moodle identity, named after the Moodle field it holds (`userid`, `username`,
`useridnumber` or `useremail`: choose the same under "Map to"), then one column per assignment
(map each to its grade item, or "new grade item"). No score yet is "-". Moodle stops the whole
import at a user it does not know, and gives a row with an empty identity the previous row's
user: every row has the identity, and a student without one is left out (and said).

The LMS's ids of each student, best first: a roster (`--roster`, the LMS's own gradebook or
participants export, its `--match` column holding the nbgrader ids), the hub's recorded
launches (files.py), else the nbgrader id itself taken as the LMS login (said in the output).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from attention_course.errors import UserError
from attention_course.inert import csv_cell
from attention_course.integrations.lms import files
from attention_course.integrations.lms.scores import AssignmentGrades
from attention_course.settings import LMS, SCORE_DECIMALS, Lms

CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_POINTS = "Points Possible"
MOODLE_FIELDS = ("userid", "username", "useridnumber", "useremail")
MOODLE_NO_GRADE = "-"
# A person's ids, by our name; the columns of a roster (LMS exports) that hold each.
ROSTER_COLUMNS = {
    "name": ("Student", "Name", "Full name"),
    "lms_user_id": ("ID", "User ID", "userid"),
    "sis_id": ("SIS User ID", "ID number", "idnumber"),
    "login_id": ("SIS Login ID", "Username", "username"),
    "section": ("Section",),
    "email": ("Email address", "Email", "email"),
}
MOODLE_ID = {"userid": "lms_user_id", "username": "login_id", "useridnumber": "sis_id",
             "useremail": "email"}  # fmt: skip


@dataclass
class CsvExport:
    text: str
    students: int
    left_out: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def number(score: float) -> str:
    """A score as both importers read it: a plain decimal, at most SCORE_DECIMALS places."""
    return f"{round(score, SCORE_DECIMALS):.{SCORE_DECIMALS}f}".rstrip("0").rstrip(".")


def people(
    root: Path, students: list[str], roster: dict[str, dict[str, str]] | None = None,
    settings: Lms = LMS,
) -> tuple[dict[str, dict[str, str]], list[str]]:  # fmt: skip
    """student id -> the LMS's ids of the student, and notes on where they came from."""
    found: dict[str, dict[str, str]] = {s: {} for s in students}
    notes = []
    for user in files.launches(root, settings).get("users", {}).values():
        student = user.get("student_id")
        if student in found:
            found[student].update(user.get("lms_ids", {}))
    if roster is not None:
        for student, ids in roster.items():
            if student in found:
                found[student].update({k: v for k, v in ids.items() if v})
    for student, ids in found.items():
        if not ids.get("login_id"):
            ids["login_id"] = student
            ids["login_from_id"] = "yes"
    if any(ids.get("login_from_id") for ids in found.values()):
        notes.append(
            "students with no LMS ids from a roster or a launch have their nbgrader id as their "
            "LMS login (SIS Login ID, username)"
        )
    return found, notes


def read_roster(path: Path, match: str | None) -> dict[str, dict[str, str]]:
    """A roster (the LMS's own export): its `match` column's value -> the LMS's ids there."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: not readable ({exc})") from None
    rows = list(csv.DictReader(io.StringIO(text)))
    headers = list(rows[0]) if rows else []
    if not match or match not in headers:
        raise UserError(
            f"{path}: give --match, the column holding the nbgrader ids "
            f"(its columns: {', '.join(headers) or 'none'})"
        )
    found = {}
    for row in rows:
        key = (row.get(match) or "").strip()
        if not key:
            continue
        ids = {}
        for name, columns in ROSTER_COLUMNS.items():
            value = next((row[c].strip() for c in columns if (row.get(c) or "").strip()), "")
            ids[name] = value
        found[key] = ids
    return found


def canvas(sets: list[AssignmentGrades], who: dict[str, dict[str, str]]) -> CsvExport:
    """Canvas's gradebook import file (see the module)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([*CANVAS_IDENTITY, *(s.assignment for s in sets)])
    writer.writerow([CANVAS_POINTS, "", "", "", "", *(number(s.maximum) for s in sets)])
    by_student = _cells(sets, "")
    for student in sorted(by_student):
        ids = who.get(student, {"login_id": student})
        identity = [ids.get("name") or student, ids.get("lms_user_id", ""), ids.get("sis_id", ""),
                    ids.get("login_id", ""), ids.get("section", "")]  # fmt: skip
        writer.writerow([*(csv_cell(v) for v in identity), *by_student[student]])
    return CsvExport(out.getvalue(), len(by_student))


def moodle(
    sets: list[AssignmentGrades], who: dict[str, dict[str, str]], field_name: str
) -> CsvExport:
    """Moodle's gradebook import file, its identity column `field_name` (see the module)."""
    if field_name not in MOODLE_FIELDS:
        raise UserError(f"--moodle-id must be one of {', '.join(MOODLE_FIELDS)}")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([field_name, *(s.assignment for s in sets)])
    by_student = _cells(sets, MOODLE_NO_GRADE)
    left_out = []
    for student in sorted(by_student):
        identity = who.get(student, {}).get(MOODLE_ID[field_name], "")
        if not identity:
            left_out.append(f"{student}: left out: no Moodle {field_name} known")
            continue
        writer.writerow([csv_cell(identity), *by_student[student]])
    return CsvExport(out.getvalue(), len(by_student) - len(left_out), left_out)


def _cells(sets: list[AssignmentGrades], no_grade: str) -> dict[str, list[str]]:
    """student -> their cell in each assignment's column (a score, or `no_grade`)."""
    students = sorted({g.student for s in sets for g in s.grades})
    cells = {}
    for student in students:
        row = []
        for s in sets:
            grade = next((g for g in s.grades if g.student == student), None)
            row.append(no_grade if grade is None or grade.score is None else number(grade.score))
        cells[student] = row
    return cells
