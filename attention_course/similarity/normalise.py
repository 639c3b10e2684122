"""A solution cell as a token sequence that copying's disguises do not change.

The cell is read with Python's `ast` (never run). Imports, docstrings and bare strings go, and
with them every comment and all formatting; `numpy` under any alias is `np`. A helper defined in
the cell and called once, or whose body is one `return`, is inlined at its calls. Then the
canonical forms of canonical.py, repeated until nothing changes: equivalent numpy code written
one way, constants evaluated, dead code and asserts removed, temporaries folded into the
expressions that read them. Every name the cell binds (parameters, assignments, loop
variables, the helpers) becomes one placeholder `V`, so renaming changes nothing and an added
variable shifts no other token; names it does not bind (`np`, the course's other functions) and
attributes stay. In each block, statements that do not depend on one another are put in a
canonical order (a topological order of their dependencies, ties broken by their tokens). Each
token keeps the line of the cell it came from, so that matches can be shown in the student's
code.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass

from attention_course.grading.notebook import _without_magics, parse_source
from attention_course.similarity.canonical import (
    NP,
    Canonical,
    blocks,
    fold_temporaries,
    remove_dead,
    restructure,
    stored_name,
    walk,
)

PLACEHOLDER = "V"
# Blocks longer than this keep their order (sorting is quadratic and more in their length; no
# solution of the course needs a tenth of it).
MAX_SORTED = 100
# A cell of more syntax nodes than this is compared without the canonical forms and without
# inlining its helpers (the largest solution of the course has about 300): what a long,
# hostile cell costs stays bounded (under a second of CPU for a cell of 100,000 characters).
CANONICAL_NODES = 3000
# Calls of the cell's helpers inlined at most (each walks the cell; a solution has a few).
INLINED = 25
# Rounds of the canonical rewrites at most (each round's changes may enable others; a cell of
# the course settles in two or three).
ROUNDS = 8
_CONTROL = (ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom, ast.Await)
# A string shown as itself in the tokens (a mode such as "ignore", einsum subscripts); longer
# strings (messages) are one token "S".
_WORD = re.compile(r"^[A-Za-z_.,\->]{1,40}$")

# function -> its parameters and, for each, its default as ast.dump (None: no default).
Defaults = Mapping[str, tuple[tuple[str, str | None], ...]]


@dataclass(frozen=True)
class Tokens:
    """A cell's normalised tokens and, for each, the line (1-based) of the cell it came from."""

    labels: tuple[str, ...]
    lines: tuple[int, ...]


class CannotCompare(ValueError):
    """A cell that cannot be normalised; the message says why in a few words."""


def _bound_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in walk(tree):
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


class _Numpy(ast.NodeTransformer):
    """numpy under another name (`import numpy`, `import numpy as xp`, `from numpy import
    exp`) as `np`."""

    def __init__(self, modules: dict[str, str], names: dict[str, str]):
        self.modules, self.names = modules, names

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.modules:
            return ast.copy_location(ast.Name(self.modules[node.id], ast.Load()), node)
        if isinstance(node.ctx, ast.Load) and node.id in self.names:
            base = ast.Name(NP, ast.Load())
            return ast.copy_location(ast.Attribute(base, self.names[node.id], ast.Load()), node)
        return node


def _numpy_names(tree: ast.Module) -> None:
    modules: dict[str, str] = {}
    names: dict[str, str] = {}
    for node in walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ("numpy", "math") and (alias.asname or alias.name) != NP:
                    modules[alias.asname or alias.name] = NP if alias.name == "numpy" else "math"
        elif isinstance(node, ast.ImportFrom) and node.module == "numpy" and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    names[alias.asname or alias.name] = alias.name
    modules.pop("math", None)
    stored = {n.id for n in walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    modules = {k: v for k, v in modules.items() if k not in stored}
    names = {k: v for k, v in names.items() if k not in stored}
    if modules or names:
        _Numpy(modules, names).visit(tree)


def _clean(tree: ast.AST) -> None:
    """Drop imports, docstrings, bare strings and `pass`; `x += y` becomes `x = x + y`, `x: T =
    y` becomes `x = y`, `f = lambda x: e` becomes `def f(x): return e`, and `t = a if c else
    t` becomes `if c: t = a`."""
    for node in walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                kept = [
                    s
                    for s in block
                    if not _is_docstring(s) and not isinstance(s, (ast.Import, ast.ImportFrom))
                ]
                setattr(node, name, kept)
    for node in walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list):
                for i, s in enumerate(block):
                    if isinstance(s, ast.AugAssign):
                        load = copy.copy(s.target)
                        load.ctx = ast.Load()
                        value = ast.BinOp(load, s.op, s.value)
                        block[i] = ast.copy_location(ast.Assign([s.target], value), s)
                    elif isinstance(s, ast.AnnAssign) and s.value is not None:
                        block[i] = ast.copy_location(ast.Assign([s.target], s.value), s)
                    elif _named_lambda(s):
                        block[i] = _as_def(s)
                    elif _keeps_itself(s):
                        block[i] = _as_if(s)


