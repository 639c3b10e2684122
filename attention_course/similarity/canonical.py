"""Canonical forms: code that computes the same thing written one way, before fingerprinting.

A copy disguised by equivalent code (`np.e ** x` for `np.exp(x)`, `x.sum()` for `np.sum(x)`,
`np.true_divide`, `** 0.5` for `np.sqrt`, `np.moveaxis` for `np.swapaxes`, `np.matmul`, `np.dot`
or an einsum for `@`), by temporaries introduced or folded, by constant arithmetic (`* 1.0`,
`2 * 0.5`), or padded with dead code and asserts, becomes here the code it was copied from.
Each rewrite keeps what the code computes for the arrays of this course (`np.dot` is `@` on the
2-D arrays students pass; an einsum that is a matrix product is one); it does not have to keep
what it computes for every Python object, since the result is only compared, never run.

The rewrites work on the syntax tree, bottom-up, and are repeated until nothing changes:

- `Canonical` (a NodeTransformer): numpy synonyms, method calls as numpy functions, positional
  arguments named, keywords sorted, constants evaluated, identities (`x * 1`) dropped, the
  operands of commutative operators sorted, comparisons turned one way, einsum subscripts
  relabelled in order of appearance;
- `remove_dead`: code after a return, branches that can never run, statements with no effect
  (asserts, prints, bare expressions), stores nobody reads, helpers nobody calls;
- `fold_temporaries`: a name assigned and read once is replaced by its value; a name assigned a
  constant once is replaced by the constant everywhere.
"""

from __future__ import annotations

import ast
import copy
import math
import operator
import re
from collections.abc import Callable, Iterator
from typing import Any

# The numpy module is `np` once imports are read (normalise.py maps `numpy` and other aliases).
NP = "np"
MODULES = frozenset({NP, "math"})
# Functions with no effect but their result (a call of one as a statement does nothing).
_IMPURE_CALLS = frozenset({"exec", "eval", "setattr", "delattr", "open", "input", "globals"})
# Methods that change their object: a call of one is an effect, and its receiver is not a
# temporary to fold.
MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "update",
        "setdefault",
        "fill",
        "sort",
        "put",
        "itemset",
        "resize",
        "setflags",
        "add",
        "discard",
        "popitem",
        "reverse",
    }
)
_NP_MUTATORS = frozenset({"copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis"})

# numpy names that are one function under another name.
_NP_SYNONYMS = {
    "amax": "max",
    "amin": "min",
    "array": "asarray",
    "asanyarray": "asarray",
    "asfarray": "asarray",
    "true_divide": "divide",
    "row_stack": "vstack",
    "product": "prod",
    "alltrue": "all",
    "sometrue": "any",
    "round_": "round",
    "around": "round",
}
_NP_CONSTANTS = {
    "inf": math.inf,
    "Inf": math.inf,
    "Infinity": math.inf,
    "PINF": math.inf,
    "infty": math.inf,
    "NINF": -math.inf,
    "NaN": math.nan,
    "NAN": math.nan,
    "nan": math.nan,
    "e": math.e,
    "pi": math.pi,
    "newaxis": None,
}
_MATH_CONSTANTS = {"inf": math.inf, "nan": math.nan, "e": math.e, "pi": math.pi, "tau": math.tau}
_MATH_FUNCTIONS = {"sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tanh", "floor", "ceil"}
# numpy functions of constants that are evaluated.
_CONSTANT_FUNCTIONS: dict[str, Callable[[float], float]] = {
    "sqrt": math.sqrt,
    "exp": math.exp,
    "log": math.log,
    "float64": float,
    "float32": float,
    "float": float,
    "int": int,
}
# Array methods that are a numpy function of the array (x.sum(...) is np.sum(x, ...)).
_METHODS = frozenset(
    {
        "sum",
        "max",
        "min",
        "mean",
        "prod",
        "std",
        "var",
        "argmax",
        "argmin",
        "cumsum",
        "cumprod",
        "any",
        "all",
        "clip",
        "round",
        "swapaxes",
        "squeeze",
        "copy",
        "nonzero",
        "ravel",
        "trace",
        "diagonal",
        "repeat",
        "take",
        "conj",
    }
)
# The parameters that numpy functions take positionally after their first; further positional
# arguments are given their keyword names, so `np.sum(x, -1)` is `np.sum(x, axis=-1)`.
_REDUCTIONS = ("axis", "dtype", "out", "keepdims")
_SIGNATURES: dict[str, tuple[int, tuple[str, ...]]] = {
    # name: (arguments kept positional, the names of the ones after them)
    **{
        f: (1, _REDUCTIONS)
        for f in ("sum", "mean", "prod", "cumsum", "cumprod", "nansum", "nanmean", "std", "var")
    },
    **{f: (1, ("axis", "out", "keepdims")) for f in ("max", "min", "any", "all", "nanmax")},
    **{f: (1, ("axis", "out")) for f in ("argmax", "argmin")},
    "asarray": (1, ("dtype", "order")),
    "triu": (1, ("k",)),
    "tril": (1, ("k",)),
    "tri": (1, ("M", "k", "dtype")),
    "ones": (1, ("dtype", "order")),
    "zeros": (1, ("dtype", "order")),
    "empty": (1, ("dtype", "order")),
    "ones_like": (1, ("dtype",)),
    "zeros_like": (1, ("dtype",)),
    "empty_like": (1, ("dtype",)),
    "full": (2, ("dtype", "order")),
    "full_like": (2, ("dtype",)),
    "concatenate": (1, ("axis",)),
    "stack": (1, ("axis",)),
    "expand_dims": (1, ("axis",)),
    "squeeze": (1, ("axis",)),
    "nan_to_num": (1, ("copy", "nan", "posinf", "neginf")),
    "tensordot": (2, ("axes",)),
    "round": (1, ("decimals",)),
    "clip": (3, ()),
    "reshape": (2, ("order",)),
    "transpose": (1, ("axes",)),
    "isclose": (2, ("rtol", "atol")),
    "allclose": (2, ("rtol", "atol")),
}
# The keywords of those given positionally when named (np.ones(shape=s) is np.ones(s)).
_FIRST_NAMES = {"shape": 0, "a": 0, "m": 0, "N": 0, "x": 0, "arr": 0, "arrays": 0}
_DTYPES = {
    "float": "float",
    "float64": "float",
    "double": "float",
    "float_": "float",
    "bool": "bool",
    "bool_": "bool",
    "int": "int",
    "int64": "int",
    "int_": "int",
}
# Two-argument numpy functions that are an operator.
_BINARY = {
    "divide": ast.Div,
    "multiply": ast.Mult,
    "add": ast.Add,
    "subtract": ast.Sub,
    "power": ast.Pow,
    "matmul": ast.MatMult,
    "dot": ast.MatMult,
    "logical_and": ast.BitAnd,
    "logical_or": ast.BitOr,
    "logical_xor": ast.BitXor,
    "bitwise_and": ast.BitAnd,
    "bitwise_or": ast.BitOr,
    "mod": ast.Mod,
    "remainder": ast.Mod,
    "floor_divide": ast.FloorDiv,
}
_COMPARE = {
    "equal": ast.Eq,
    "not_equal": ast.NotEq,
    "greater": ast.Gt,
    "greater_equal": ast.GtE,
    "less": ast.Lt,
    "less_equal": ast.LtE,
}
_UNARY = {"negative": ast.USub, "logical_not": ast.Invert, "invert": ast.Invert}
_COMMUTATIVE = (ast.Add, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor)
_FLIPPED: dict[type, type] = {ast.Gt: ast.Lt, ast.GtE: ast.LtE}
_NEGATED: dict[type, type] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
}
_FOLD: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
# A temporary whose value has more nodes than this is not folded: a line of numpy has a few
# dozen, and folding a long chain of assignments would build one expression as deep as it.
FOLDED_NODES = 80
# ... nor one whose read is more than this many statements after it (nor one read more often
# than this, when it is never assigned again): what it costs stays bounded in long cells.
FOLD_WINDOW = 50
# Keywords that are a flag: keepdims=1 is keepdims=True.
_FLAGS = frozenset({"keepdims", "copy", "endpoint", "sparse"})
# Values of np.errstate that change what the code computes (the others only hide warnings).
_ERRSTATE_ACTS = frozenset({"raise", "call"})
_EINSUM = re.compile(r"^[A-Za-z.,\->\s]+$")


