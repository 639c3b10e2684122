"""`nbgrader export` for the course (nbgrader_config.py sets it: `c.ExportApp.plugin_class`):
nbgrader's CSV of every student and assignment, quoted as CSV is and each cell made inert
(attention_course/inert.py), with what the gradebook records of each submission's last grading
beside its score: `status` and `reason`. A submission whose scores are not reliable (its grading
failed or did not finish, outcomes.UNRELIABLE) gets no score at all (the cells left empty,
never 0 nor an earlier version's score) and the status "not reliable"; one not graded keeps its
0 with the reason.
"""

from __future__ import annotations

import csv

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import CsvExportPlugin

from attention_course.inert import csv_row

COLUMNS = [
    "assignment",
    "duedate",
    "timestamp",
    "student_id",
    "last_name",
    "first_name",
    "email",
    "raw_score",
    "late_submission_penalty",
    "score",
    "max_score",
    "status",
    "reason",
]
NOT_RELIABLE = "not reliable"


def _status(record: dict) -> tuple[str, str]:
    """(status, reason) of a submission from its record in the gradebook."""
    from attention_course.classgrade.outcomes import FAILED, UNRELIABLE

    status = record.get("status", "")
    if status in UNRELIABLE:
        why = record.get("reason") or ""
        if status == FAILED:
            why = f"grading failed: {why}"
        return NOT_RELIABLE, why or "being graded, or its grading did not finish"
    return status, record.get("reason") or ""


class CsvExport(CsvExportPlugin):
    """nbgrader's CSV export, each row with the submission's status and reason, and no score
    where the gradebook's is not reliable."""

    def export(self, gradebook: Gradebook) -> None:
        from attention_course.classgrade.gradebook import Records

        dest = self.to or "grades.csv"
        students = {str(s) for s in self.student}
        assignments = {str(a) for a in self.assignment}
        db_url = self.parent.coursedir.db_url
        self.log.info("Exporting grades to %s", dest)
        with open(dest, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, quoting=csv.QUOTE_MINIMAL)
            writer.writerow(COLUMNS)
            for assignment in gradebook.assignments:
                if assignments and assignment.name not in assignments:
                    continue
                records = Records(db_url, gradebook.course_id, assignment.name)
                try:
                    recorded = records.all()
                finally:
                    records.close()
                for student in gradebook.students:
                    if students and student.id not in students:
                        continue
                    writer.writerow(csv_row(self._row(gradebook, assignment, student, recorded)))

    @staticmethod
    def _row(gradebook: Gradebook, assignment, student, recorded: dict[str, dict]) -> list:
        row: dict = {
            "assignment": assignment.name,
            "duedate": assignment.duedate,
            "student_id": student.id,
            "last_name": student.last_name,
            "first_name": student.first_name,
            "email": student.email,
            "max_score": assignment.max_score,
        }
        try:
            submission = gradebook.find_submission(assignment.name, student.id)
            if not submission.notebooks:  # an extension given before anything was handed in
                raise MissingEntry()
        except MissingEntry:  # nothing handed in: 0, as nbgrader exports it
            row.update(timestamp="", raw_score=0.0, late_submission_penalty=0.0, score=0.0)
            row.update(status="no submission", reason="")
        else:
            penalty = submission.late_submission_penalty
            row.update(timestamp=submission.timestamp, raw_score=submission.score)
            row.update(late_submission_penalty=penalty)
            row["score"] = max(0.0, submission.score - (penalty or 0.0))
            row["status"], row["reason"] = _status(recorded.get(student.id, {}))
            if row["status"] == NOT_RELIABLE:
                row.update(raw_score="", late_submission_penalty="", score="")
        return ["" if row.get(key) is None else str(row[key]) for key in COLUMNS]
