"""How Canvas's and Moodle's gradebooks read an imported CSV, ported from their code for the
tests (neither runs here: Canvas is Ruby, Moodle PHP). Each rule names the code it follows;
the tests read `attention-course lms csv`'s files with these, as the LMS would."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field


class ImportAborted(Exception):
    """The LMS stops the whole import (Moodle does at the first bad row)."""


# --- Canvas: lib/gradebook_importer.rb (GradebookImporter) ---------------------------------------


@dataclass
class CanvasUser:
    id: int
    name: str
    sis_user_id: str = ""
    login_id: str = ""


@dataclass
class CanvasImport:
    points_possible: dict[str, str] = field(default_factory=dict)  # column -> points
    grades: dict[str, dict[int, str]] = field(default_factory=dict)  # column -> user -> grade
    new_students: list[str] = field(default_factory=list)  # rows matched to no user


def canvas_delimiter(lines: list[str]) -> str:
    """identify_delimiter: ';' when it splits the first lines into more fields, consistently,
    than ',' does; else ','."""
    counts = {}
    for sep in (";", ","):
        sizes = {len(next(csv.reader([line], delimiter=sep))) for line in lines[:3]}
        counts[sep] = sizes.pop() if len(sizes) == 1 else 0
    return ";" if counts[";"] > counts[","] else ","


def canvas_decimal(field_text: str) -> str:
    """CSV::Converters[:decimal_comma_to_period]: a pure number with a decimal comma or
    thousands separators is normalised; anything else is kept."""
    if re.fullmatch(r"-?[0-9.,]+%?", field_text):
        parts = re.split(r"[,.]", field_text)
        last = parts.pop()
        return last if not parts else "".join(parts) + "." + last
    return field_text


def canvas_read(text: str, users: list[CanvasUser]) -> CanvasImport:
    """GradebookImporter#parse!, for what a CSV of scores uses: the header (row_has_student_
    headers?: Student then ID; update_column_count: SIS User ID and SIS Login ID; the last
    student column holds Section), the "Points Possible" row (process_pp), each student row
    (process_student: by ID, else SIS User ID, else SIS Login ID, else name, else a new
    student) and its grades (process_submissions: the cell stripped)."""
    lines = [ln for ln in text.splitlines() if not re.fullmatch(r"[;, ]+", ln)]  # skip_lines
    rows = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=canvas_delimiter(lines)))
    header = rows[0]
    if not (len(header) > 3 and "Student" in header[0] and "ID" in header[1]):
        raise ImportAborted("Invalid header row")
    student_columns, sis_user, sis_login = 3, None, None
    if re.search(r"SIS\s+Login\s+ID", header[2]):
        sis_login, student_columns = 2, 4
    elif re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3]):
        sis_user, sis_login, student_columns = 2, 3, 5
    if "Section" not in header[student_columns - 1]:
        raise ImportAborted("Invalid header row")
    non_assignment = re.compile("Current Score|Current Points|Current Grade|Final Score|"
                                "Final Points|Final Grade|Override Score|Override Grade|"
                                "Override Status")  # fmt: skip
    columns = [
        (i, name) for i, name in enumerate(header)
        if i >= student_columns and not non_assignment.search(name)
    ]  # fmt: skip
    found = CanvasImport(grades={name: {} for _, name in columns})
    by_id = {u.id: u for u in users}
    for row in rows[1:]:
        row = [canvas_decimal(c) for c in row]
        if row and "Points Possible" in row[0]:
            found.points_possible = {name: row[i] for i, name in columns if row[i]}
            continue
        if all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", c, re.I) for c in row):
            continue
        user = by_id.get(int(row[1])) if row[1].strip().isdigit() else None
        if user is None and sis_user is not None and row[sis_user]:
            user = next((u for u in users if u.sis_user_id == row[sis_user]), None)
        if user is None and sis_login is not None and row[sis_login]:
            user = next((u for u in users if u.login_id == row[sis_login]), None)
        if user is None:
            user = next((u for u in users if u.name == row[0]), None)
        if user is None:
            found.new_students.append(row[0])
            continue
        for i, name in columns:
            found.grades[name][user.id] = (row[i] if i < len(row) else "").strip()
    return found


def canvas_no_score(value: str) -> bool:
    """no_score?: blank or "-"."""
    return value.strip() in ("", "-")


# --- Moodle: grade/import/csv/classes/load_data.php (gradeimport_csv_load_data) ----------------

MOODLE_USER_FIELDS = {"userid": "id", "useridnumber": "idnumber", "useremail": "email",
                      "username": "username"}  # map_user_data_with_value's $userfields  # fmt: skip
MOODLE_GRADE_MAX = 100  # insert_grade_record: the maximum grade without $CFG->unlimitedgrades


def moodle_read(
    text: str, map_from: str, map_to: str, users: list[dict], items: dict[str, str],
) -> dict[int, dict[str, float | None]]:  # fmt: skip
    """prepare_import_grade_data with the mapping a teacher picks: `map_from` (a column) is
    the user's `map_to` field; `items` maps other columns to grade items ("new" for a new grade
    item). Per line: a line of one field or less is skipped; values are trimmed; the user
    column, when not empty, must name an existing user (else the whole import stops,
    usermappingerror), and an empty one keeps the previous line's user ($this->studentid is
    not reset); a line with no user at all stops the import. Existing items: '' or '-' is no
    grade (null), else the number (unformat_float; otherwise badgrade stops it); new items:
    '-' is left out (import_new_grade_item). A grade over MOODLE_GRADE_MAX stops it."""
    rows = list(csv.reader(io.StringIO(text)))
    header = [h.strip() for h in rows[0]]  # trim_headers
    field_name = MOODLE_USER_FIELDS[map_to]
    found: dict[int, dict[str, float | None]] = {}
    student = None
    for line in rows[1:]:
        if len(line) <= 1:
            continue
        grades: dict[str, float | None] = {}
        for key, value in enumerate(line):
            value = value.strip()
            column = header[key]
            if column == map_from:
                if value:
                    match = [u for u in users if str(u.get(field_name)) == value]
                    if not match:
                        raise ImportAborted(f"usermappingerror: {map_to} {value}")
                    student = match[0]["id"]
            elif items.get(column) == "new":
                if value != "-":
                    grades[column] = float(value)
            elif column in items:
                if value in ("", "-"):
                    grades[column] = None
                else:
                    try:
                        grades[column] = float(value)
                    except ValueError:
                        raise ImportAborted("badgrade") from None
        if student is None:
            raise ImportAborted("usermappingerrorusernotfound")
        for grade in grades.values():
            if grade is not None and grade > MOODLE_GRADE_MAX:
                raise ImportAborted("gradevaluetoobig")
        found.setdefault(student, {}).update(grades)
    return found