# ---- small helpers


def children(node: ast.AST) -> Iterator[ast.AST]:
    """The child nodes of `node`, its context nodes (Load, Store) left out."""
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            yield from (v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST) and not isinstance(value, ast.expr_context):
            yield value


def walk(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node under `tree` (itself included), as ast.walk, but in one loop and without
    the Load and Store context nodes, which the rewrites never need (the normalisation walks
    each cell's tree many times)."""
    stack = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        node = pop()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                extend(v for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST) and not isinstance(value, ast.expr_context):
                push(value)
        yield node


def np_attr(node: ast.AST, module: str = NP) -> str | None:
    """`name` when `node` is `<module>.name`, else None."""
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == module
    ):
        return node.attr
    return None


def _np(name: str, like: ast.AST) -> ast.Attribute:
    return ast.copy_location(ast.Attribute(ast.Name(NP, ast.Load()), name, ast.Load()), like)


def _call(name: str, args: list[ast.expr], like: ast.AST, keywords=()) -> ast.Call:
    return ast.copy_location(ast.Call(_np(name, like), list(args), list(keywords)), like)


def number(node: ast.AST) -> float | int | complex | None:
    """The value of a numeric constant (True and False are not numbers here)."""
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
            return value
    return None


def _is(node: ast.AST, value: float) -> bool:
    found = number(node)
    return found is not None and found == value


def _constant(value: Any, like: ast.AST) -> ast.expr:
    return ast.copy_location(ast.Constant(value), like)


def _same_call(node: ast.Call, args: list[ast.expr], keywords: list[ast.keyword]) -> bool:
    """Whether a call rebuilt from `args` and `keywords` would be `node` itself (the same
    argument nodes, the same keywords in the same order)."""
    return (
        len(args) == len(node.args)
        and all(a is b for a, b in zip(args, node.args, strict=True))
        and [(k.arg, id(k.value)) for k in keywords]
        == [(k.arg, id(k.value)) for k in node.keywords]
    )


def _labels(node: ast.AST) -> str:
    """A sort key for a subtree: its dump without positions."""
    return ast.dump(node, annotate_fields=False)


def pure(node: ast.AST) -> bool:
    """Whether evaluating `node` changes nothing but its result (as far as it can be read)."""
    for n in walk(node):
        if isinstance(n, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
            return False
        if isinstance(n, ast.Call):
            f = n.func
            if any(k.arg == "out" for k in n.keywords):
                return False
            if isinstance(f, ast.Attribute) and (f.attr in MUTATORS or f.attr in _NP_MUTATORS):
                return False
            if isinstance(f, ast.Name) and f.id in _IMPURE_CALLS:
                return False
            if isinstance(f, ast.Attribute) and np_attr(f.value) == "random":
                return False
    return True


def blocks(tree: ast.AST) -> Iterator[tuple[ast.AST, str, list[ast.stmt]]]:
    """Every block of statements: (its node, the field, the list). Only statements are
    visited (no block lies inside an expression), outer blocks first."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        found = []
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and (not block or isinstance(block[0], ast.stmt)):
                found.append((node, name, block))
        if isinstance(node, ast.Try):
            found += [(handler, "body", handler.body) for handler in node.handlers]
        for item in found:
            yield item
            stack.extend(reversed(item[2]))


# ---- einsum


def einsum_meaning(spec: str, operands: int) -> str | None:
    """The subscripts of an einsum relabelled a, b, c... in order of appearance, with the
    output made explicit; None when the string is not an einsum of `operands` operands."""
    spec = spec.replace(" ", "")
    if not _EINSUM.match(spec) or spec.count("->") > 1:
        return None
    inputs, _, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != operands or any(t.replace("...", "").count(".") for t in terms):
        return None
    letters = [c for t in terms for c in t.replace("...", "") if c.isalpha()]
    if "->" not in spec:  # numpy's implicit output: the letters used once, sorted
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        output = ("..." if any("..." in t for t in terms) else "") + "".join(once)
    names: dict[str, str] = {}
    for c in letters + list(output.replace("...", "")):
        if c.isalpha() and c not in names:
            if len(names) >= 26:
                return None
            names[c] = chr(ord("a") + len(names))
    relabel = "".join(names.get(c, c) for c in ",".join(terms) + "->" + output)
    return relabel


def _matmul_of(meaning: str) -> str | None:
    """'plain' when an einsum's meaning is A @ B, 'swapped' when A @ B^T, else None."""
    inputs, output = meaning.split("->")
    a, b = inputs.split(",")
    strip = [t[:-2] for t in (a, b, output)]
    ends = [t[-2:] for t in (a, b, output)]
    if any(len(e) < 2 or "." in e for e in ends):
        return None
    pa, pb, po = strip
    if po != max(pa, pb, key=len) or (pa and pb and pa != pb):
        return None
    if not all(p in ("", "...") or p.isalpha() for p in strip):
        return None
    i, j, x, y, o1, o2 = ends[0][0], ends[0][1], ends[1][0], ends[1][1], ends[2][0], ends[2][1]
    if len({i, j, x, y} | {o1, o2}) != 3 or (o1, o2) != (i, y if x == j else x):
        return None
    if x == j and o2 == y:
        return "plain"
    if y == j and o2 == x:
        return "swapped"
    return None


# ---- the rewrites of one expression


class Canonical(ast.NodeTransformer):
    """Equivalent expressions rewritten to one form, bottom-up. `bound`: the names the cell
    binds (never a module); `defaults`: function -> its parameters and their defaults (for
    the course's own functions, whose calls drop default arguments)."""

    def __init__(
        self, bound: set[str], defaults: dict[str, tuple[tuple[str, str | None], ...]]
    ) -> None:
        self.bound = bound
        self.defaults = defaults
        self.changed = False  # whether the last visits rewrote anything

    def module(self, node: ast.AST | None) -> str | None:
        if isinstance(node, ast.Name) and node.id in MODULES and node.id not in self.bound:
            return node.id
        return None

    def generic_visit(self, node: ast.AST) -> ast.AST:
        node = super().generic_visit(node)
        for _ in range(20):  # a rewrite may enable another on the same node
            new = self.rewrite(node)
            if new is node:
                return node
            self.changed = True
            node = new
        return node

    def rewrite(self, node: ast.AST) -> ast.AST:
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.UnaryOp):
            return self.unaryop(node)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.If | ast.IfExp):
            return self.branch(node)
        if isinstance(node, ast.Return) and isinstance(node.value, ast.List):
            values = ast.copy_location(ast.Tuple(node.value.elts, ast.Load()), node.value)
            return ast.copy_location(ast.Return(values), node)  # return [a, b]: return a, b
        return node

    # -- names and attributes

    def attribute(self, node: ast.Attribute) -> ast.AST:
        module = self.module(node.value)
        if module == NP and node.attr in _NP_CONSTANTS and node.attr != "e":
            return _constant(_NP_CONSTANTS[node.attr], node)
        if module == "math" and node.attr in _MATH_CONSTANTS and node.attr != "e":
            return _constant(_MATH_CONSTANTS[node.attr], node)
        if module == "math" and node.attr == "e":
            return _np("e", node)
        if module is None and node.attr == "T" and isinstance(node.ctx, ast.Load):
            return _call("transpose", [node.value], node)
        return node

    # -- calls

    def call(self, node: ast.Call) -> ast.AST:
        f = node.func
        if isinstance(f, ast.Attribute) and self.module(f.value) == "math":
            if f.attr in _MATH_FUNCTIONS:
                return ast.copy_location(ast.Call(_np(f.attr, f), node.args, node.keywords), node)
        if isinstance(f, ast.Attribute) and self.module(f.value) is None:
            return self.method(node, f)
        name = np_attr(f) if self.module(getattr(f, "value", None)) == NP else None
        if name is not None:
            return self.numpy(node, name)
        if isinstance(f, ast.Name) and f.id not in self.bound:
            return self.builtin(node, f.id)
        return node

    def method(self, node: ast.Call, f: ast.Attribute) -> ast.AST:
        """x.m(...) as the numpy function np.m(x, ...)."""
        receiver, m = f.value, f.attr
        if any(isinstance(a, ast.Starred) for a in node.args) and m in ("reshape", "transpose"):
            return node
        if m == "dot" and len(node.args) == 1 and not node.keywords:
            return ast.copy_location(ast.BinOp(receiver, ast.MatMult(), node.args[0]), node)
        if m == "astype" and len(node.args) == 1:
            keywords = [ast.keyword("dtype", node.args[0]), *node.keywords]
            return _call("asarray", [receiver], node, keywords)
        if m in ("reshape", "transpose") and len(node.args) > 1:
            shape = ast.copy_location(ast.Tuple(list(node.args), ast.Load()), node)
            return _call(m, [receiver, shape], node, node.keywords)
        if m in ("reshape", "transpose") or m in _METHODS:
            return _call(m, [receiver, *node.args], node, node.keywords)
        return node

    def builtin(self, node: ast.Call, name: str) -> ast.AST:
        args = node.args
        if name == "float" and len(args) == 1 and isinstance(args[0], ast.Constant):
            text = args[0].value
            if isinstance(text, str) and text.strip().lower() in ("inf", "-inf", "nan", "+inf"):
                return _constant(float(text), node)
        if name in ("float", "int") and len(args) == 1 and number(args[0]) is not None:
            try:
                return _constant(_CONSTANT_FUNCTIONS[name](number(args[0])), node)  # type: ignore[arg-type]
            except (ValueError, OverflowError, TypeError):
                return node
        if name == "range" and len(args) in (2, 3) and _is(args[0], 0):
            if len(args) == 2 or _is(args[2], 1):
                return ast.copy_location(ast.Call(node.func, [args[1]], node.keywords), node)
        if name in self.defaults:
            return self.course_call(node, name)
        return node

    def course_call(self, node: ast.Call, name: str) -> ast.AST:
        """A call of one of the course's functions: required arguments positional, the
        others by name, those equal to their default left out."""
        params = self.defaults[name]
        if any(isinstance(a, ast.Starred) for a in node.args) or len(node.args) > len(params):
            return node
        if any(k.arg is None for k in node.keywords):
            return node
        given = {params[i][0]: a for i, a in enumerate(node.args)}
        given.update({k.arg: k.value for k in node.keywords if k.arg})
        if any(p not in [q for q, _ in params] for p in given):
            return node
        args: list[ast.expr] = []
        keywords: list[ast.keyword] = []
        for param, default in params:
            if param not in given:
                continue
            value = given[param]
            if default is None:
                args.append(value)
            elif _labels(value) != default:
                keywords.append(ast.keyword(param, value))
        if _same_call(node, args, keywords):
            return node
        return ast.copy_location(ast.Call(node.func, args, keywords), node)

    def numpy(self, node: ast.Call, name: str) -> ast.AST:
        args, keywords = node.args, node.keywords
        starred = any(isinstance(a, ast.Starred) for a in args) or any(
            k.arg is None for k in keywords
        )
        if name in _NP_SYNONYMS:
            return _call(_NP_SYNONYMS[name], args, node, keywords)
        if not starred and len(args) == 2 and not keywords:
            if name in _BINARY:
                return ast.copy_location(ast.BinOp(args[0], _BINARY[name](), args[1]), node)
            if name in _COMPARE:
                return ast.copy_location(ast.Compare(args[0], [_COMPARE[name]()], [args[1]]), node)
        if not starred and len(args) == 1 and not keywords and name in _UNARY:
            return ast.copy_location(ast.UnaryOp(_UNARY[name](), args[0]), node)
        if name in _CONSTANT_FUNCTIONS and len(args) == 1 and not keywords:
            value = number(args[0])
            if value is not None:
                try:
                    return _constant(_CONSTANT_FUNCTIONS[name](value), node)  # type: ignore[arg-type]
                except (ValueError, OverflowError, TypeError):
                    return node
        if starred:
            return node
        if name == "moveaxis" and len(args) == 3 and not keywords:
            return self.moveaxis(node, args)
        if name == "swapaxes" and len(args) == 3 and not keywords:
            i, j = number(args[1]), number(args[2])
            if isinstance(i, int) and isinstance(j, int) and i < j:  # one order of the two axes
                return _call("swapaxes", [args[0], args[2], args[1]], node)
            return node
        if name == "einsum" and args and isinstance(args[0], ast.Constant):
            return self.einsum(node, args)
        if name == "full" and len(args) >= 2 and isinstance(args[1], ast.Constant):
            return self.full(node, args, keywords)
        if name == "where" and len(args) == 3 and not keywords:
            test = args[0]
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, (ast.Invert, ast.Not)):
                return _call("where", [test.operand, args[2], args[1]], node)
        if name == "arange" and len(args) in (2, 3) and _is(args[0], 0):
            if len(args) == 2 or _is(args[2], 1):
                return _call("arange", [args[1]], node, keywords)
        if name in ("maximum", "minimum") and len(args) == 2 and not keywords:
            ordered = sorted(args, key=_labels)
            if ordered != args:
                return _call(name, ordered, node)
        return self.arguments(node, name, args, keywords)

    def moveaxis(self, node: ast.Call, args: list[ast.expr]) -> ast.AST:
        i, j = number(args[1]), number(args[2])
        if isinstance(i, int) and isinstance(j, int) and abs(i - j) == 1 and (i < 0) == (j < 0):
            return _call("swapaxes", [args[0], args[1], args[2]], node)
        return node

    def einsum(self, node: ast.Call, args: list[ast.expr]) -> ast.AST:
        spec = args[0].value  # type: ignore[attr-defined]
        if not isinstance(spec, str):
            return node
        meaning = einsum_meaning(spec, len(args) - 1)
        if meaning is None:
            return node
        if len(args) == 3 and not node.keywords:
            kind = _matmul_of(meaning)
            if kind == "plain":
                return ast.copy_location(ast.BinOp(args[1], ast.MatMult(), args[2]), node)
            if kind == "swapped":
                swapped = _call(
                    "swapaxes", [args[2], _constant(-1, node), _constant(-2, node)], node
                )
                return ast.copy_location(ast.BinOp(args[1], ast.MatMult(), swapped), node)
        if meaning == spec:
            return node
        return _call("einsum", [_constant(meaning, args[0]), *args[1:]], node, node.keywords)

    def full(self, node: ast.Call, args: list[ast.expr], keywords: list[ast.keyword]) -> ast.AST:
        fill = args[1].value  # type: ignore[attr-defined]
        if fill is True or fill is False:
            name = "ones" if fill else "zeros"
            dtype = ast.keyword("dtype", ast.Name("bool", ast.Load()))
            rest = [k for k in keywords if k.arg != "dtype"]
            return _call(name, [args[0]], node, [*rest, dtype])
        if isinstance(fill, (int, float)) and fill in (0, 1):
            return _call("ones" if fill == 1 else "zeros", [args[0]], node, keywords)
        return node

    def arguments(
        self, node: ast.Call, name: str, args: list[ast.expr], keywords: list[ast.keyword]
    ) -> ast.AST:
        """Positional arguments after the first named, named first arguments positional,
        keywords sorted, dtypes spelt one way."""
        keep, names = _SIGNATURES.get(name, (len(args), ()))
        new_args = list(args[:keep])
        new_keywords = [ast.keyword(n, a) for n, a in zip(names, args[keep:], strict=False)]
        if len(args) > keep + len(names):
            return node
        for k in keywords:
            if k.arg in _FIRST_NAMES and name in _SIGNATURES and not new_args:
                new_args.append(k.value)
            else:
                new_keywords.append(ast.keyword(k.arg, k.value))
        for k in new_keywords:
            if k.arg == "dtype":
                k.value = self.dtype(k.value)  # a new node when it is spelt another way
            elif k.arg in _FLAGS and isinstance(k.value, ast.Constant):
                if k.value.value in (0, 1) and not isinstance(k.value.value, bool):
                    k.value = _constant(bool(k.value.value), k.value)
        new_keywords.sort(key=lambda k: k.arg or "")
        if _same_call(node, new_args, new_keywords):
            return node
        return _call(name, new_args, node, new_keywords)

    def dtype(self, node: ast.expr) -> ast.expr:
        spelt = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            spelt = node.value
        elif isinstance(node, ast.Name) and node.id not in self.bound:
            spelt = node.id
        elif (attr := np_attr(node)) is not None:
            spelt = attr
        if spelt in _DTYPES:
            return ast.copy_location(ast.Name(_DTYPES[spelt], ast.Load()), node)
        return node

    # -- operators

    def binop(self, node: ast.BinOp) -> ast.AST:
        left, op, right = node.left, node.op, node.right
        a, b = number(left), number(right)
        if a is not None and b is not None and type(op) in _FOLD:
            return self.fold(node, a, b)
        if isinstance(op, ast.Pow):
            if np_attr(left) == "e" and self.module(getattr(left, "value", None)) == NP:
                return _call("exp", [right], node)
            if b == 0.5:
                return _call("sqrt", [left], node)
            if b == -0.5:
                root = _call("sqrt", [left], node)
                return ast.copy_location(ast.BinOp(_constant(1, node), ast.Div(), root), node)
            if b == -1:
                return ast.copy_location(ast.BinOp(_constant(1, node), ast.Div(), left), node)
            if b == 1:
                return left
        if isinstance(op, ast.Mult):
            if _is(right, 1):
                return left
            if _is(left, 1):
                return right
            for x, y in ((left, right), (right, left)):  # x * (1 / y) is x / y
                if isinstance(y, ast.BinOp) and isinstance(y.op, ast.Div) and _is(y.left, 1):
                    return ast.copy_location(ast.BinOp(x, ast.Div(), y.right), node)
        if isinstance(op, ast.Div) and _is(right, 1):
            return left
        if isinstance(op, (ast.Add, ast.Sub)) and _is(right, 0):
            return left
        if isinstance(op, ast.Add) and _is(left, 0):
            return right
        if isinstance(op, _COMMUTATIVE):
            return self.commute(node)
        return node

    def fold(self, node: ast.BinOp, a: Any, b: Any) -> ast.AST:
        if isinstance(node.op, ast.Pow) and (abs(b) > 64 or abs(a) > 1e6):
            return node
        try:
            value = _FOLD[type(node.op)](a, b)
        except (ArithmeticError, ValueError, TypeError):
            return node
        if isinstance(value, complex) or (isinstance(value, float) and math.isnan(value)):
            return node
        if isinstance(value, int) and abs(value) > 1 << 64:
            return node
        return _constant(value, node)

    def commute(self, node: ast.BinOp) -> ast.AST:
        """A chain of one commutative operator, its operands sorted."""
        op = type(node.op)
        operands: list[ast.expr] = []
        stack: list[ast.expr] = [node]
        while stack:
            here = stack.pop()
            if isinstance(here, ast.BinOp) and isinstance(here.op, op):
                stack += [here.right, here.left]
            else:
                operands.append(here)
        ordered = sorted(operands, key=_labels)
        if [id(x) for x in ordered] == [id(x) for x in operands]:
            return node
        out = ordered[0]
        for x in ordered[1:]:
            out = ast.copy_location(ast.BinOp(out, op(), x), node)
        return out

    def unaryop(self, node: ast.UnaryOp) -> ast.AST:
        value = number(node.operand)
        if value is not None and isinstance(node.op, (ast.USub, ast.UAdd)):
            return _constant(-value if isinstance(node.op, ast.USub) else value, node)
        if isinstance(node.op, ast.UAdd):
            return node.operand
        inner = node.operand
        if isinstance(inner, ast.UnaryOp) and type(inner.op) is type(node.op):
            if isinstance(node.op, (ast.USub, ast.Invert, ast.Not)):
                return inner.operand
        if isinstance(node.op, (ast.Not, ast.Invert)) and isinstance(inner, ast.Compare):
            if len(inner.ops) == 1 and type(inner.ops[0]) in _NEGATED:
                negated = _NEGATED[type(inner.ops[0])]()
                return ast.copy_location(
                    ast.Compare(inner.left, [negated], inner.comparators), node
                )
        return node

    def compare(self, node: ast.Compare) -> ast.AST:
        if len(node.ops) != 1:
            return node
        op, left, right = node.ops[0], node.left, node.comparators[0]
        if isinstance(op, (ast.Eq, ast.Is)) and isinstance(right, ast.Constant):
            if right.value is True:
                return left
            if right.value is False:
                return ast.copy_location(ast.UnaryOp(ast.Invert(), left), node)
        if type(op) in _FLIPPED:
            return ast.copy_location(ast.Compare(right, [_FLIPPED[type(op)]()], [left]), node)
        if isinstance(op, (ast.Eq, ast.NotEq)) and _labels(right) < _labels(left):
            return ast.copy_location(ast.Compare(right, [op], [left]), node)
        return node

    def branch(self, node: ast.If | ast.IfExp) -> ast.AST:
        """`if not c: A else: B` is `if c: B else: A` (and the same for `A if c else B`)."""
        test = node.test
        if isinstance(node, ast.If) and not node.orelse:
            return node
        negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        compare = isinstance(test, ast.Compare) and len(test.ops) == 1
        if compare and isinstance(test.ops[0], (ast.IsNot, ast.NotEq)):  # type: ignore[attr-defined]
            op = _NEGATED[type(test.ops[0])]()  # type: ignore[attr-defined]
            positive: ast.expr = ast.Compare(test.left, [op], test.comparators)  # type: ignore[attr-defined]
        elif negated:
            positive = test.operand  # type: ignore[attr-defined]
        else:
            return node
        if isinstance(node, ast.If):
            return ast.copy_location(ast.If(positive, node.orelse, node.body), node)
        return ast.copy_location(ast.IfExp(positive, node.orelse, node.body), node)


