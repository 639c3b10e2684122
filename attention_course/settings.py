"""Every default of the engine, in one place: the course folder, the limits on student code
(times in seconds, sizes in bytes), and the quiz's."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

# The course folder: the file that declares it, and the variable that names it.
COURSE_FILE = "course.toml"
COURSE_ENV = "ATTENTION_COURSE_DIR"

# The gradebook: the variable that names it (`--db URL` sets it), and class grading's jobs.
DB_ENV = "ATTENTION_COURSE_DB"
DEFAULT_JOBS = os.cpu_count() or 1  # submissions autograded side by side

MiB = 1024**2
GiB = 1024**3


@dataclass(frozen=True)
class Limits:
    """Defaults for one submission; every grading path uses these unless told otherwise."""

    # How long student code may run. A step's own CPU time decides (the sandbox's, counted by
    # its cgroup, or from /proc where there is none), so that a busy machine cannot stop an
    # honest step; code that sleeps or waits is stopped by a wall-clock backstop of
    # `wall_factor` times the step's CPU time. The submission's budget is absolute (wall clock):
    # every sandbox that grading starts for one submission, re-runs included, shares it. The
    # notebook run's budget is of CPU time, its backstop absolute.
    wall_factor: float = 4.0  # a step's wall-clock backstop, as a multiple of its CPU limit
    # A step past its CPU limit by the clock that used less than this share of one core is
    # asleep (it waits, it does not compute): it is stopped then, not at its backstop. Honest
    # code slowed down by other processes gets its share of the cores (1/20 of a core means
    # about 40 busy processes on 2 cores) and goes on.
    idle_share: float = 0.05
    grace: float = 2.0  # after a step's own alarm, before the process is killed

    # The grading worker (set-up and solution cells, then calls of the graded functions).
    startup_timeout: float = 30.0  # wall: Python and numpy start inside the sandbox
    cell_timeout: float = 10.0  # CPU: one set-up or solution cell
    call_timeout: float = 5.0  # CPU: one call of a graded function
    worker_timeout: float = 60.0  # CPU: one worker, from its start
    submission_timeout: float = 120.0  # wall, absolute: every worker of one submission
    max_restarts: int = 10  # fresh workers after crashes, per submission

    # One submission end to end in `autograde` (notebook run, grading, feedback; wall).
    grading_timeout: float = 300.0
    # A pytest process of graders, past its submission's deadline (its start, then the
    # comparisons after the last program run), before it is stopped as a fault of grading.
    graders_slack: float = 60.0
    # On a Dask worker: how long a task waits for a submission another task still holds (the
    # task of a run that was stopped, winding down) before it says the submission is busy.
    claim_patience: float = 30.0

    # The notebook run that fills in the outputs of the feedback.
    notebook_cell_timeout: float = 5.0  # CPU: one cell of the notebook
    notebook_timeout: float = 20.0  # CPU: the whole notebook (its backstop: absolute)

    # Each sandbox (a worker, or the notebook run).
    memory_bytes: int = 2 * GiB  # the whole sandbox (cgroup) and each process (address space)
    file_bytes: int = 64 * MiB  # largest file a process may write
    tmp_bytes: int = 128 * MiB  # the sandbox's private /tmp, its only writable folder
    processes: int = 32  # processes and threads of the sandbox's user

    # What comes back out of a sandbox.
    frame_bytes: int = 64 * MiB  # one reply
    result_elements: int = 1 << 22  # array elements in one reply
    program_result_bytes: int = 256 * MiB  # all replies of one submission's calls
    # Functions computed outside for the student's code (the course's helpers, in the second
    # run of a function that calls them): calls per program run, and the elements of one call's
    # arrays and the size of each number (of a size the function may square) it passes. A
    # second run makes every call of one function's tests (some 60-120, each calling up to
    # five others, more for code that loops over the heads or the batch).
    outside_calls: int = 4096
    outside_call_elements: int = 1 << 12
    cell_output_bytes: int = 2 * MiB  # the outputs of one notebook cell
    notebook_output_bytes: int = 16 * MiB  # all outputs of one notebook
    submission_bytes: int = 32 * MiB  # a submitted notebook file

    def backstop(self, cpu_seconds: float) -> float:
        """The wall-clock time a step of `cpu_seconds` CPU time may take (sleeping code)."""
        return cpu_seconds * self.wall_factor


DEFAULT = Limits()


@dataclass(frozen=True)
class Retries:
    """How a transient fault of the infrastructure (a gradebook that does not answer, a lost
    connection) is tried again within a run before it counts as a fault of grading."""

    attempts: int = 6  # tries after the first
    first: float = 0.5  # seconds before the first retry, doubled each time ...
    longest: float = 10.0  # ... up to this (0.5, 1, 2, 4, 8, 10: 25.5 s in all)

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number `attempt` (1, 2, ...)."""
        return min(self.longest, self.first * 2 ** (attempt - 1))

    def waits(self) -> Iterator[float]:
        """The wait before each retry in turn, without end (for a caller that stops at a
        deadline of its own): `delay(1)`, `delay(2)`, ..."""
        return map(self.delay, itertools.count(1))

    def tries(self) -> Iterator[float]:
        """The wait after each of `attempts` tries in turn (the last one's too)."""
        return itertools.islice(self.waits(), self.attempts)


