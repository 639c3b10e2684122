"""A solution cell as a token sequence that copying's disguises do not change.

The cell is read with Python's `ast` (never run). Imports, docstrings and bare strings go, and
with them every comment and all formatting. A helper defined in the cell and called once is
inlined at its call. Every name the cell binds (parameters, assignments, loop variables, the
helpers) becomes one placeholder `V`, so renaming changes nothing and an added variable shifts
no other token; names it does not bind (`np`, the course's other functions) and attributes
stay. In each block, statements that do not depend on one another are put in a canonical
order (a topological order of their dependencies, ties broken by their tokens). Each token
keeps the line of the cell it came from, so that matches can be shown in the student's code.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from attention_course.grading.notebook import _without_magics, parse_source

PLACEHOLDER = "V"
# Blocks longer than this keep their order (sorting is quadratic and more in their length; no
# solution of the course needs a tenth of it).
MAX_SORTED = 100
_CONTROL = (ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom, ast.Await)


@dataclass(frozen=True)
class Tokens:
    """A cell's normalised tokens and, for each, the line (1-based) of the cell it came from."""

    labels: tuple[str, ...]
    lines: tuple[int, ...]


class CannotCompare(ValueError):
    """A cell that cannot be normalised; the message says why in a few words."""


def _bound_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, (str, type(Ellipsis)))
    ) or isinstance(node, ast.Pass)


def _clean(tree: ast.AST) -> None:
    """Drop imports, docstrings, bare strings and `pass`; `x += y` becomes `x = x + y`."""
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                kept = [
                    s
                    for s in block
                    if not _is_docstring(s) and not isinstance(s, (ast.Import, ast.ImportFrom))
                ]
                setattr(node, name, kept)
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list):
                for i, s in enumerate(block):
                    if isinstance(s, ast.AugAssign):
                        load = copy.copy(s.target)
                        load.ctx = ast.Load()
                        value = ast.BinOp(load, s.op, s.value)
                        block[i] = ast.copy_location(ast.Assign([s.target], value), s)


class _Substitute(ast.NodeTransformer):
    def __init__(self, values: dict[str, ast.expr]):
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            return self.values[node.id]
        return node


def _inline_helpers(tree: ast.Module, keep: str) -> None:
    """Inline each function of the cell (other than `keep`) that is called exactly once, has
    one `return` as its last statement and no other, and plain parameters."""
    for _ in range(10):  # helpers of helpers
        defs = {
            n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name != keep
        }
        calls: dict[str, list[ast.Call]] = {}
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in defs:
                calls.setdefault(n.func.id, []).append(n)
        done = False
        for name, fn in defs.items():
            found = calls.get(name, [])
            body = [s for s in fn.body if not _is_docstring(s)]
            args = fn.args
            if (
                len(found) != 1
                or not body
                or not isinstance(body[-1], ast.Return)
                or any(isinstance(n, ast.Return) for s in body[:-1] for n in ast.walk(s))
                or args.vararg
                or args.kwarg
                or args.posonlyargs
                or args.kwonlyargs
                or any(n is found[0] for n in ast.walk(fn))  # recursive
            ):
                continue
            call = found[0]
            params = [a.arg for a in args.args]
            values: dict[str, ast.expr] = {}
            for param, value in zip(params, call.args, strict=False):
                values[param] = value
            for kw in call.keywords:
                if kw.arg in params:
                    values[kw.arg] = kw.value
            defaults = dict(
                zip(params[len(params) - len(args.defaults) :], args.defaults, strict=True)
            )
            for param in params:
                values.setdefault(param, defaults.get(param, ast.Name(param, ast.Load())))
            values = {k: v for k, v in values.items() if not isinstance(v, ast.Name)}
            body = [_Substitute(values).visit(copy.deepcopy(s)) for s in body]
            result = body[-1].value or ast.Constant(None)  # type: ignore[attr-defined]
            if not _replace_call(tree, call, result, body[:-1]):
                continue
            _remove_def(tree, fn)
            done = True
            break
        if not done:
            return


def _replace_call(tree: ast.AST, call: ast.Call, result: ast.expr, before: list[ast.stmt]) -> bool:
    """Put `result` where `call` is and the statements `before` ahead of the statement that
    holds it (in its own block)."""
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if not isinstance(block, list):
                continue
            for i, stmt in enumerate(block):
                if isinstance(
                    stmt, (ast.FunctionDef, ast.If, ast.For, ast.While, ast.With, ast.Try)
                ):
                    inside = [getattr(stmt, f, None) for f in ("test", "iter", "items")]
                    holds = any(
                        call in list(ast.walk(x)) if isinstance(x, ast.AST) else False
                        for x in inside
                    )
                    if not holds:
                        continue
                elif not any(n is call for n in ast.walk(stmt)):
                    continue
                for parent in ast.walk(stmt):
                    for field, value in ast.iter_fields(parent):
                        if value is call:
                            setattr(parent, field, result)
                        elif isinstance(value, list):
                            for j, item in enumerate(value):
                                if item is call:
                                    value[j] = result
                block[i:i] = before
                return True
    return False