def _named_lambda(s: ast.stmt) -> bool:
    return (
        isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and isinstance(s.value, ast.Lambda)
    )


def _as_def(s: ast.Assign) -> ast.FunctionDef:
    """`f = lambda x: e` as `def f(x): return e` (a helper like any other)."""
    target, value = s.targets[0], s.value
    assert isinstance(target, ast.Name) and isinstance(value, ast.Lambda)
    body: list[ast.stmt] = [ast.copy_location(ast.Return(value.body), value.body)]
    fn = ast.FunctionDef(name=target.id, args=value.args, body=body, decorator_list=[])
    return ast.copy_location(fn, s)


def _keeps_itself(s: ast.stmt) -> bool:
    if not (isinstance(s, ast.Assign) and len(s.targets) == 1):
        return False
    target, value = s.targets[0], s.value
    return (
        isinstance(target, ast.Name)
        and isinstance(value, ast.IfExp)
        and any(isinstance(v, ast.Name) and v.id == target.id for v in (value.body, value.orelse))
    )


def _as_if(s: ast.Assign) -> ast.If:
    target, value = s.targets[0], s.value
    assert isinstance(target, ast.Name) and isinstance(value, ast.IfExp)
    test = value.test
    if isinstance(value.body, ast.Name) and value.body.id == target.id:
        test, other = ast.UnaryOp(ast.Not(), test), value.orelse
    else:
        other = value.body
    assign = ast.copy_location(ast.Assign([target], other), s)
    return ast.copy_location(ast.If(ast.copy_location(test, value), [assign], []), s)


class _Substitute(ast.NodeTransformer):
    def __init__(self, values: dict[str, ast.expr]):
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            return copy.deepcopy(self.values[node.id])
        return node


def _inline_helpers(tree: ast.Module, keep: str) -> None:
    """Inline each function of the cell (other than `keep`) with plain parameters and one
    `return`, its last statement: at its one call, or at every call when the `return` is all
    its body. An argument is put in place of its parameter where the helper never assigns it
    and reads it once (or the argument is a name); otherwise `parameter = argument` comes
    first."""
    for _ in range(INLINED):  # helpers of helpers, one call at a time
        defs = {n.name: n for n in walk(tree) if isinstance(n, ast.FunctionDef) and n.name != keep}
        calls: dict[str, list[ast.Call]] = {}
        for n in walk(tree):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in defs:
                calls.setdefault(n.func.id, []).append(n)
        done = False
        for name, fn in defs.items():
            found = calls.get(name, [])
            body = [s for s in fn.body if not _is_docstring(s)]
            if not found or not _inlinable(fn, body) or (len(found) > 1 and len(body) > 1):
                continue
            if any(n is c for c in found for n in walk(fn)):  # recursive
                continue
            call = found[0]
            if any(isinstance(a, ast.Starred) for a in call.args) or any(
                k.arg is None for k in call.keywords
            ):
                continue
            inlined = _bind(fn, call, body)
            if inlined is None:
                continue
            before, result = inlined
            if not _replace_call(tree, call, result, before):
                continue
            if len(found) == 1:
                _remove_def(tree, fn)
            done = True
            break
        if not done:
            return


def _inlinable(fn: ast.FunctionDef, body: list[ast.stmt]) -> bool:
    args = fn.args
    return (
        bool(body)
        and isinstance(body[-1], ast.Return)
        and not any(isinstance(n, ast.Return) for s in body[:-1] for n in walk(s))
        and not (args.vararg or args.kwarg or args.posonlyargs or args.kwonlyargs)
        and not any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in walk(fn))
    )


def _bind(
    fn: ast.FunctionDef, call: ast.Call, body: list[ast.stmt]
) -> tuple[list[ast.stmt], ast.expr] | None:
    """The statements to put before the call and the expression in its place."""
    args = fn.args
    params = [a.arg for a in args.args]
    if len(call.args) > len(params):
        return None
    values: dict[str, ast.expr] = dict(zip(params, call.args, strict=False))
    for kw in call.keywords:
        if kw.arg not in params or kw.arg in values:
            return None
        values[kw.arg] = kw.value
    defaults = dict(zip(params[len(params) - len(args.defaults) :], args.defaults, strict=True))
    for param in params:
        if param not in values:
            if param not in defaults:
                return None
            values[param] = defaults[param]
    stored = {
        n.id
        for s in body
        for n in walk(s)
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
    }
    reads = {p: 0 for p in params}
    for s in body:
        for n in walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in reads:
                reads[n.id] += 1
    substitute: dict[str, ast.expr] = {}
    before: list[ast.stmt] = []
    for param in params:
        value = values[param]
        if param not in stored and (isinstance(value, ast.Name) or reads[param] <= 1):
            substitute[param] = value
        elif not (isinstance(value, ast.Name) and value.id == param):
            target = ast.Name(param, ast.Store())
            before.append(ast.copy_location(ast.Assign([target], copy.deepcopy(value)), call))
    body = [_Substitute(substitute).visit(copy.deepcopy(s)) for s in body]
    result = body[-1].value or ast.Constant(None)  # type: ignore[attr-defined]
    return before + body[:-1], result