RETRIES = Retries()


@dataclass(frozen=True)
class Pacing:
    """How the engine paces its own work: how often it looks, how long a process that is done
    or ending is given, how much it reads at once, how it waits before trying again, how long
    its own processes may take to start. None of these is a limit on student code (those are
    `Limits`): they set how soon the engine sees something or gives up on its own processes."""

    cpu_poll_cgroup: float = 0.1  # a step's CPU time read from its sandbox's cgroup
    cpu_poll_proc: float = 0.5  # ... from /proc (a scan of every process)
    end_grace: float = 0.5  # a sandboxed process that is done, before it is killed
    exit_wait: float = 2.0  # a process that is ending (killed, or its pipe closed), reaped
    kill_wait: float = 10.0  # ... one whose sandbox has no pid namespace, once killed by uid
    # A sandbox's host uid, its processes killed until none is left (3 looks, 10 ms apart).
    uid_kills: Retries = field(default=Retries(attempts=3, first=0.01, longest=0.01))
    probe_startup: float = 60.0  # the machine's sandbox check: its trial sandbox's start
    read_bytes: int = 1 << 16  # the most read at once from a process's pipe or socket
    # A sandbox's cgroup removed while its killed processes are still leaving it: tried again
    # after 1 ms, then twice as long each time up to 20 ms, 60 tries in all.
    cgroup_removal: Retries = field(default=Retries(attempts=60, first=0.001, longest=0.02))
    # A gradebook step that met another grader's new row (a unique key): tried again soon.
    gradebook_races: Retries = field(default=Retries(attempts=4, first=0.05, longest=0.2))
    # A grading job of class grading (classgrade/jobs.py), from its start (or from the work a
    # run that started it ahead sends it) to its "ready": a minute past a sandbox's start-up.
    job_start: float = DEFAULT.startup_timeout + 60
    # Class grading on Dask (classgrade/cluster.py): how often a grading task looks whether it
    # is still wanted (and at its job's deadline), how it waits for a claim another task still
    # holds, and the tasks sent ahead of the workers (at least, and per worker thread).
    task_poll: float = 0.25
    claim_waits: Retries = field(default=Retries(first=0.1, longest=2.0))
    min_in_flight: int = 64
    in_flight_per_thread: int = 2
    # Class grading's waits on the infrastructure (classgrade/waits.py): the gradebook's
    # database and the disk. They never count against a submission's deadline. A wait longer
    # than `stall` is a stall: its connection to the gradebook is broken (or its grading job
    # stopped) and the submission is tried again (RETRIES), then a fault of grading. A process
    # looks at its waits every `wait_poll`; a grading job tells its run of a wait once it has
    # lasted `wait_told`, so a run counts as working at most `wait_untold` of a wait it was
    # not told of yet (the job's look, its line, the run's look at its jobs).
    stall: float = 120.0
    wait_poll: float = 0.25
    wait_told: float = 0.5
    wait_untold: float = 2.0
    wait_noted: float = 5.0  # a wait this long is said in the run's progress
    # A grading job breaks its own stalls and answers; a wait it told of that lasts this much
    # past the stall limit (a disk that does not answer, a job too busy to answer) is ended
    # by the run, which stops the job.
    stall_grace: float = 10.0

    def in_flight(self, threads: int) -> int:
        """Tasks sent ahead of `threads` worker threads in all."""
        return max(self.min_in_flight, self.in_flight_per_thread * threads)


PACING = Pacing()