# ---- statement shapes


def _quiet(item: ast.withitem) -> bool:
    """Whether a `with` item is np.errstate(...) that only hides warnings."""
    call = item.context_expr
    return (
        isinstance(call, ast.Call)
        and np_attr(call.func) == "errstate"
        and item.optional_vars is None
        and not call.args
        and all(
            isinstance(k.value, ast.Constant) and k.value.value not in _ERRSTATE_ACTS
            for k in call.keywords
        )
    )


def _reraises(handler: ast.ExceptHandler) -> bool:
    return bool(handler.body) and isinstance(handler.body[-1], ast.Raise)


def _split_tuple(stmt: ast.Assign) -> list[ast.stmt] | None:
    """`a, b = x, y` as `a = x` then `b = y`, when no value reads a name assigned before it."""
    if len(stmt.targets) != 1:
        return None
    target, value = stmt.targets[0], stmt.value
    if not (isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)):
        return None
    if len(target.elts) != len(value.elts) or not all(isinstance(t, ast.Name) for t in target.elts):
        return None
    names = [t.id for t in target.elts]  # type: ignore[attr-defined]
    if len(set(names)) != len(names):
        return None
    for i, v in enumerate(value.elts):
        reads = {n.id for n in walk(v) if isinstance(n, ast.Name)}
        if reads & set(names[:i]) or isinstance(v, ast.Starred):
            return None
    return [
        ast.copy_location(ast.Assign([ast.Name(n, ast.Store())], v), stmt)
        for n, v in zip(names, value.elts, strict=True)
    ]


