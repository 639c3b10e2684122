"""nbgrader configuration of the attention course (nbgrader 0.9)."""

import os
from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearHiddenTests,
    ClearOutput,
    DeduplicateIds,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)

from attention_course.classgrade import gradebook
from attention_course.grading.preprocessors import (
    CheckSubmission,
    GradeOutOfKernel,
    RestoreMetadata,
    SandboxedExecute,
)
from attention_course.grading.quiz_answers import GradeQuizAnswers, HideReviewNotes
from attention_course.reports import notebook_html
from attention_course.settings import EXCHANGE_ENV

ROOT = Path(__file__).resolve().parent

c = get_config()  # noqa: F821 (provided by nbgrader)

c.CourseDirectory.root = str(ROOT)
c.CourseDirectory.course_id = "attention-course"
# The gradebook: $ATTENTION_COURSE_DB if set (a PostgreSQL database for a course graded on
# several machines: postgresql://USER@HOST:PORT/DB), else the SQLite file gradebook.db here.
# Or write the URL itself here (postgresql+psycopg://USER@HOST:PORT/DB).
c.CourseDirectory.db_url = gradebook.url(ROOT)
# The exchange: $ATTENTION_COURSE_EXCHANGE if set (a shared folder: on the course's JupyterHub,
# `attention-course jupyterhub` sets it for the instructor), else a course-local one.
c.Exchange.root = os.environ.get(EXCHANGE_ENV) or str(ROOT / "exchange")

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# A deleted test cell is restored and graded, not left for manual grading.
c.OverwriteCells.add_missing_cells = True

# A submission folder with a link, a special file or an oversized notebook is refused first.
c.Autograde.sanitize_preprocessors = [
    CheckSubmission,
    RestoreMetadata,  # a notebook that lost its nbgrader metadata is graded by function name
    ClearOutput,
    DeduplicateIds,
    OverwriteKernelspec,
    OverwriteCells,
    CheckCellMetadata,
]

# Student code runs only in the sandbox (attention_course/sandbox/jail.py): the notebook's cells
# in an IPython shell (no Jupyter kernel), the graded functions in a separate worker called by
# GradeOutOfKernel. The notebook run only fills in the outputs students see in their feedback;
# scores come from the worker, so the notebook gets short limits.
c.GradeQuizAnswers.course_root = str(ROOT)  # its quiz banks hold the key
c.GradeOutOfKernel.course_root = str(ROOT)  # its graders grade
# The notebook run's limits (per cell, in all) are course.toml's [limits] notebook_cell_timeout
# and notebook_timeout, as every other limit on student code; c.SandboxedExecute.timeout and
# .total_timeout set here would win over them.
c.SandboxedExecute.course_root = str(ROOT)  # its limits apply
c.Autograde.autograde_preprocessors = [
    SandboxedExecute,
    GradeOutOfKernel,
    GradeQuizAnswers,  # the quiz's answer cells, read as literals and checked with the key
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]

# Feedback never shows the hidden part of a test cell, nor the quiz's notes for the instructor,
# and nothing a student wrote becomes live HTML or JavaScript in it (outputs are already inert:
# see attention_course/sandbox/execute.py; markdown is sanitized here).
c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, HideReviewNotes, SanitizeHTML]
c.GenerateFeedback.exporter_class = notebook_html.FeedbackExporter  # templates compiled once
# Pages made from notebooks (feedback HTML, formgrader's submission view): formulas as MathML,
# drawn by the browser with no script or network; grader output wrapped, every hint line whole.
# CourseHTMLHeader writes the pages' CSS (nbconvert's, which it extends, is switched off).
c.HTMLExporter.filters = {"markdown2html": notebook_html.markdown2html_mathml}
c.HTMLExporter.preprocessors = [notebook_html.CourseHTMLHeader]
c.CSSHTMLHeaderPreprocessor.enabled = False
# Feedback: nbgrader's template without the MathJax script tag (formgrader keeps its own).
c.HTMLExporter.extra_template_basedirs = [
    str(notebook_html.TEMPLATES),
    notebook_html.NBGRADER_TEMPLATES,
]
c.SanitizeHTML.enabled = True  # nbconvert's own preprocessors do nothing unless enabled

# `nbgrader export`: nbgrader's CSV with each submission's status and reason from the gradebook,
# and no score where its grading failed or did not finish (its scores there are not reliable).
c.ExportApp.plugin_class = "attention_course.reports.export.CsvExport"
