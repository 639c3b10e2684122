"""What a bank must mean, beyond its structure: every key computable for every variant."""

from __future__ import annotations

from attention_course.quiz import formulas, types
from attention_course.quiz.model import Bank, Problem, Question
from attention_course.quiz.variants import instantiate, placeholders, variant_parameters


def semantic_problems(bank: Bank) -> list[Problem]:
    """Problems of a structurally sound bank: sections, labels, formulas, templates."""
    problems: list[Problem] = []

    def problem(q: Question | None, reason: str) -> None:
        problems.append(Problem(str(bank.path), q.id if q else None, reason))

    for q in bank.questions:
        if q.section not in bank.sections:
            problem(q, f"section {q.section!r} is not one of {', '.join(bank.sections)}")
        labels = [q.misconception, *(c.misconception for c in q.choices)]
        labels += [w.misconception for w in q.wrong_answers]
        for label in labels:
            if label is not None and label not in bank.misconceptions:
                problem(q, f"misconception {label!r} is not defined in 'misconceptions'")
        unknown = [p for p in placeholders(q.prompt) if p not in bank.parameters]
        if unknown:
            problem(q, f"prompt uses undeclared parameters {', '.join(unknown)}")
            continue
        names = [q.template] + [w.formula for w in q.wrong_answers]
        bad = [n for n in names if n is not None and n not in formulas.FORMULAS]
        if bad:
            problem(q, f"unknown formula {bad[0]!r} (see quiz/formulas.py)")
            continue
        needed = {p for n in names if n for p in formulas.parameters_of(n)}
        missing = sorted(needed - set(bank.parameters))
        if missing:
            problem(q, f"formula needs undeclared parameters {', '.join(missing)}")
            continue
        if q.template is not None and not placeholders(q.prompt):
            problem(q, "templated question whose prompt shows no parameter")
        problems.extend(_template_problems(bank, q))
    return problems


def _template_problems(bank: Bank, q: Question) -> list[Problem]:
    """Compute the question in every variant; report the first variant that fails."""
    for variant in range(bank.variant_count):
        try:
            instance = instantiate(bank, q, variant)
        except Exception as exc:  # any failure means the template cannot be computed
            params = variant_parameters(bank, variant)
            reason = f"template cannot be computed for {params}: {type(exc).__name__}: {exc}"
            return [Problem(str(bank.path), q.id, reason)]
        key_problem = types.of(q).key_problem(q, instance.key, variant)
        if key_problem is not None:
            return [Problem(str(bank.path), q.id, key_problem)]
        if not q.templated and not bank.parameters:
            break
    return []