def _step(node: ast.expr, v: str) -> str:
    if isinstance(node, ast.Name) and node.id == v:
        return "v"
    return "one" if number(node) == 1 else "other"


def _counted(block: list[ast.stmt], i: int) -> ast.For | None:
    """`v = start; while v < stop: ...; v = v + 1` as `for v in range(start, stop): ...`
    (`v` assigned nowhere else in the loop, nothing leaving it early)."""
    init, loop = block[i], block[i + 1]
    if not (isinstance(init, ast.Assign) and isinstance(loop, ast.While) and not loop.orelse):
        return None
    if len(init.targets) != 1 or not isinstance(init.targets[0], ast.Name):
        return None
    v = init.targets[0].id
    test = loop.test
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Lt)
        and isinstance(test.left, ast.Name)
        and test.left.id == v
    ):
        return None
    if not loop.body:
        return None
    step = loop.body[-1]
    if not (
        isinstance(step, ast.Assign)
        and len(step.targets) == 1
        and isinstance(step.targets[0], ast.Name)
        and step.targets[0].id == v
        and isinstance(step.value, ast.BinOp)
        and isinstance(step.value.op, ast.Add)
        and sorted(_step(x, v) for x in (step.value.left, step.value.right)) == ["one", "v"]
    ):
        return None
    body = loop.body[:-1]
    for s in body:
        for n in walk(s):
            if isinstance(n, (ast.Break, ast.Continue)):
                return None
            if isinstance(n, ast.Name) and n.id == v and isinstance(n.ctx, ast.Store):
                return None
    stop = test.comparators[0]
    if any(isinstance(n, ast.Name) and n.id == v for n in walk(stop)):
        return None
    rng = ast.Call(ast.Name("range", ast.Load()), [init.value, stop], [])
    target = ast.Name(v, ast.Store())
    return ast.copy_location(
        ast.For(target, ast.copy_location(rng, loop), body or [ast.Pass()], [], None), loop
    )


