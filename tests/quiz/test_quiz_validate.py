"""`attention-course quiz validate` rejects broken banks with file, question id and reason."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from attention_course.cli.main import main

GOOD = {
    "quiz": "tiny",
    "title": "Tiny quiz",
    "source": "week15-attention-mechanism.txt",
    "sections": {"multihead": "3. Multi-Head Attention & Why Multiple Heads Help"},
    "parameters": {"d_model": {"choices": [64, 128]}, "num_heads": {"choices": [2, 4]}},
    "misconceptions": {"heads-full-width": "Every head as wide as the model."},
    "questions": [
        {
            "id": "pick",
            "section": "multihead",
            "type": "single_choice",
            "prompt": "Pick b.",
            "choices": [
                {"id": "a", "text": "A", "misconception": "heads-full-width"},
                {"id": "b", "text": "B", "correct": True},
            ],
        },
        {
            "id": "width",
            "section": "multihead",
            "type": "numeric",
            "prompt": "d_model = {d_model}, {num_heads} heads: d_k?",
            "template": "head_dim",
            "tolerance": {"abs": 0},
        },
    ],
}


def _write(tmp_path: Path, data: dict, name: str = "tiny.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def _validate(path: Path, capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    code = main(["quiz", "validate", str(path)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_good_bank_passes(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code, out, err = _validate(_write(tmp_path, GOOD), capsys)
    assert code == 0, err
    assert "ok:" in out and "2 questions" in out


def _broken(mutate) -> dict:
    data = copy.deepcopy(GOOD)
    mutate(data)
    return data


BROKEN = {
    "unknown type": (
        lambda d: d["questions"][0].update(type="essay_question"),
        "pick",
        "unknown type 'essay_question'",
    ),
    "no answer": (
        lambda d: d["questions"][0]["choices"][1].pop("correct"),
        "pick",
        "no answer",
    ),
    "numeric without tolerance": (
        lambda d: d["questions"][1].pop("tolerance"),
        "width",
        "without tolerance",
    ),
    "numeric without key": (
        lambda d: d["questions"][1].pop("template"),
        "width",
        "no answer",
    ),
    "duplicate id": (
        lambda d: d["questions"].append(copy.deepcopy(d["questions"][0])),
        "pick",
        "duplicate question id",
    ),
    "template cannot be computed": (
        lambda d: d["parameters"].update(num_heads={"choices": [3]}),
        "width",
        "template cannot be computed",
    ),
    "unknown formula": (
        lambda d: d["questions"][1].update(template="head_dimension"),
        "width",
        "unknown formula 'head_dimension'",
    ),
    "undeclared parameter": (
        lambda d: d["questions"][1].update(prompt="{seq_len} tokens: d_k?"),
        "width",
        "undeclared parameters seq_len",
    ),
    "unknown misconception": (
        lambda d: d["questions"][0]["choices"][0].update(misconception="typo"),
        "pick",
        "misconception 'typo' is not defined",
    ),
    "unknown section": (
        lambda d: d["questions"][0].update(section="masks"),
        "pick",
        "section 'masks'",
    ),
    "bad points": (
        lambda d: d["questions"][0].update(points=0.3),
        "pick",
        "points must be a positive multiple of 0.5",
    ),
}


@pytest.mark.parametrize("case", BROKEN, ids=list(BROKEN))
def test_broken_bank_is_rejected(tmp_path: Path, capsys: pytest.CaptureFixture, case: str) -> None:
    mutate, qid, reason = BROKEN[case]
    path = _write(tmp_path, _broken(mutate))
    code, out, err = _validate(path, capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert any(
        line.startswith(f"{path}: question {qid!r}: ") and reason in line for line in lines
    ), err
    assert lines[-1].startswith("attention-course: error: ")
    assert "Traceback" not in err


def test_invalid_yaml_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "tiny.yaml"
    path.write_text("quiz: tiny\nquestions: [\n  - id: x\n", encoding="utf-8")
    code, _, err = _validate(path, capsys)
    assert code == 2
    assert f"{path}: invalid YAML at line" in err


def test_invalid_json_bank(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "tiny.json"
    path.write_text('{"quiz": "tiny",', encoding="utf-8")
    code, _, err = _validate(path, capsys)
    assert code == 2 and f"{path}: invalid JSON at line 1" in err


def test_missing_bank_file_and_unknown_quiz(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code, _, err = _validate(tmp_path / "nope.yaml", capsys)
    missing = tmp_path / "nope.yaml"
    assert code == 2 and err.strip() == f"attention-course: error: {missing}: no such bank file"
    assert main(["quiz", "validate", "no_such_quiz"]) == 2
    err = capsys.readouterr().err
    assert "unknown quiz 'no_such_quiz' (known: " in err and "knowledge_check" in err


def test_every_problem_is_listed(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    def two(d: dict) -> None:
        d["questions"][0]["choices"][1].pop("correct")
        d["questions"][1].pop("tolerance")

    code, _, err = _validate(_write(tmp_path, _broken(two)), capsys)
    assert code == 2
    assert "'pick': no answer" in err and "'width': numeric question without tolerance" in err
    assert "2 problem(s) in 1 bank file(s)" in err


def test_validate_all_banks_by_default(capsys: pytest.CaptureFixture) -> None:
    assert main(["quiz", "validate"]) == 0
    out = capsys.readouterr().out
    for quiz in ("knowledge_check", "concept_check", "misconceptions"):
        assert f"{quiz}.yaml" in out


def test_bank_using_a_broken_bank_is_a_user_error(tmp_path: Path, capsys) -> None:
    bank_dir = tmp_path / "banks"
    bank_dir.mkdir()
    _write(bank_dir, _broken(lambda d: d["questions"][1].pop("tolerance")))
    assert main(["quiz", "show", "tiny", "--banks", str(bank_dir)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "without tolerance" in err