# Dask (classgrade/cluster.py): the configuration of the cluster `--scheduler local` starts and
# of the run's client. A grading task waits seconds on its grading job, so what Dask does
# meanwhile is overhead: its defaults sample every worker thread's stack each 10 ms (the
# profiler), check each event loop every 20 ms, read the system's state every 500 ms, move
# tasks between workers every second (there is nothing to steal: tasks queue at the
# scheduler), look for data to move every 2 s and refresh the client's view every 2 s.
# Workers started by `dask worker` read theirs from Dask's own configuration
# (docs/instructors.md).
DASK_CONFIG: dict[str, object] = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.admin.system-monitor.disk": False,
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.scheduler.work-stealing": False,
    "distributed.scheduler.active-memory-manager.start": False,  # tasks keep no data to move
    "distributed.client.scheduler-info-interval": "10s",
    # a worker imports what its first task needs (the gradebook's drivers) as it starts
    "distributed.worker.preload": ["attention_course.classgrade.cluster"],
}


# ---- The quiz ----


# Question banks: one YAML (or JSON) file per quiz, named after the quiz id, in the folder the
# course.toml names ([quiz] banks).
BANK_SUFFIXES = (".yaml", ".yml", ".json")
# The course's named formulas, when course.toml does not name them: beside the banks' folder.
FORMULAS_FILE = "formulas.py"

# Per-student variants. A student's variant number is drawn from sha256(quiz id, student id);
# the numbers of variant v are drawn from sha256(quiz id, v, parameter name).
VARIANT_COUNT = 256

# Points of a question that does not say.
DEFAULT_POINTS = 1.0

# The longest quiz answer cell that is read (parsed, never run); a longer one is an invalid
# answer. An answer is one literal: the released cell holds under 200 characters.
ANSWER_CELL_CHARS = 10_000

# LMS exports: how many variants of each templated question go into a GIFT or QTI file
# (Moodle draws one per student from the question's category, Canvas from a question group).
EXPORT_FORMATS = ("gift", "moodlexml", "qti", "jupyterquiz", "selfcheck", "widgets")
EXPORT_VARIANTS = 5
EXPORT_SUFFIX = {
    "gift": ".gift.txt",
    "moodlexml": ".moodle.xml",
    "qti": ".qti.zip",
    "jupyterquiz": ".jupyterquiz.json",
    "selfcheck": ".selfcheck.json",
    "widgets": ".selfcheck.ipynb",
}

# Self-check files: length in bytes of the random salt written into each file.
SALT_BYTES = 16
SELFCHECK_FORMAT_VERSION = 1


# `quiz take` records every attempt as a response file here (relative to the current folder),
# named <quiz>-<student>-<UTC time>.json; `quiz grade` reads such files.
ATTEMPTS_DIR = Path("attempts")

# Scores are printed and written rounded to this many decimals (bank points are multiples of
# 0.5; partial credit such as 2/3 of 2 points shows as 1.33).
SCORE_DECIMALS = 2

# The graders' inputs are drawn per submission from a secret of the grading side: this
# variable (hex), or else the course's key file, made once (mode 0600). Never released.
GRADING_KEY_ENV = "ATTENTION_COURSE_GRADING_KEY"
GRADING_KEY_FILE = Path(".grading") / "grading.key"
GRADING_KEY_BYTES = 32

# Class grading.
GRADES_CSV = Path("grades.csv")
ITEM_ANALYSIS_TOP_WRONG = 3

# The graded quiz notebook: the comment that marks a question's grader cell.
GRADER_MARKER = "# quiz-grader:"


# Sandbox cgroups left behind by a grading process that was killed: removed when another
# sandbox starts, once empty and at least this old (seconds; a cgroup is joined right after
# it is made).
STALE_CGROUP_SECONDS = 60.0


# ---- The similarity report (attention_course/similarity/)