def restructure(tree: ast.AST) -> bool:
    """Statement shapes that compute the same: np.errstate blocks that only hide warnings and
    try blocks whose every handler raises again are their bodies; a tuple assignment is one
    assignment per name; a counted while loop is a for loop over a range. Whether anything
    changed."""
    changed = False
    for node, name, block in list(blocks(tree)):
        out: list[ast.stmt] = []
        i = 0
        while i < len(block):
            stmt = block[i]
            if isinstance(stmt, ast.With) and stmt.items and all(_quiet(w) for w in stmt.items):
                out += stmt.body
            elif (
                isinstance(stmt, ast.Try)
                and stmt.handlers
                and all(_reraises(h) for h in stmt.handlers)
            ):
                out += stmt.body + stmt.orelse + stmt.finalbody
            elif isinstance(stmt, ast.Assign) and (split := _split_tuple(stmt)) is not None:
                out += split
            elif i + 1 < len(block) and (loop := _counted(block, i)) is not None:
                out.append(loop)
                i += 1
            else:
                out.append(stmt)
            i += 1
        if len(out) != len(block) or any(a is not b for a, b in zip(out, block, strict=True)):
            setattr(node, name, out)
            changed = True
    return changed


# ---- dead code


def _loads(tree: ast.AST) -> dict[str, int]:
    counts: dict[str, int] = {}
    for n in walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def _targets(stmt: ast.stmt) -> list[str] | None:
    """The names a plain assignment stores (None when it stores anything else)."""
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        targets = [stmt.target]
    else:
        return None
    names: list[str] = []
    for t in targets:
        parts = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
        for p in parts:
            if not isinstance(p, ast.Name):
                return None
            names.append(p.id)
    return names


