"""The notebook run (sandbox/execute.py), its bookkeeping observed in the notebook it fills in:
execution counts, which cells run, a process that dies (the next one replays the earlier cells
and goes on), the notebook's output cap, and outputs rebuilt inert.

test_notebook_run.py compares whole notebooks with a Jupyter kernel's run; these are the quick
ones (a few cells each).
"""

from __future__ import annotations

import nbformat
import pytest

from attention_course.sandbox.execute import execute_notebook, inert_output
from attention_course.settings import Limits

MiB = 1024**2


def notebook(*sources: str, tags: dict[int, list[str]] | None = None):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# a heading")]
    for i, source in enumerate(sources):
        cell = nbformat.v4.new_code_cell(source)
        if tags and i in tags:
            cell.metadata["tags"] = tags[i]
        nb.cells.append(cell)
    return nb


def texts(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


@pytest.fixture(scope="module")
def died():
    """A notebook whose third code cell ends its process: the run goes on after it."""
    nb = notebook(
        "x = 40\nprint('first')",
        "",  # empty: not run, no count
        "import os\nos._exit(3)",
        "print(x + 2)\nx",
        "print('skipped')",
        tags={4: ["skip-execution"]},
    )
    run = execute_notebook(nb)
    return nb, run


def test_code_cells_are_counted_and_empty_or_skipped_ones_left_alone(died):
    nb, run = died
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == [1, None, 2, 3, None]
    assert texts(code[0]) == "first\n"
    assert code[1].outputs == [] and code[4].outputs == []
    assert "markdown" == nb.cells[0].cell_type and "outputs" not in nb.cells[0]


def test_a_cell_that_ends_its_process_is_an_error_and_the_next_runs_in_a_fresh_one(died):
    nb, run = died
    dead, after = nb.cells[3], nb.cells[4]
    (error,) = dead.outputs
    assert (error.output_type, error.ename) == ("error", "DeadKernelError")
    assert error.evalue == (
        "the notebook's process ended with exit code 3 (os._exit or a crash?) while running "
        "this cell"
    )
    assert run.died_at == 3  # the index of the cell in the notebook
    assert run.processes == 2
    assert run.notes == ["cell 3 ended with exit code 3 (os._exit or a crash?)"]
    assert not run.out_of_time
    # the earlier cells were replayed silently: x is known, and "first" printed once
    assert texts(after) == "42\n"
    assert [o.data["text/plain"] for o in after.outputs if o.output_type == "execute_result"] == [
        "40"
    ]
    assert after.outputs[-1].execution_count == 3


def test_a_cell_past_its_time_is_interrupted_and_the_budget_ends_the_notebook():
    """The first loop is interrupted at its cell's second of CPU time; the second runs into
    the notebook's budget (1.5 s): stopped, and the cell after it is not run."""
    limits = Limits(notebook_cell_timeout=1.0, notebook_timeout=1.5, grace=0.5, wall_factor=40.0)
    loop = "while True:\n    pass"
    nb = notebook("print('ran')", loop, loop, "print('late')")
    run = execute_notebook(nb, limits)
    first, interrupted, stopped, late = nb.cells[1:]
    assert texts(first) == "ran\n"
    assert [(o.output_type, o.get("ename")) for o in interrupted.outputs] == [
        ("error", "KeyboardInterrupt")
    ]
    assert interrupted.execution_count == 2
    assert texts(stopped) == "(stopped: the notebook used up its 1.5 s)\n"
    assert stopped.execution_count == 3
    assert texts(late) == "(not run: the notebook used up its 1.5 s)\n"
    assert late.execution_count is None
    assert run.out_of_time and run.died_at is None and run.processes == 1


def test_after_a_process_dies_the_next_has_what_is_left_of_the_notebooks_cpu_time():
    """The first process spins half a second, then ends; the next one's cell spins on and is
    stopped where the notebook's 1.8 s run out, before its own cell's 1.5 s. (Each process's
    start counts too: on a busy machine a start takes longer, so the first cell stays well
    within its own limit.)"""
    limits = Limits(notebook_cell_timeout=1.5, notebook_timeout=1.8, grace=0.5, wall_factor=40.0)
    spin = "import time\nend = time.process_time() + {}\nwhile time.process_time() < end:\n    pass"
    nb = notebook(spin.format(0.5) + "\nimport os\nos._exit(1)", spin.format(60))
    run = execute_notebook(nb, limits)
    died, spun = nb.cells[1:]
    assert [o.ename for o in died.outputs] == ["DeadKernelError"]
    assert texts(spun) == "(stopped: the notebook used up its 1.8 s)\n"
    assert run.processes == 2 and run.out_of_time


def test_past_the_notebooks_output_cap_a_cells_outputs_are_replaced_by_a_note():
    limits = Limits(notebook_output_bytes=3000)
    nb = notebook("print('a' * 1000)", "print('b' * 1500)", "print('c' * 500)")
    execute_notebook(nb, limits)
    first, second, third = nb.cells[1:]
    assert texts(first) == "a" * 1000 + "\n"
    assert texts(second) == "b" * 1500 + "\n"  # 2.5 of the 3 KB, with the JSON around them
    assert texts(third) == "[outputs removed: the notebook's outputs passed 3000 bytes]\n"
    assert third.execution_count == 3


def test_outputs_are_rebuilt_inert_field_by_field():
    html = {
        "output_type": "display_data",
        "data": {"text/html": "<script>steal()</script>", "image/png": "aGk=\n"},
        "metadata": {"image/png": {"width": 10, "height": '100%" onload="x'}},
    }
    shown = inert_output(html, 100)
    assert shown.data == {
        "image/png": "aGk=\n",
        "text/plain": "[text/html output, not shown in the graded copy]",
    }
    assert shown.metadata == {"image/png": {"width": 10}}
    assert inert_output({"output_type": "stream", "name": "x", "text": "t" * 20}, 8).text == (
        "tttttttt\n[truncated]\n"
    )
    for count, kept in ((-1, None), (0, 0), (3, 3), (True, None), (2.0, None), ("1", None)):
        result = {"output_type": "execute_result", "data": {}, "execution_count": count}
        assert inert_output(result, 9).execution_count == kept, count
    unknown = inert_output({"output_type": "update_display_data"}, 9)
    assert (unknown.output_type, unknown.text) == ("stream", "[unreadable output]\n")
    error = inert_output({"output_type": "error", "traceback": ["a", 3]}, 9)
    assert (error.ename, error.evalue, error.traceback) == ("Error", "", ["a", "3"])
    long = {"output_type": "error", "ename": "E" * 201, "evalue": "v" * 10, "traceback": []}
    error = inert_output(long, 9)  # an exception's name: 200 characters, whatever the limit
    assert (
        error.ename == "E" * 200 + "\n[truncated]\n" and error.evalue == "v" * 9 + "\n[truncated]\n"
    )
    assert inert_output(dict(long, ename="E" * 200), 9).ename == "E" * 200
    deep = inert_output(dict(long, traceback=[f"line {i}" for i in range(201)]), 9)
    assert deep.traceback == [f"line {i}" for i in range(200)]  # 200 lines of a traceback
    named = inert_output({"output_type": "display_data", "data": {"x" * 61: "?"}}, 9)
    assert named.data == {"text/plain": f"[{'x' * 60} output, not shown in the graded copy]"}
    for raw in (None, ["stream"], "an output"):  # not an output at all
        odd = inert_output(raw, 9)
        assert (odd.output_type, odd.name, odd.text) == (
            "stream",
            "stderr",
            "[unreadable output]\n",
        )
    unread = inert_output({"output_type": "display_data", "data": ["text/plain"]}, 9)
    assert unread.data == {"text/plain": "[an output that could not be read]"}
    mixed = inert_output({"output_type": "stream", "name": "stdout", "text": ["a", 3, None]}, 9)
    assert (mixed.name, mixed.text) == ("stdout", "a3None")


def test_an_image_of_exactly_the_limit_is_kept_and_one_character_more_is_not():
    def image(size: int):
        return {"output_type": "display_data", "data": {"image/jpeg": "QUJD" * 3 + "A" * size}}

    kept = inert_output(image(8), 20)  # 20 characters of base64: at the limit
    assert kept.data == {"image/jpeg": "QUJDQUJDQUJDAAAAAAAA"}
    refused = inert_output(image(9), 20)  # 21
    assert refused.data == {"text/plain": "[image/jpeg output, not shown in the graded copy]"}


def test_a_cells_outputs_are_cut_past_its_limit_and_8192_bytes_more_not_at_them():
    """The cap inside the sandbox runs beside student code, so the outputs are capped again
    here, with room for the inside cap's own note: a limit of 100 bytes keeps outputs of
    100 + 8192 bytes of text (a stream's kind and name count), and cuts one byte more."""
    from attention_course.sandbox.execute import _within

    def stream(size: int):
        text = "x" * (size - len("stream") - len("stdout"))
        return nbformat.v4.new_output("stream", name="stdout", text=text)

    whole = [stream(4000), stream(100 + 8192 - 4000)]
    assert _within(whole, 100) == whole
    cut = _within([stream(4000), stream(100 + 8192 - 4000 + 1)], 100)
    assert cut[0] == whole[0] and len(cut) == 2
    assert cut[1].text == "[output truncated: a cell may show at most 100 bytes]\n"


def test_the_notebooks_outputs_are_kept_to_exactly_its_cap_and_not_a_byte_past():
    """The notebook's cap counts the outputs as JSON: a second cell that brings them to
    exactly the cap keeps its outputs, one that brings them a byte past it does not."""
    import json

    first = notebook("print('a' * 100)")
    execute_notebook(first)
    used = len(json.dumps(first.cells[1].outputs))  # the first cell's outputs, as JSON
    at = notebook("print('a' * 100)", "print('b' * 100)")
    execute_notebook(at)
    cap = used + len(json.dumps(at.cells[2].outputs))
    for limit, kept in ((cap, True), (cap - 1, False)):
        nb = notebook("print('a' * 100)", "print('b' * 100)")
        execute_notebook(nb, Limits(notebook_output_bytes=limit))
        assert (texts(nb.cells[2]) == "b" * 100 + "\n") is kept, (limit, nb.cells[2].outputs)


def test_a_cell_shows_its_first_1000_outputs():
    many = "from IPython.display import display\nfor i in range(1001):\n    display(i)"
    nb = notebook(many)
    run = execute_notebook(nb)
    assert run.died_at is None and not run.out_of_time
    assert [o.data["text/plain"] for o in nb.cells[1].outputs] == [str(i) for i in range(1000)]


def test_past_the_notebooks_deadline_no_cell_is_started():
    """A cell that sleeps uses no CPU time but runs into the notebook's deadline (its
    backstop, by the clock: 3 s here): it is stopped there, and the cells after it are not
    run, however little of the CPU budget was used."""
    limits = Limits(notebook_timeout=3.0, wall_factor=1.0)
    nb = notebook("import time\ntime.sleep(30)", "print('late')")
    run = execute_notebook(nb, limits)
    asleep, late = nb.cells[1:]
    assert texts(asleep) == "(stopped: the notebook used up its 3 s)\n"
    assert texts(late) == "(not run: the notebook used up its 3 s)\n"
    assert late.execution_count is None
    assert run.out_of_time and run.processes == 1


def test_the_notebooks_deadline_is_one_for_all_its_cells():
    """Two cells that sleep 3 s each, in a notebook of 5 s (by the clock): the first ends
    within it, the second runs into the notebook's deadline, not a deadline of its own (with
    one per cell, both would end, and the third would run). Outputs only: nothing timed."""
    limits = Limits(notebook_timeout=5.0, wall_factor=1.0)
    nap = "import time\ntime.sleep(3)\nprint('woke')"
    nb = notebook(nap, nap, "print('late')")
    run = execute_notebook(nb, limits)
    first, second, late = nb.cells[1:]
    assert texts(first) == "woke\n"
    assert texts(second) == "(stopped: the notebook used up its 5 s)\n"
    assert texts(late) == "(not run: the notebook used up its 5 s)\n"
    assert run.out_of_time


def test_the_notebook_runs_zygote_found_the_kernels_compiler_before_it_forked():
    """The notebook run's zygote imports IPython and finds the kernel's compiler once, ahead
    of every notebook: the forked program has it already (no notebook pays for it)."""
    nb = notebook("import sys\nprint(sorted(sys.modules['cells']._prepared))")
    execute_notebook(nb)
    assert texts(nb.cells[1]) == "['compiler']\n"