def _remove_def(tree: ast.AST, fn: ast.FunctionDef) -> None:
    for node in ast.walk(tree):
        block = getattr(node, "body", None)
        if isinstance(block, list) and fn in block:
            block.remove(fn)
            return


# ---- statement order


def _effects(stmt: ast.stmt, bound: set[str]) -> tuple[set[str], set[str], bool]:
    """(names read, names written, whether it transfers control) of one statement."""
    reads: set[str] = set()
    writes: set[str] = set()
    control = False
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name):
            (writes if isinstance(node.ctx, (ast.Store, ast.Del)) else reads).add(node.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(
            node.ctx, (ast.Store, ast.Del)
        ):
            base = node.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                writes.add(base.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            base = node.func.value
            if isinstance(base, ast.Name) and base.id in bound:  # x.append(...) changes x
                writes.add(base.id)
        elif isinstance(node, _CONTROL) or isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            control = True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id not in bound:  # a global function may do anything
                control = control or node.func.id in ("print", "exec", "eval", "setattr")
    return reads, writes, control


def _order(block: list[ast.stmt], bound: set[str]) -> list[ast.stmt]:
    """`block` in canonical order: each statement after those it depends on, the ready one
    with the smallest tokens first."""
    n = len(block)
    if n < 2 or n > MAX_SORTED:
        return block
    effects = [_effects(s, bound) for s in block]
    after: list[set[int]] = [set() for _ in range(n)]
    for j in range(n):
        rj, wj, cj = effects[j]
        for i in range(j):
            ri, wi, ci = effects[i]
            if ci or cj or wi & (rj | wj) or ri & wj:
                after[j].add(i)
    keys = [tuple(_labels(s, bound)) for s in block]
    placed: list[int] = []
    left = set(range(n))
    while left:
        ready = [j for j in left if not (after[j] & left)]
        best = min(ready, key=lambda j: (keys[j], j))
        placed.append(best)
        left.remove(best)
    return [block[j] for j in placed]


def _sort_blocks(tree: ast.AST, bound: set[str]) -> None:
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, name, _order(block, bound))


# ---- tokens


def _label(node: ast.AST, bound: set[str]) -> str | None:
    if isinstance(node, ast.Name):
        return PLACEHOLDER if node.id in bound else node.id
    if isinstance(node, ast.Attribute):
        return "." + node.attr
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, (str, bytes)):
            return "S"
        return repr(value) if len(repr(value)) <= 24 else type(value).__name__
    if isinstance(node, ast.BinOp | ast.AugAssign):
        return node.op.__class__.__name__
    if isinstance(node, ast.UnaryOp):
        return node.op.__class__.__name__
    if isinstance(node, ast.BoolOp):
        return node.op.__class__.__name__
    if isinstance(node, ast.Compare):
        return "Compare:" + ",".join(op.__class__.__name__ for op in node.ops)
    if isinstance(node, ast.keyword):
        return f"{node.arg}="
    if isinstance(node, ast.arg):
        return PLACEHOLDER
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return "def " + (PLACEHOLDER if node.name in bound else node.name)
    if isinstance(node, (ast.expr_context, ast.operator, ast.cmpop, ast.boolop, ast.unaryop)):
        return None
    if isinstance(node, (ast.arguments, ast.Expr, ast.Load)):
        return None
    return node.__class__.__name__


def _children(node: ast.AST) -> list[ast.AST]:
    out = []
    for name, value in ast.iter_fields(node):
        if name in ("decorator_list", "returns", "type_comment", "annotation"):
            continue
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, ast.AST))
    return out


def _walk(node: ast.AST, bound: set[str], line: int = 0) -> list[tuple[str, int]]:
    """Pre-order tokens of `node`, iteratively (a deep tree must not exhaust the stack)."""
    out: list[tuple[str, int]] = []
    stack: list[tuple[ast.AST, int]] = [(node, line)]
    while stack:
        here, at = stack.pop()
        at = getattr(here, "lineno", at) or at
        if (
            isinstance(here, ast.Attribute)
            and isinstance(here.value, ast.Name)
            and here.value.id not in bound
        ):  # np.exp: one token
            out.append((f"{here.value.id}.{here.attr}", at))
            continue
        label = _label(here, bound)
        if label is not None:
            out.append((label, at))
        stack.extend((child, at) for child in reversed(_children(here)))
    return out


def _labels(node: ast.AST, bound: set[str]) -> list[str]:
    return [label for label, _ in _walk(node, bound)]


def normalise(source: str, function: str = "") -> Tokens:
    """The normalised tokens of a cell whose graded function is `function`; CannotCompare when
    the cell is not Python."""
    try:
        tree = parse_source(_without_magics(source))
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        raise CannotCompare(f"not valid Python{where}: {exc.msg}") from None
    try:
        _clean(tree)
        bound = _bound_names(tree) - {function}  # a helper's parameters too
        _inline_helpers(tree, function)
        _sort_blocks(tree, bound)
        pairs = [t for stmt in tree.body for t in _walk(stmt, bound)]
    except (RecursionError, MemoryError):
        raise CannotCompare("nested too deeply to be compared") from None
    return Tokens(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs))