_ENDS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _constant_test(test: ast.expr) -> bool | None:
    if isinstance(test, ast.Constant):
        return bool(test.value)
    return None


def _prune(block: list[ast.stmt], keep: str | None, loads: dict[str, int]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for stmt in block:
        if isinstance(stmt, ast.Assert):
            continue
        if isinstance(stmt, ast.Expr) and pure(stmt.value):
            continue  # a bare expression, a print, a docstring: no effect on the result
        if isinstance(stmt, (ast.If, ast.While)):
            known = _constant_test(stmt.test)
            if known is False:
                out += stmt.orelse if isinstance(stmt, ast.If) else []
                continue
            if known is True and isinstance(stmt, ast.If):
                out += stmt.body
                continue
            if isinstance(stmt, ast.If) and not stmt.body and not stmt.orelse:
                if pure(stmt.test):
                    continue
        if isinstance(stmt, (ast.For, ast.With)) and not stmt.body:
            continue
        if isinstance(stmt, ast.For) and isinstance(stmt.iter, (ast.List, ast.Tuple)):
            if not stmt.iter.elts:
                out += stmt.orelse
                continue
        names = _targets(stmt)
        if names is not None and pure(stmt.value):  # type: ignore[attr-defined]
            if all(loads.get(n, 0) == 0 for n in names):
                continue  # a store nobody reads
            value = stmt.value  # type: ignore[attr-defined]
            if len(names) == 1 and isinstance(value, ast.Name) and value.id == names[0]:
                continue  # x = x
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)) and keep is not None:
            if stmt.name != keep and loads.get(stmt.name, 0) == 0:
                continue  # a helper nobody calls
        out.append(stmt)
        if isinstance(stmt, _ENDS):
            break  # what follows never runs
    return out