@dataclass(frozen=True)
class Similarity:
    """How `attention-course similarity` compares a class's solution cells (similarity/)."""

    kgram: int = 8  # tokens in a row that a fingerprint hashes (about one line of numpy)
    window: int = 4  # winnowing window: any match of kgram + window - 1 tokens is seen
    threshold: float = 0.5  # a pair whose score is at least this is reported
    # The instructor's solution counts as this many more independent students who hand it
    # in: code the course itself would write is common, not evidence.
    common_weight: float = 2.0
    # A function's scores are out of at least this many fingerprints, a pair's (all its
    # functions) out of at least `min_pair_fingerprints`: two short solutions that match are
    # weaker evidence than two long ones. Two cells are called identical when they are the same
    # after normalisation and hold at least `min_fingerprints` of uncommon code (fingerprints
    # weighed by rarity, the known sources' taken out); a pair is reported for identical code
    # whatever its score when that code weighs `min_pair_fingerprints` in all, or when every
    # function the two handed in is identical.
    min_fingerprints: int = 6
    min_pair_fingerprints: int = 12
    # Students whose submissions are near-identical (of the fingerprints either holds, over all
    # their functions, both hold at least this share) count as one when judging how common
    # their code is: a ring of copies does not make its own code common.
    unit_share: float = 0.8
    # ... and so do students whose every pair is reported (a ring, not a chain of pairs): the
    # scores are computed again with them as one, this many times at most (until the groups
    # no longer change).
    unit_rounds: int = 2
    cell_chars: int = 100_000  # a longer solution cell is not compared (named in the report)
    # A class with at least `parallel_cells` distinct cells is normalised in `workers`
    # processes (0: one per CPU); a smaller one in the command's own.
    workers: int = 0
    parallel_cells: int = 400
    shown_lines: int = 200  # lines of a cell shown side by side in the HTML report
    # The reported pairs whose cells the HTML and Markdown reports show (and whose matching
    # lines say how many students share them), most similar first; every reported pair is in
    # their table of pairs and in the CSV, with its matching lines.
    detailed_pairs: int = 200
    files: tuple[str, ...] = ("similarity.md", "similarity.html", "similarity.csv")
    # The known sources' files that can be read: Python, a notebook's code cells.
    base_suffixes: tuple[str, ...] = (".py", ".ipynb")
    base_bytes: int = 5_000_000  # a larger known source is refused (named, exit 2)


SIMILARITY = Similarity()


# ---- Checks with the hidden graders before the deadline (integrations/hub_check.py)


@dataclass(frozen=True)
class HubCheck:
    """The course's grading service under JupyterHub: how often a student may check a notebook
    with the hidden graders, how the checks are queued, and what happens after the due date.
    course.toml's `[hub_check]` table and the service's options override these."""

    per_day: int = 3  # checks per student per assignment in any `window`
    window: float = 24 * 3600.0  # seconds: a check counts against the limit this long
    workers: int = 1  # checks graded at once (each runs its own sandboxes)
    pending_per_student: int = 1  # checks of one student waiting or running at once
    after_due: str = "off"  # "off": no checks after the due date; "late": checked, late policy
    wait: float = 600.0  # seconds the command-line client waits for its check's answer
    service_name: str = "course-check"  # the JupyterHub service's name (its URL prefix)
    port: int = 8010  # where the service listens, on 127.0.0.1 (the hub's proxy reaches it)
    table: str = "attention_course_hub_checks"  # the checks' table in the gradebook database
    # What the service takes and how it reads it (integrations/check_intake.py): a request body
    # of at most `notebook_bytes` (a notebook's code and outputs; larger: refused, counted);
    # read by `intake_workers` processes of at most `intake_memory` bytes of address space
    # each, for at most `intake_seconds` a notebook (a reading past that time, or past half
    # that memory: refused, counted).
    notebook_bytes: int = 4 * MiB
    intake_workers: int = 2
    intake_memory: int = 512 * MiB
    intake_seconds: float = 5.0
    # The service's own memory (RLIMIT_DATA, set by the service on itself as it starts; its
    # grading workers set their own): it reads no notebook, so this is room to spare.
    service_memory: int = 1024 * MiB


HUB_CHECK = HubCheck()
AFTER_DUE = ("off", "late")
# In the students' servers: the check service's URL (the hub's /services/<name>/ address).
CHECK_URL_ENV = "ATTENTION_COURSE_CHECK_URL"


# ---- A JupyterHub for the course (attention_course/integrations/jupyterhub.py)


@dataclass(frozen=True)
class Hub:
    """The defaults of `attention-course jupyterhub`."""

    ip: str = "127.0.0.1"  # where the hub's public address listens (its proxy's)
    port: int = 8000  # the hub's public port (configurable-http-proxy's)
    hub_port: int = 8081  # the hub's own API, for the single-user servers (127.0.0.1)
    proxy_api_port: int = 8001  # configurable-http-proxy's API, for the hub (127.0.0.1)
    proxy: str = "configurable-http-proxy"  # JupyterHub's proxy (npm), found on PATH
    # The hub's version when the command's own environment has none (else that version).
    jupyterhub: str = "jupyterhub>=5.2"
    start_timeout: int = 120  # seconds for a user's server to start (a cold JupyterLab)
    config_file: str = "jupyterhub_config.py"
    student_config: str = "student-jupyter"  # the students' Jupyter configuration folder
    instructor_config: str = "instructor-jupyter"  # the instructor's (the course, formgrader)


