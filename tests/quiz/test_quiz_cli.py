"""The quiz commands: take (bank and self-check key, interactive and from a file, each attempt
recorded), grade, show, list, --help; bad input is one line on stderr and exit code 2."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml

from attention_course.cli.main import build_parser, main
from attention_course.quiz.loading import load_bank
from attention_course.quiz.samples import correct_answer, wrong_answer
from attention_course.quiz.variants import for_student
from tests.course import BANK_DIR, COURSE_ROOT


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch) -> None:
    """`quiz take` records attempts in ./attempts: run every command from a temporary folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ATTENTION_COURSE_DIR", str(COURSE_ROOT))


def _answers(quiz: str, student: str, pick=correct_answer) -> dict:
    bank = load_bank(quiz, BANK_DIR)
    out = {}
    for q in bank.questions:
        value = pick(for_student(bank, q, student))
        out[q.id] = list(value) if isinstance(value, tuple | frozenset) else value
    return out


def _write(path: Path, data: dict) -> Path:
    if path.suffix == ".json":
        path.write_text(json.dumps(data), encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_take_with_answers_file_from_the_bank(tmp_path: Path, capsys) -> None:
    f = _write(
        tmp_path / "a.yaml", {"student": "alice", "answers": _answers("misconceptions", "alice")}
    )
    assert main(["quiz", "take", "misconceptions", "--answers", str(f)]) == 0
    out = capsys.readouterr().out
    assert out.count("-> correct") == 9
    assert "Score: 9 / 9" in out


def test_take_with_a_self_check_key(tmp_path: Path, capsys) -> None:
    key = tmp_path / "kc.selfcheck.json"
    assert (
        main(["quiz", "export", "knowledge_check", "--format", "selfcheck", "--out", str(key)]) == 0
    )
    good = _write(tmp_path / "a.json", {"answers": _answers("knowledge_check", "bob")})
    bad = _write(tmp_path / "b.json", {"answers": _answers("knowledge_check", "bob", wrong_answer)})
    capsys.readouterr()
    assert main(["quiz", "take", str(key), "--student", "bob", "--answers", str(good)]) == 0
    assert "Score: 5 / 5" in capsys.readouterr().out
    assert main(["quiz", "take", str(key), "--student", "bob", "--answers", str(bad)]) == 0
    out = capsys.readouterr().out
    assert "Score: 0 / 5" in out and "renormalised among" in out  # feedback for that mistake


def test_a_self_check_key_is_recognised_by_its_content(tmp_path: Path, capsys) -> None:
    key = tmp_path / "practice.selfcheck"  # any name: export --out writes what it is given
    assert main(["quiz", "export", "practice", "--format", "selfcheck", "--out", str(key)]) == 0
    good = _write(tmp_path / "a.json", {"answers": _answers("practice", "fay")})
    assert main(["quiz", "take", str(key), "--student", "fay", "--answers", str(good)]) == 0
    assert "Score: 5 / 5" in capsys.readouterr().out


def test_take_records_the_attempt_and_grade_gives_the_same_score(tmp_path: Path, capsys) -> None:
    answers = _answers("knowledge_check", "gil")
    answers["sdpa_steps"] = ["a", "b"]  # two of the three right choices: 2/3 of 2 points
    f = _write(tmp_path / "in.json", {"student": "gil", "answers": answers})
    attempt = tmp_path / "gil-attempt.json"
    assert (
        main(["quiz", "take", "knowledge_check", "--answers", str(f), "--out", str(attempt)]) == 0
    )
    out = capsys.readouterr().out
    assert "-> partial (1.33/2)" in out and "Score: 4.33 / 5" in out  # 3 + 4/3, rounded
    assert "1.3333" not in out
    record = json.loads(attempt.read_text(encoding="utf-8"))
    assert record["student"] == "gil" and record["quiz"] == "knowledge_check"
    assert record["answers"] == answers and record["checked_with"] == "bank"
    assert record["score"] == 4.33 and record["max_score"] == 5
    assert record["verdicts"]["sdpa_steps"] == {"status": "partial", "score": 1.33, "points": 2}
    assert record["time"].endswith("+00:00")
    out_csv = tmp_path / "g.csv"
    assert main(["quiz", "grade", "knowledge_check", str(attempt), "--out", str(out_csv)]) == 0
    row = next(csv.DictReader(out_csv.open()))
    assert row["student"] == "gil" and row["total"] == "4.33" and row["sdpa_steps"] == "1.33"


def test_numbers_depend_on_the_student(tmp_path: Path, capsys) -> None:
    answers = _write(tmp_path / "a.json", {"answers": _answers("misconceptions", "alice")})
    main(["quiz", "take", "misconceptions", "--student", "alice", "--answers", str(answers)])
    assert "Score: 9 / 9" in capsys.readouterr().out
    main(["quiz", "take", "misconceptions", "--student", "bob", "--answers", str(answers)])
    assert "Score: 9 / 9" not in capsys.readouterr().out  # alice's numbers are wrong for bob


def test_interactive_take_asks_again_after_an_invalid_answer(monkeypatch, capsys) -> None:
    bank = load_bank("concept_check", BANK_DIR)
    inst = for_student(bank, bank.question("library_analogy"), "carol")
    typed = iter(
        [
            "query=D",  # invalid: items missing -> asked again
            "query=D, key=A, value=C",
            "b",
            "",  # skip the free-text question
        ]
    )
    monkeypatch.setattr("builtins.input", lambda prompt="": next(typed))
    assert inst.key == {"query": "D", "key": "A", "value": "C"}
    assert main(["quiz", "take", "concept_check", "--student", "carol"]) == 0
    out = capsys.readouterr().out
    assert "-> invalid" not in out and "(0/1.5)" not in out  # no verdict for a re-asked answer
    assert out.count("no option given for key, value") == 1
    assert out.count("Please answer again.") == 1
    assert out.count("-> correct") == 2
    assert "-> unanswered" in out
    assert "Score: 2.5 / 4.5" in out
    (recorded,) = Path("attempts").glob("concept_check-carol-*.json")
    record = json.loads(recorded.read_text(encoding="utf-8"))
    assert record["answers"] == {"library_analogy": "query=D, key=A, value=C", "why_scale": "b"}
    assert record["verdicts"]["library_analogy"]["status"] == "correct"
    assert record["verdicts"]["long_range"]["status"] == "unanswered"


def test_interactive_take_stops_at_end_of_input(monkeypatch, capsys) -> None:
    def eof(prompt: str = "") -> str:
        raise EOFError

    monkeypatch.setattr("builtins.input", eof)
    assert main(["quiz", "take", "knowledge_check", "--student", "dan"]) == 0
    assert "Score: 0 / 0" in capsys.readouterr().out


def test_grade_a_class(tmp_path: Path, capsys) -> None:
    files = [
        _write(
            tmp_path / "alice.yaml",
            {"student": "alice", "answers": _answers("practice", "alice")},
        ),
        _write(
            tmp_path / "bob.json",
            {"student": "bob", "answers": _answers("practice", "bob", wrong_answer)},
        ),
        _write(
            tmp_path / "cem.json",
            {"quiz": "practice", "answers": {"history": "b", "head_width": "many"}},
        ),
    ]
    broken = tmp_path / "dora.json"
    broken.write_text('{"student": "dora", "answers": {', encoding="utf-8")
    other = _write(tmp_path / "eve.json", {"quiz": "concept_check", "answers": {}})
    out_csv = tmp_path / "grades.csv"
    code = main(
        [
            "quiz",
            "grade",
            "practice",
            *map(str, [*files, broken, other]),
            "--out",
            str(out_csv),
        ]
    )
    captured = capsys.readouterr()
    assert code == 1  # two files could not be graded; the others were
    errors = captured.err.strip().splitlines()
    assert len(errors) == 2
    assert errors[0].startswith(f"attention-course: error: {broken}: invalid JSON at line 1")
    assert "answers are for quiz 'concept_check'" in errors[1]
    rows = list(csv.DictReader(out_csv.open()))
    assert [r["student"] for r in rows] == ["alice", "bob", "cem"]  # cem: from the file name
    assert rows[0]["total"] == "5" and rows[1]["total"] == "0" and rows[0]["max"] == "5"
    report = captured.out
    assert "history [single_choice, section history]: 1/3 correct (33%)" in report
    assert "wrong b x2 -> attention-born-2017" in report
    assert "(value of heads-full-width) x1 -> heads-full-width" in report
    assert "(invalid format) x1" in report


def test_grade_lists_free_text_for_review(tmp_path: Path, capsys) -> None:
    f = _write(tmp_path / "a.json", {"student": "ann", "answers": _answers("concept_check", "ann")})
    out_csv = tmp_path / "g.csv"
    assert main(["quiz", "grade", "concept_check", str(f), "--out", str(out_csv)]) == 0
    row = next(csv.DictReader(out_csv.open()))
    assert row["needs_review"] == "long_range"
    assert "1 to review by hand" in capsys.readouterr().out


def test_grade_rejects_unknown_questions_and_duplicates(tmp_path: Path, capsys) -> None:
    a = _write(tmp_path / "a.json", {"student": "x", "answers": {"nope": 1}})
    b = _write(tmp_path / "b.json", {"student": "y", "answers": {}})
    c = _write(tmp_path / "c.json", {"student": "y", "answers": {}})
    code = main(
        [
            "quiz",
            "grade",
            "knowledge_check",
            str(a),
            str(b),
            str(c),
            "--out",
            str(tmp_path / "g.csv"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2  # none could be graded
    assert "no question 'nope'" in err and "student 'y' is named by 2 files" in err


def test_a_forged_response_file_sets_no_other_students_grade(tmp_path: Path, capsys) -> None:
    """mallory hands in, in nbgrader's submitted/ layout, a file named to sort first that
    claims to be bob's with every answer wrong: it is refused with the reason, and bob's own
    file gives him his full marks. In a flat folder, two files for bob are both refused,
    never the first kept."""
    quiz = "knowledge_check"
    submitted = tmp_path / "submitted"
    forged = submitted / "mallory" / quiz / "0000.json"
    own = submitted / "bob" / quiz / "responses.json"
    for path in (forged, own):
        path.parent.mkdir(parents=True)
    _write(forged, {"student": "bob", "answers": _answers(quiz, "bob", wrong_answer)})
    _write(own, {"student": "bob", "answers": _answers(quiz, "bob")})
    out = tmp_path / "g.csv"
    code = main(["quiz", "grade", quiz, str(forged), str(own), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1
    assert f"{forged}: names the student 'bob' but was handed in by 'mallory': refused" in err
    (row,) = list(csv.DictReader(out.open()))
    assert row["student"] == "bob" and row["file"] == str(own)
    assert row["total"] == row["max"]

    flat = [tmp_path / "a.json", tmp_path / "b.json"]
    _write(flat[0], {"student": "bob", "answers": _answers(quiz, "bob", wrong_answer)})
    _write(flat[1], {"student": "bob", "answers": _answers(quiz, "bob")})
    code = main(["quiz", "grade", quiz, *map(str, flat), "--out", str(tmp_path / "h.csv")])
    assert code == 2 and "student 'bob' is named by 2 files" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["quiz", "take", "nope", "--student", "x"], "unknown quiz 'nope'"),
        (
            ["quiz", "take", "knowledge_check", "--answers", "missing.json"],
            "missing.json: no such file",
        ),
        (["quiz", "grade", "knowledge_check", "missing.json"], "no response file could be graded"),
        (["quiz", "export", "nope", "--format", "gift"], "unknown quiz 'nope'"),
        (["quiz", "show", "nope"], "unknown quiz 'nope'"),
    ],
)
def test_bad_input_is_one_line(
    argv: list[str], message: str, capsys, tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ATTENTION_COURSE_DIR", str(COURSE_ROOT))  # the course, from elsewhere
    assert main(argv) == 2
    lines = capsys.readouterr().err.splitlines()
    assert all(line.startswith("attention-course: error: ") for line in lines)
    assert message in lines[-1]
    assert len(lines) == (2 if argv[1] == "grade" else 1)  # grade: the file, then the summary


def test_take_answers_file_problems(tmp_path: Path, capsys) -> None:
    bad_yaml = tmp_path / "a.yaml"
    bad_yaml.write_text("answers: [unclosed\n", encoding="utf-8")
    assert (
        main(["quiz", "take", "knowledge_check", "--student", "x", "--answers", str(bad_yaml)]) == 2
    )
    assert "invalid YAML at line" in capsys.readouterr().err
    unknown = _write(tmp_path / "b.json", {"answers": {"nope": 1}})
    assert (
        main(["quiz", "take", "knowledge_check", "--student", "x", "--answers", str(unknown)]) == 2
    )
    assert "no question 'nope'" in capsys.readouterr().err
    no_student = _write(tmp_path / "c.json", {"answers": {}})
    assert main(["quiz", "take", "knowledge_check", "--answers", str(no_student)]) == 2
    assert "--student" in capsys.readouterr().err
    not_a_key = _write(tmp_path / "d.json", {"answers": {}})
    assert (
        main(["quiz", "take", str(not_a_key), "--student", "x", "--answers", str(no_student)]) == 2
    )
    assert f"{not_a_key}" in capsys.readouterr().err  # not a bank either
    other = tmp_path / "e.txt"
    other.write_text("{}", encoding="utf-8")
    assert main(["quiz", "take", str(other), "--student", "x", "--answers", str(no_student)]) == 2
    assert "neither a self-check key nor a bank file" in capsys.readouterr().err
    old = tmp_path / "f.key"
    old.write_text(json.dumps({"format": "attention-course-selfcheck", "version": 0}), "utf-8")
    assert main(["quiz", "take", str(old), "--student", "x", "--answers", str(no_student)]) == 2
    assert "version 0 is not supported" in capsys.readouterr().err


def test_list_and_show(capsys) -> None:
    assert main(["quiz", "list"]) == 0
    out = capsys.readouterr().out
    assert "knowledge_check" in out and "4 questions" in out
    assert main(["quiz", "show", "misconceptions", "--student", "alice"]) == 0
    shown = capsys.readouterr().out
    assert "KEY" not in shown and "⟨" not in shown
    inst = for_student(
        load_bank("misconceptions", BANK_DIR),
        load_bank("misconceptions", BANK_DIR).question("shape_q"),
        "alice",
    )
    assert f"shape ({inst.params['seq_len']}, {inst.params['d_model']})" in shown
    assert main(["quiz", "show", "misconceptions", "--student", "alice", "--key"]) == 0
    assert f"KEY: ({inst.key[0]}, {inst.key[1]})" in capsys.readouterr().out


def _subparser(*names: str):
    parser = build_parser()
    for name in names:
        action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        parser = action.choices[name]
    return parser


@pytest.mark.parametrize(
    "command", ["list", "show", "validate", "take", "grade", "export", "notebook"]
)
def test_help_explains_every_option(command: str) -> None:
    parser = _subparser("quiz", command)
    text = parser.format_help()
    for action in parser._actions:
        for flag in action.option_strings:
            assert flag in text
        assert action.help, f"{command}: {action.dest} has no help"


def test_take_help_says_what_self_check_hides() -> None:
    text = " ".join(_subparser("quiz", "take").format_help().split())
    assert "salted hashes" in text and "can be recovered" in text
    export = " ".join(_subparser("quiz", "export").format_help().split())
    assert "plain text" in export  # jupyterquiz


def test_take_records_a_free_text_answer_and_scores_it_by_hand_only(tmp_path: Path, capsys):
    """A free-text answer's provisional score is for the instructor: `quiz take` says it is
    marked by hand (no score beside it), the total and the attempt file's score leave it out,
    and the attempt file keeps the answer's text for the instructor to read."""
    bank = load_bank("concept_check", BANK_DIR)
    answers = _answers("concept_check", "fay")
    essay = bank.question("long_range").sample_answer  # the course's own answer: scored high
    answers["long_range"] = essay
    f = _write(tmp_path / "in.json", {"student": "fay", "answers": answers})
    attempt = tmp_path / "fay.json"
    assert main(["quiz", "take", "concept_check", "--answers", str(f), "--out", str(attempt)]) == 0
    out = capsys.readouterr().out
    said = out.split("long_range (2 points)")[1].split("\n[")[0].split("\nScore:")[0]
    assert "-> recorded (marked by hand)" in said
    assert "/2)" not in said and "/ 2" not in said  # no score shown for it
    # library_analogy 1.5 and why_scale 1 point, answered right; long_range's 2 by hand
    assert "Score: 2.5 / 2.5 (+ 2 points marked by hand: long_range)" in out
    record = json.loads(attempt.read_text(encoding="utf-8"))
    assert record["answers"]["long_range"] == essay
    assert record["verdicts"]["long_range"]["status"] == "needs_review"
    assert (record["score"], record["max_score"]) == (2.5, 2.5)


def test_a_formula_as_student_id_is_inert_in_grades_csv(tmp_path: Path) -> None:
    """A student id is what the student wrote: in grades.csv a leading `=` is text, never a
    spreadsheet formula (OWASP's apostrophe)."""
    evil = '=HYPERLINK("http://evil.example/x","grade")'
    f = _write(tmp_path / "a.json", {"student": evil, "answers": _answers("misconceptions", evil)})
    out_csv = tmp_path / "g.csv"
    assert main(["quiz", "grade", "misconceptions", str(f), "--out", str(out_csv)]) == 0
    row = next(csv.DictReader(out_csv.open(encoding="utf-8")))
    assert row["student"] == "'" + evil
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in row.values())