def _overwritten(block: list[ast.stmt]) -> list[ast.stmt]:
    """Drop `t = value` when the next statement of the block that touches `t` assigns it
    again without reading it."""
    drop: set[int] = set()
    names_of: list[set[str]] | None = None
    for i, stmt in enumerate(block):
        names = _targets(stmt)
        if names is None or len(names) != 1 or not pure(stmt.value):  # type: ignore[attr-defined]
            continue
        if names_of is None:  # each statement's names and whether it leaves the block
            names_of = [
                {n.id for n in walk(s) if isinstance(n, ast.Name)}
                | ({"<ends>"} if any(isinstance(n, _ENDS) for n in walk(s)) else set())
                for s in block
            ]
        t = names[0]
        for j in range(i + 1, min(len(block), i + 1 + FOLD_WINDOW)):
            later = block[j]
            if t not in names_of[j] and "<ends>" not in names_of[j]:
                continue
            if _targets(later) == [t] and not _loads(later).get(t):
                drop.add(i)
            break  # read, stored in a nested block, or the block may end here
    return [s for i, s in enumerate(block) if i not in drop]


def remove_dead(tree: ast.AST, keep: str | None) -> bool:
    """Remove what cannot change the result of the function `keep` (see the module's doc);
    whether anything was removed. With `keep` None, every function stays (a known source's
    code: each of its functions may be what a student took)."""
    loads = _loads(tree)
    changed = False
    for node, name, block in list(blocks(tree)):
        pruned = _overwritten(_prune(block, keep, loads))
        if len(pruned) != len(block) or any(
            a is not b for a, b in zip(pruned, block, strict=False)
        ):
            setattr(node, name, pruned)
            changed = True
    for node in walk(tree):
        if isinstance(node, ast.If) and not node.body and node.orelse:
            node.test = ast.copy_location(ast.UnaryOp(ast.Not(), node.test), node.test)
            node.body, node.orelse = node.orelse, []
            changed = True
    return changed


# ---- temporaries