def _replace_call(tree: ast.AST, call: ast.Call, result: ast.expr, before: list[ast.stmt]) -> bool:
    """Put `result` where `call` is and the statements `before` ahead of the statement that
    holds it (in its own block)."""
    for node in walk(tree):
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
                        call in list(walk(x)) if isinstance(x, ast.AST) else False for x in inside
                    )
                    if not holds:
                        continue
                elif not any(n is call for n in walk(stmt)):
                    continue
                for parent in walk(stmt):
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
    for node in walk(tree):
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
    for node in walk(stmt):
        if (name := stored_name(node)) is not None:
            writes.add(name)
        elif isinstance(node, ast.Name):
            reads.add(node.id)
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
    for node, name, block in list(blocks(tree)):
        if len(block) > 1:
            setattr(node, name, _order(block, bound))


# ---- tokens


def _label(node: ast.AST, bound: set[str]) -> str | None:
    if isinstance(node, ast.Name):
        return PLACEHOLDER if node.id in bound else node.id
    if isinstance(node, ast.Attribute):
        return "." + node.attr
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, str) and _WORD.match(value):
            return "S:" + value  # a mode ("ignore"), einsum subscripts (canonical already)
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


def _defaults_of(tree: ast.Module) -> dict[str, tuple[tuple[str, str | None], ...]]:
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            args = node.args
            if args.vararg or args.kwarg or args.posonlyargs or args.kwonlyargs:
                continue
            params = [a.arg for a in args.args]
            given = [None] * (len(params) - len(args.defaults)) + [
                ast.dump(Canonical(set(), {}).visit(copy.deepcopy(d)), annotate_fields=False)
                for d in args.defaults
            ]
            found[node.name] = tuple(zip(params, given, strict=True))
    return found


def signatures(source: str) -> dict[str, tuple[tuple[str, str | None], ...]]:
    """The functions `source` defines (the release's stubs): their parameters and defaults,
    for `normalise`'s `defaults`. Empty when it is not Python."""
    try:
        return _defaults_of(parse_source(_without_magics(source)))
    except SyntaxError:
        return {}


def _canonical(tree: ast.Module, function: str | None, bound: set[str], defaults: Defaults) -> None:
    """The canonical rewrites, round after round until a round changes nothing but the
    expressions (which one round of `Canonical` leaves in their canonical form)."""
    rewrite = Canonical(bound, dict(defaults))
    for _ in range(ROUNDS):
        rewrite.visit(tree)
        shapes = restructure(tree)
        dead = remove_dead(tree, function)
        folded = fold_temporaries(tree)
        if not (shapes or dead or folded):
            return


def normalise(
    source: str, function: str = "", defaults: Defaults | None = None, every_def: bool = False
) -> Tokens:
    """The normalised tokens of a cell whose graded function is `function`; CannotCompare when
    the cell is not Python. `defaults`: the course's functions' parameters (`signatures`), so
    that a call that spells out a default argument is the call that leaves it out.
    `every_def`: keep every function the code defines, called or not (a known source's)."""
    try:
        return _normalise(source, function, defaults, True, every_def)
    except CannotCompare:
        raise
    except Exception:  # noqa: BLE001 - too deep once rewritten, or a rewrite's fault:
        return _normalise(source, function, defaults, False, every_def)  # without them


def _normalise(
    source: str, function: str, defaults: Defaults | None, canonical: bool, every_def: bool
) -> Tokens:
    try:
        tree = parse_source(_without_magics(source))
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        raise CannotCompare(f"not valid Python{where}: {exc.msg}") from None
    try:
        _numpy_names(tree)
        _clean(tree)
        bound = _bound_names(tree) - {function}  # a helper's parameters too
        small = sum(1 for _ in walk(tree)) <= CANONICAL_NODES
        if small:
            _inline_helpers(tree, function)
        if canonical and small:
            own = {k: v for k, v in (defaults or {}).items() if k not in bound}
            _canonical(tree, None if every_def else function, bound, own)
        _sort_blocks(tree, bound)
        pairs = [t for stmt in tree.body for t in _walk(stmt, bound)]
    except (RecursionError, MemoryError):
        raise CannotCompare("nested too deeply to be compared") from None
    return Tokens(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs))
