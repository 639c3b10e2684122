"""How often a failing student is told the mistake they made: prints figures, asserts nothing.

    python benchmarks/hint_accuracy.py [--seeds 3] [--catalogue DIR ...] [--entries]

Every wrong implementation of the catalogue (tests/catalogue/wrong/, or the folders given) says
which mistake it makes (its `# misconception:` line). Each is graded, as the course's own code,
directly in this process (tests/direct_grading.py; the catalogue's tests show the sandbox gives
the same verdicts), under a few seeds. For each failing test of its function, its hint is:

- named: its diagnosis is the entry's misconception (grader_tests/misconceptions.py, or a
  mistake the engine tells itself: in place, not implemented);
- follows: it says which failure it follows from (an earlier test of the same function, or the
  function the caller's test was charged to);
- none: it names no misconception, only the property and the input;
- other: it names a misconception the entry does not make (a hint that blames code that is
  right). The goal is none of these.

Printed: the shares of each, overall and by function, and the same with each entry's own
misconception taken out of the models ("unseen": what a student whose mistake the course has
no model of is told; other must stay 0 there too).
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from attention_course.grading import course_graders, diagnosis, runner  # noqa: E402
from attention_course.grading.session import Session  # noqa: E402
from tests.course import COURSE, REFERENCE_FILE  # noqa: E402
from tests.direct_grading import run_here  # noqa: E402
from tests.grading.test_catalogue import ENTRIES, _header  # noqa: E402

KINDS = ("named", "follows", "none", "other")


def without(models: diagnosis.Models, label: str) -> diagnosis.Models:
    """The models, but those of `label`."""
    found = diagnosis.Models()
    for function, ms in models.by_function.items():
        found.by_function[function] = [m for m in ms if m.label != label]
    return found


def hints(entry, seed: str, unseen: bool) -> list[tuple[str, str]]:
    """(test, kind) for each failing test of the entry's function."""
    program = [("variant", REFERENCE_FILE.read_text() + "\n\n" + entry.path.read_text())]
    tests, calls, faults, draw = runner.collect(COURSE, entry.functions, seed)
    session = Session(program, calls, run_here, COURSE, draw)
    models = course_graders.misconceptions(COURSE)
    if unseen:
        models = without(models, entry.misconception)
    reference = course_graders.reference(COURSE)
    names = {c.function for c in calls}
    session._diagnoser = diagnosis.Diagnoser(
        models, {f: getattr(reference, f) for f in names if hasattr(reference, f)}
    )
    found = []
    for r in session.grade(tests, faults):
        if r["function"] != entry.function or r["passed"]:
            continue
        if r["diagnosis"] == entry.misconception or (
            entry.misconception == "not_implemented"
            and r["message"].endswith("not implemented yet")
        ):
            kind = "named"
        elif r["follows_from"] or r.get("charged_to"):
            kind = "follows"
        elif r["diagnosis"] is None:
            kind = "none"
        else:
            kind = "other"
        found.append((f"{r['test']} ({r['diagnosis']})" if kind == "other" else r["test"], kind))
    return found


def shares(counts: collections.Counter) -> str:
    total = sum(counts.values()) or 1
    told = counts["named"] + counts["follows"]
    parts = " ".join(f"{k} {counts[k]}" for k in KINDS)
    return f"{told / total:6.1%} told ({parts}; {sum(counts.values())} failing tests)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds per entry (default 3)")
    parser.add_argument(
        "--catalogue",
        type=Path,
        nargs="*",
        help="folders of wrong implementations (default: the catalogue's)",
    )
    parser.add_argument("--entries", action="store_true", help="print a line per entry")
    args = parser.parse_args()
    if args.catalogue:
        entries = [_header(p, "wrong") for d in args.catalogue for p in sorted(d.glob("*.py"))]
    else:
        entries = [e for e in ENTRIES if e.kind == "wrong"]
    seeds = [hashlib.sha256(f"hints {i}".encode()).hexdigest()[:32] for i in range(args.seeds)]
    start = time.monotonic()
    for unseen in (False, True):
        overall: collections.Counter = collections.Counter()
        by_function: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        others = []
        for entry in entries:
            mine: collections.Counter = collections.Counter()
            for seed in seeds:
                for test, kind in hints(entry, seed, unseen):
                    mine[kind] += 1
                    if kind == "other":
                        others.append(f"{entry.path.stem}: {test}")
            overall += mine
            by_function[entry.function] += mine
            if args.entries and not unseen:
                print(f"  {entry.path.stem:64s} {entry.misconception:28s} {shares(mine)}")
        title = (
            "unseen: each entry's own misconception taken out of the models"
            if unseen
            else ("the course's models")
        )
        print(f"\n{title}, {len(entries)} wrong implementations x {len(seeds)} seeds")
        for function, counts in sorted(by_function.items()):
            print(f"  {function:30s} {shares(counts)}")
        print(f"  {'all':30s} {shares(overall)}")
        for line in sorted(set(others)):
            print(f"    names another misconception: {line}")
    print(f"\n{time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