def _in_loop(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    here = parents.get(id(node))
    while here is not None:
        if isinstance(here, (ast.For, ast.While, ast.comprehension)):
            return True
        if isinstance(here, (ast.FunctionDef, ast.Lambda)):
            return False
        here = parents.get(id(here))
    return False


def stored_name(node: ast.AST) -> str | None:
    """The name a store changes: `x` in `x = ...`, `x[i] = ...`, `x.a.b = ...`, `del x`."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return node.id
    if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(
        node.ctx, (ast.Store, ast.Del)
    ):
        base = node.value
        while isinstance(base, (ast.Subscript, ast.Attribute)):
            base = base.value
        return base.id if isinstance(base, ast.Name) else None
    return None


def _written(stmts: list[ast.stmt]) -> set[str]:
    """Names (and the bases of subscripts and attributes) the statements store into."""
    out: set[str] = set()
    for s in stmts:
        for n in walk(s):
            if (name := stored_name(n)) is not None:
                out.add(name)
            elif isinstance(n, ast.Call) and not pure(n):
                f = n.func
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                    out.add(f.value.id)
                for arg in [*n.args, *(k.value for k in n.keywords)]:
                    if isinstance(arg, ast.Name):
                        out.add(arg.id)
    return out


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.Name, value: ast.expr) -> None:
        self.target, self.value = target, value

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return copy.deepcopy(self.value) if node is self.target else node


def _use(stmts: list[ast.stmt], name: str) -> list[ast.Name]:
    return [
        n
        for s in stmts
        for n in walk(s)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
    ]


def _mutates(use: ast.Name, parents: dict[int, ast.AST]) -> bool:
    """Whether this read of a name is the object of a change (x[i] = ..., x.append(...))."""
    here: ast.AST = use
    parent = parents.get(id(here))
    while isinstance(parent, (ast.Subscript, ast.Attribute)) and parent.value is here:
        if isinstance(parent.ctx, (ast.Store, ast.Del)):
            return True
        grand = parents.get(id(parent))
        if isinstance(parent, ast.Attribute) and isinstance(grand, ast.Call):
            if grand.func is parent and (parent.attr in MUTATORS):
                return True
        here, parent = parent, grand
    if isinstance(parent, ast.Call) and any(
        k.arg == "out" and k.value is here for k in parent.keywords
    ):
        return True
    return isinstance(parent, ast.Call) and not pure(parent) and here in parent.args


class _Index:
    """What folding needs to know of a tree, built in one walk and kept up to date as it
    folds: how often each name is stored, each node's parent, each name's reads, and (on
    demand) the names each statement mentions: a superset once folds copy values into it,
    which only costs a look more."""

    def __init__(self, tree: ast.AST) -> None:
        self.stores: dict[str, int] = {}
        self.parents: dict[int, ast.AST] = {}
        self.reads: dict[str, dict[int, ast.Name]] = {}
        self.names: dict[int, set[str]] = {}
        for node in walk(tree):
            for child in children(node):
                self.parents[id(child)] = node
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    self.reads.setdefault(node.id, {})[id(node)] = node
                else:
                    self.stores[node.id] = self.stores.get(node.id, 0) + 1
            elif isinstance(node, ast.arg):
                self.stores[node.arg] = self.stores.get(node.arg, 0) + 1

    def mentions(self, stmt: ast.stmt) -> set[str]:
        found = self.names.get(id(stmt))
        if found is None:
            found = self.names[id(stmt)] = {n.id for n in walk(stmt) if isinstance(n, ast.Name)}
        return found

    def folded(self, t: str, replaced: list[ast.Name], holders: list[ast.AST], value: ast.expr):
        """`t`'s reads `replaced` are now copies of `value`, under `holders`."""
        self.stores[t] -= 1
        for r in replaced:
            self.reads[t].pop(id(r), None)
        copied = {n.id for n in walk(value) if isinstance(n, ast.Name)}
        for holder in holders:
            for node in walk(holder):
                for child in children(node):
                    self.parents[id(child)] = node
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    self.reads.setdefault(node.id, {})[id(node)] = node
            here: ast.AST | None = holder
            while here is not None:
                if id(here) in self.names:
                    self.names[id(here)] |= copied
                here = self.parents.get(id(here))


def _fold_once(tree: ast.AST) -> bool:
    """One pass over every block, folding as it goes (the index of the tree kept up to
    date); whether anything was folded."""
    index = _Index(tree)
    folded = False
    for _, _, block in list(blocks(tree)):
        i = 0
        while i < len(block):
            stmt = block[i]
            done = None
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                done = _fold_assignment(block, i, index)
            if done is None:
                i += 1
                continue
            folded = True
            index.folded(*done)
    return folded


def _fold_assignment(
    block: list[ast.stmt], i: int, index: _Index
) -> tuple[str, list[ast.Name], list[ast.AST], ast.expr] | None:
    """Fold `block[i]` (`t = value`) away if it can be: (t, the reads of t replaced, the
    nodes that now hold a copy of value, value)."""
    stmt = block[i]
    assert isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)
    t, value = stmt.targets[0].id, stmt.value
    if not index.reads.get(t) or not pure(value):
        return None
    if isinstance(value, (ast.Lambda, ast.ListComp, ast.List, ast.Dict)):
        return None
    if sum(1 for _ in walk(value)) > FOLDED_NODES:
        return None  # no solution folds so much; a chain of thousands would nest too deep
    constant = isinstance(value, ast.Constant) or (
        isinstance(value, ast.UnaryOp) and isinstance(value.operand, ast.Constant)
    )
    if constant and index.stores.get(t) == 1:  # a name for a constant, everywhere
        uses = list(index.reads[t].values())
        if any(_mutates(u, index.parents) for u in uses):
            return None
        holders = [index.parents[id(u)] for u in uses]
        for u, holder in zip(uses, holders, strict=True):
            _Replace(u, value).visit(holder)
        block.pop(i)
        return t, uses, holders, value
    use = _fold(block, i, t, value, index)
    if use is None:
        return None
    holder = index.parents[id(use)]
    _Replace(use, value).visit(holder)
    block.pop(i)
    return t, [use], [holder], value


def _fold(block: list[ast.stmt], i: int, t: str, value: ast.expr, index: _Index) -> ast.Name | None:
    """The one read of `t` that `block[i]`, `t = value`, can be folded into: in a statement
    after it (within `FOLD_WINDOW` statements), before `t` is assigned again, with nothing in
    between changing what `value` reads. Its cost does not grow with the block's length."""
    parents = index.parents
    if _in_loop(block[i], parents) and index.stores.get(t) != 1:
        return None
    last = min(len(block), i + 1 + FOLD_WINDOW)
    touching = [j for j in range(i + 1, last) if t in index.mentions(block[j])]
    end = next((j for j in touching if _targets(block[j]) == [t]), None)
    if end is None and last < len(block):
        return None  # neither assigned again nor the block's end in sight
    inside = [j for j in touching if end is None or j <= end]
    uses = _use([block[j] for j in inside], t)
    if len(uses) != 1 or _mutates(uses[0], parents):
        return None
    killed = sum(
        1
        for j in inside
        for n in walk(block[j])
        if isinstance(n, ast.Name) and n.id == t and isinstance(n.ctx, (ast.Store, ast.Del))
    )
    if killed != (1 if end is not None else 0):
        return None  # assigned again somewhere inside: which value is read depends
    total = len(index.reads[t])
    if end is None:  # never assigned again in this block: no read elsewhere
        own = len(_use([block[i]], t))
        if total - own != 1:  # other reads: before this statement, or after the block?
            if total > FOLD_WINDOW or total - len(_use(block[: i + 1], t)) != 1:
                return None
    where = next(j for j in inside if any(n is uses[0] for n in walk(block[j])))
    reads = {n.id for n in walk(value) if isinstance(n, ast.Name)}
    between = [block[j] for j in range(i + 1, where) if reads & index.mentions(block[j])]
    if reads & _written(between):
        return None
    if index.stores.get(t) != 1 and any(
        isinstance(n, (ast.For, ast.While, ast.comprehension, ast.Lambda))
        and any(m is uses[0] for m in walk(n))
        for n in walk(block[where])
    ):
        return None  # read again and again in a loop of its own
    return uses[0]


def fold_temporaries(tree: ast.AST, limit: int = 200) -> bool:
    """Replace each name assigned and then read once by its value (see the module's doc);
    whether any was."""
    for n in range(limit):
        if not _fold_once(tree):
            return n > 0
    return True
