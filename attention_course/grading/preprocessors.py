"""nbgrader preprocessors: check the submission, run it in the sandbox, grade outside it.

`CheckSubmission` (first of the sanitizing steps) refuses a submission folder that holds a
symbolic link, a special file or an oversized notebook, before anything reads it further.
`SandboxedExecute` replaces nbgrader's `Execute`: the notebook's cells run in an IPython shell
inside the sandbox (no Jupyter kernel, see execute.py), and only inert outputs come back.
`GradeOutOfKernel` runs after it: for every grade cell whose hidden part names a grader
(`# grader: grader_tests/test_<function>.py`), it grades the submission once with
`grading.grade_file` (student code in its own sandboxed worker, comparisons in a pytest process
that never runs student code) and REPLACES that cell's outputs with PASS/FAIL lines and the
score as a plain float, which `SaveAutoGrades` then stores. Whatever the notebook printed or
displayed in a grade cell is discarded, so nothing a student cell does can change a score.

Where this stands on a submission's way (docs/life-of-a-submission.md): nbgrader's Autograde
(classgrade/nbgrader_api.py, or plain `nbgrader autograde`) runs these, as the course's
nbgrader_config.py lists them; GradeOutOfKernel hands each notebook to graders.grade_file and
writes what it gives into the grade cells, for SaveAutoGrades.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import asdict, replace
from pathlib import Path

import nbformat
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Float, Unicode

from attention_course import trace
from attention_course.course import Course, find_course, graded_course
from attention_course.errors import SubmissionRefused, UserError
from attention_course.grading.feedback import RECORD_KEY, cell_feedback, cell_score
from attention_course.grading.graders import grade_file
from attention_course.grading.seeds import record
from attention_course.grading.submissions import restore_metadata
from attention_course.sandbox.execute import execute_notebook
from attention_course.sandbox.safety import check_submission_folder
from attention_course.settings import COURSE_FILE, DEFAULT, Limits

GRADER_LINE = re.compile(r"^# grader: grader_tests/test_(\w+)\.py\s*$", re.MULTILINE)


def _graded_course(resources: dict) -> list[Path]:
    """The course of the notebook nbgrader is converting (the folder it works in), to hide
    from student code."""
    return graded_course(Path(resources.get("metadata", {}).get("path") or "."))


def _hidden(resources: dict) -> list[Path]:
    """What student code must not see: the course of the notebook (_graded_course), with its
    parts that lie elsewhere (its graders, its quiz's banks: Course.hidden)."""
    found = _graded_course(resources)
    for root in list(found):
        try:
            found += Course.load(root).hidden()
        except UserError:  # not a course the engine can read: its folder alone
            continue
    return list(dict.fromkeys(found))


def graded_root(resources: dict, configured: str) -> Path | None:
    """The course folder of the notebook nbgrader is converting: `configured` (nbgrader_config.py
    sets it), else the course of the folder nbgrader works in (None when it is neither)."""
    return Path(configured) if configured else next(iter(_graded_course(resources)), None)


def course_limits(resources: dict, configured: str = "") -> Limits:
    """The limits of the course whose notebook this is (its course.toml's [limits]), else the
    defaults (a notebook outside a course)."""
    root = graded_root(resources, configured)
    return Course.load(root).limits if root and (root / COURSE_FILE).is_file() else DEFAULT


def _course(resources: dict, configured: str) -> Course:
    """The course whose graders grade this notebook (graded_root), else the one found from
    here."""
    root = graded_root(resources, configured)
    return Course.load(root) if root else find_course()


class CheckSubmission(NbGraderPreprocessor):
    """Refuse a submission folder with links, special files or an oversized notebook."""

    def preprocess(self, nb, resources):
        # In the sanitizing pass, the notebook being read is the submitted one.
        folder = Path(resources["metadata"]["path"])
        check_submission_folder(folder, course_limits(resources).submission_bytes)
        return nb, resources


class RestoreMetadata(NbGraderPreprocessor):
    """A notebook whose nbgrader metadata was lost (saved by another tool, cells copied into a
    new notebook) is rebuilt from the released one: each solution cell gets the student's cell
    of the same id or the one that defines its function. Graded by function name, then; a
    notebook with none of its functions is refused, saying so."""

    def preprocess(self, nb, resources):
        if any("nbgrader" in cell.get("metadata", {}) for cell in nb.cells):
            return nb, resources
        folder = Path(resources["metadata"]["path"])  # submitted/<student>/<assignment>
        root, assignment = folder.parents[1].parent, folder.name
        released = root / "release" / assignment / f"{resources['nbgrader']['notebook']}.ipynb"
        rebuilt, missing = restore_metadata(nb, nbformat.read(released, as_version=4))
        solutions = [
            c.metadata["nbgrader"]["grade_id"]
            for c in rebuilt.cells
            if c.metadata.get("nbgrader", {}).get("solution")
        ]
        if solutions and len(missing) == len(solutions):
            raise SubmissionRefused(
                "its nbgrader metadata was lost and none of its cells could be matched: it "
                f"defines none of {', '.join(missing)}"
            )
        # Told to the grading pass (a conversion of its own) through the notebook's metadata.
        rebuilt.metadata.setdefault("attention_course", {})["restored"] = missing
        self.log.warning("%s had lost its nbgrader metadata: graded by function name", folder)
        return rebuilt, resources


class SandboxedExecute(NbGraderPreprocessor):
    """Run the notebook's code cells in the sandbox, within a time budget per cell and in all.

    A cell that kills its process (say `os._exit`) or ignores its time limit gets an error
    output saying so, and execution goes on with the next cell; once the budget is spent, the
    remaining cells are not run. Neither changes a score: the graded functions run again in
    the grading worker.
    """

    timeout = Float(
        None,
        allow_none=True,
        help="CPU seconds for one cell (one that sleeps is stopped by the clock, at "
        f"{DEFAULT.wall_factor:g} times that); default: the course's notebook_cell_timeout "
        f"(course.toml's [limits], else {DEFAULT.notebook_cell_timeout:g})",
    ).tag(config=True)
    total_timeout = Float(
        None,
        allow_none=True,
        help="CPU seconds for the whole notebook, later cells are not run (and never more than "
        f"{DEFAULT.wall_factor:g} times that by the clock); default: the course's "
        f"notebook_timeout (course.toml's [limits], else {DEFAULT.notebook_timeout:g})",
    ).tag(config=True)
    course_root = Unicode(
        "", help="the course whose limits apply (default: the graded folder's)"
    ).tag(config=True)
    unsandboxed = Bool(
        False, help="Run student code without the sandbox (limits only); say so in the feedback"
    ).tag(config=True)

    def preprocess(self, nb, resources):
        limits = course_limits(resources, self.course_root)
        if self.timeout is not None:  # nbgrader_config.py's, over course.toml's
            limits = replace(limits, notebook_cell_timeout=self.timeout)
        if self.total_timeout is not None:
            limits = replace(limits, notebook_timeout=self.total_timeout)
        with trace.stage("notebook run"):
            run = execute_notebook(nb, limits, self.unsandboxed, hide=_hidden(resources))
        state = resources.setdefault("attention_course", {})
        if run.died_at is not None:
            state["kernel_died"] = f"cell {run.died_at}"
            self.log.warning("The notebook's process died at cell %s; grading goes on", run.died_at)
        if run.out_of_time:
            state["out_of_time"] = True
        return nb, resources


def grader_cells(nb: NotebookNode) -> dict[int, str]:
    """Grade cells that name an out-of-kernel grader: cell index -> function."""
    found = {}
    for index, cell in enumerate(nb.cells):
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade"):
            match = GRADER_LINE.search(cell.source)
            if match:
                found[index] = match.group(1)
    return found


class GradeOutOfKernel(NbGraderPreprocessor):
    """Run the hidden graders in their own processes and write each grade cell's outputs."""

    unsandboxed = Bool(
        False, help="Run student code without the sandbox (limits only); say so in the feedback"
    ).tag(config=True)
    in_process = Bool(
        False,
        help="Run the graders in this process (a grading job: attention-course autograde sets "
        "it), not in a pytest process of their own (plain nbgrader and its formgrader: a "
        "long-lived server that must read graders the instructor edits, keep its own memory "
        "limit, and survive a grader's bug)",
    ).tag(config=True)
    course_root = Unicode(
        "", help="the course whose graders grade (default: the graded folder's)"
    ).tag(config=True)

    def preprocess(self, nb, resources):
        with trace.stage("graders"):
            return self._grade(nb, resources)

    def _grade(self, nb, resources):
        cells = grader_cells(nb)
        if not cells:
            return nb, resources
        assignment = resources["nbgrader"]["assignment"]
        notebook = resources["nbgrader"]["notebook"]
        course = _course(resources, self.course_root)
        folder = Path(resources.get("metadata", {}).get("path") or ".")
        submitted = folder / f"{notebook}.ipynb"  # its seed's identity: the file as submitted
        with tempfile.TemporaryDirectory(prefix="attention-autograde-") as tmp:
            path = Path(tmp) / f"{notebook}.ipynb"
            nbformat.write(nb, path)
            report = grade_file(
                path,
                assignment,
                self.unsandboxed,
                in_process=self.in_process,
                functions=sorted(set(cells.values())),
                hide=_hidden(resources),
                course=course,
                submitted=submitted if submitted.is_file() else None,
            )
        student = str(resources["nbgrader"].get("student") or folder.parent.name)
        if report.seed and graded_root(resources, self.course_root) is not None:  # a class's
            try:  # folder: the seed recorded for the instructor
                record(course, assignment, student, notebook, report.seed)
            except (OSError, ValueError) as exc:
                self.log.warning("the seed of %s's %s was not recorded: %s", student, notebook, exc)
        extra = []
        restored = nb.metadata.get("attention_course", {}).get("restored")
        restored = [str(name) for name in restored] if isinstance(restored, list) else None
        if restored is not None:
            extra.append(
                "this notebook had lost its nbgrader metadata: its functions were found by name"
                + (f" (none found for {', '.join(restored)})" if restored else "")
            )
        died = resources.get("attention_course", {}).get("kernel_died")
        if died:
            extra.append(
                f"the notebook's process died at {died}; your functions were still "
                "graded in a separate process"
            )
        for index, function in cells.items():
            cell = nb.cells[index]
            points = float(cell.metadata["nbgrader"].get("points", 0))
            score = cell_score(points, report, function)
            tests = [asdict(t) for t in report.functions[function].tests]
            cell.outputs = [
                nbformat.v4.new_output(
                    "stream", name="stdout", text=cell_feedback(report, function, extra)
                ),
                nbformat.v4.new_output(
                    "execute_result",
                    data={"text/plain": repr(score)},
                    metadata={RECORD_KEY: {"tests": tests}},
                    execution_count=cell.get("execution_count"),
                ),
            ]
        self.log.info(
            "Graded %s outside the kernel: %g / %g", assignment, report.score, report.max_score
        )
        return nb, resources