HUB = Hub()
# The exchange folder, for the course's nbgrader_config.py: the instructor's server on the hub
# gets it in its environment, so that formgrader and nbgrader release into the shared exchange.
EXCHANGE_ENV = "ATTENTION_COURSE_EXCHANGE"


# ---- The LMS: LTI 1.3 launch into the hub, grades back (attention_course/integrations/lms/)

# LTI 1.3's role URIs (LTI 1.3 section A.2.3, context roles): who gets the instructor's
# environment. Institution roles (".../institution/person#Instructor") never count: a teacher
# elsewhere in the university is a student in this course.
LTI_MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
LTI_INSTRUCTOR_ROLES = (
    f"{LTI_MEMBERSHIP}#Instructor",
    f"{LTI_MEMBERSHIP}/Instructor#TeachingAssistant",
    "Instructor",  # the short form LTI 1.3 allows for context roles
)


@dataclass(frozen=True)
class Lms:
    """The defaults of the LMS integration. course.toml's `[lms]` table declares the course's
    platform (its issuer, client id, deployments and addresses) and may override these."""

    # Where the instructor's LMS files go, in the course folder (0700, the instructor's): the
    # tool's private key (0600), the launches the hub recorded, what was pushed.
    folder: str = "lms"
    key_file: str = "tool-key.pem"
    launches_file: str = "launches.json"
    pushed_file: str = "pushed.jsonl"
    nonces_file: str = "nonces.json"  # the hub's used launch nonces (replays are refused)
    key_bits: int = 2048  # the tool's RSA key (LTI 1.3 signs with RS256)
    # The nbgrader student id of an LMS user: `student_prefix` + the claim `student_id` names
    # ("sub", the LMS's own stable id, or "custom:NAME", a custom parameter such as a login set
    # to $User.username), made a valid account name; never another account's.
    student_id: str = "sub"
    student_prefix: str = "lti-"
    instructor_roles: tuple[str, ...] = LTI_INSTRUCTOR_ROLES
    # Custom parameters of a launch (LTI 1.3 section 5.4.2; set per link in the LMS).
    assignment_parameter: str = "assignment"  # the assignment a link opens
    environment_parameter: str = "environment"  # "instructor": the link is the instructor's
    home_base: str = "/home"  # where the hub makes a new student's home folder
    id_token_max_age: int = 600  # seconds: an older launch is refused
    http_timeout: float = 30.0  # seconds for each request to the platform
    line_item_tag: str = "attention-course"  # the tag of the line items the tool creates
    send_comment: bool = False  # feedback text goes to the LMS only when chosen


LMS = Lms()
# The LMS's identifiers of a user, from a launch's custom parameters: set them in the LMS to
# LTI variables (both Canvas and Moodle substitute these): lms_user_id=$User.id,
# login_id=$User.username, sis_id=$Person.sourcedId.
LMS_ID_PARAMETERS = ("lms_user_id", "login_id", "sis_id")
LMS_FORMATS = ("canvas", "moodle")


# ---- What a student sees on Gradescope, and when (integrations/gradescope.py, gradescope_run.py)

# Gradescope's visibility values (results.json, https://gradescope-autograders.readthedocs.io/
# en/latest/specs/): "visible" always; "after_due_date" once the due date has passed (the late
# due date where late work is allowed); "after_published" once the instructor publishes the
# grades; "hidden" never (instructors only).
GRADESCOPE_VISIBILITY = ("visible", "after_due_date", "after_published", "hidden")


@dataclass(frozen=True)
class Gradescope:
    """What the autograder's results.json lets a student see, and when. course.toml's
    `[gradescope]` table overrides these; a zip keeps what was declared when it was built.
    The defaults show what a Check on the hub shows (each function's points, each grader test's
    PASS/FAIL line and hint); on Gradescope a student may resubmit without limit."""

    result: str = "visible"  # the whole result: the total and each function's points
    tests: str = "visible"  # each grader test's entry: its name, points and PASS/FAIL line
    hints: bool = True  # a failed test's hint in its entry (false: its name and points only)
    stdout: str = "hidden"  # the grading log (the seed, the sandbox): the instructor's


GRADESCOPE = Gradescope()
