"""The graders' inputs for one submission, drawn over the exercise contract (contract.py).

A grader file declares its cases with one function of a `Draw`, the seeded random source the
engine hands it for each submission (in the open: a parameter, nothing recovered from a frame):

    @cases
    def inputs(draw):
        return {
            "plain": draw(FN, 6),                          # anywhere in the contract, no mask
            "masked": draw(FN, 13, given=("mask",)),        # every mask form, in turn
            "small": [draw.case(FN, Q, K, V, what="...")],  # written by hand
        }

A family of draws ("masked") takes every discrete form its region allows in turn (the number of
leading batch axes, the mask's broadcastable shape, the edges' variants), so that each one appears
whenever a family has as many draws as forms, whatever the seed; sizes and values are random under
the submission's seed, the first draws of a family small and later ones larger. Each draw keeps
the `Point` it was made from, so that a failing draw can be made again smaller (`smaller`): fewer
and shorter axes, values that are small integers, within its family's region. Hand-written cases
have no point: they are shown as they are.

Where this stands on a submission's way (docs/life-of-a-submission.md): graders.grade_file
derives the submission's seed (seeds.py); runner.py makes the submission's `Draw` with it and
gives each grader file's `@cases` function its own source (`Draw.for_grader`); a Session shrinks
failing draws with `smaller`.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from attention_course.grading.contract import BATCH, Argument, Contract, FunctionContract
from attention_course.sandbox.program import Call

# The broadcastable shapes of a mask of target (..., q, k), by name: what each keeps of the
# leading axes, and of the two last.
MASK_FORMS = ("full", "2d", "keys", "key_row", "lead_ones", "inner_lead")
ROW_FORMS = ("query_col",)  # whole rows only: used where rows are fully masked
# The first draws of a family take sizes from the lower part of their ranges and small integer
# values: where one of them fails, it is the counterexample a student reads, with no shrinking.
SMALL_DRAWS = 1
SMALL_ENOUGH = 8  # a failing draw of this size or less, with simple values, is not shrunk


@dataclass(frozen=True)
class Region:
    """The part of a function's contract a family draws from. Every field is a restriction
    of the contract; the default is the whole of it (without the optional arguments)."""

    function: str
    given: tuple[str, ...] = ()  # optional arguments passed (by keyword); the others left out
    values: tuple[tuple[str, Any], ...] = ()  # arguments given this value (causal=True)
    edges: tuple[tuple[str, str], ...] = ()  # argument -> the edge its values lie on
    dtypes: tuple[tuple[str, str], ...] = ()  # argument -> its dtype (default float64)
    ranks: tuple[int, ...] | None = None  # numbers of leading axes (default: the contract's)
    sizes: tuple[tuple[str, tuple[int, int]], ...] = ()  # named size -> its range here
    large: tuple[str, ...] = ()  # named sizes drawn from their kind's large range
    ties: tuple[tuple[str, ...], ...] = ()  # named sizes drawn equal
    forms: tuple[str, ...] | None = None  # the mask forms taken in turn (default: every one)
    readonly: bool = False
    errstate: bool = False

    def edge(self, argument: str) -> str | None:
        return dict(self.edges).get(argument)


@dataclass(frozen=True)
class Point:
    """Where one draw lies: its region, the sizes and forms it was made with, and the seed of
    its values. `make` turns a point into arguments, always the same ones."""

    region: Region
    dims: tuple[tuple[str, int], ...]
    lead: tuple[int, ...]
    form: str | None  # the mask's broadcastable shape (MASK_FORMS), when a mask is given
    variant: int  # the draw's number in its family: cycles the edges' variants
    seed: int
    simple: bool = False  # small integer values, for a counterexample a student can read

    @property
    def size(self) -> int:
        """How large the input is: its sizes' product, for comparing counterexamples."""
        return int(np.prod([n for _, n in self.dims] or [1])) * int(np.prod(self.lead or (1,)))


Relation = Callable[["Case"], Mapping[str, "Case"]]


@dataclass
class Case:
    """One call of a student's function, with what it is for: its inputs in words, the point
    it was drawn at (None when written by hand), and the calls derived from it (`related`)."""

    call: Call
    what: str
    point: Point | None = None
    related: dict[str, Case] = field(default_factory=dict)
    group: str = ""
    names: tuple[str, ...] = ()  # the function's argument names, in signature order
    # how its related calls are made, to make them again for a smaller case (draws.smaller)
    relations: Mapping[str, Relation] | None = field(default=None, repr=False, compare=False)
    spec: FunctionContract | None = field(default=None, repr=False, compare=False)
    # a derived case: the case it was made from and the name of its relation (draws.smaller
    # shrinks that case and makes this one again from it)
    origin: tuple[Case, str] | None = field(default=None, repr=False, compare=False)

    @property
    def function(self) -> str:
        return self.call.function

    @property
    def key(self) -> str:
        return self.call.key

    @property
    def args(self) -> tuple[Any, ...]:
        return self.call.args

    @property
    def kwargs(self) -> dict[str, Any]:
        return self.call.kwargs

    @property
    def dims(self) -> dict[str, int]:
        return dict(self.point.dims) if self.point else {}

    def arg(self, name: str, default: Any = None) -> Any:
        """The argument `name`, given by position or by keyword (`default` when left out)."""
        if name in self.call.kwargs:
            return self.call.kwargs[name]
        if name in self.names and self.names.index(name) < len(self.call.args):
            return self.call.args[self.names.index(name)]
        return default

    def calls(self) -> list[Call]:
        """Its call and every derived call."""
        return [self.call, *(c for r in self.related.values() for c in r.calls())]

    def derived(self, suffix: str, *args: Any, what: str = "", **kwargs: Any) -> Case:
        """A call of the same function made from this case (a slice, a read-only twin, ...):
        `args` and `kwargs` as given, the case's own options otherwise (see `with_options`)."""
        call = Call(
            f"{self.call.key}/{suffix}",
            self.call.function,
            tuple(args),
            dict(kwargs),
            readonly=self.call.readonly,
            errstate=self.call.errstate,
        )
        return Case(call, what or self.what, group=self.group, names=self.names, spec=self.spec)

    def with_options(self, suffix: str, readonly: bool | None = None) -> Case:
        """The same call, with writable (readonly=False) or read-only inputs."""
        call = replace(
            self.call,
            key=f"{self.call.key}/{suffix}",
            readonly=self.call.readonly if readonly is None else readonly,
        )
        return Case(call, self.what, group=self.group, names=self.names, spec=self.spec)

    def replaced(self, suffix: str, what: str = "", **named: Any) -> Case:
        """The same call with the arguments `named` changed (None leaves one out if optional)."""
        args = list(self.call.args)
        kwargs = dict(self.call.kwargs)
        for name, value in named.items():
            index = self.names.index(name) if name in self.names else len(args)
            if index < len(args):
                args[index] = value
            elif value is None:
                kwargs.pop(name, None)
            else:
                kwargs[name] = value
        return self.derived(suffix, *args, what=what or self.what, **kwargs)


def _stream(seed: str | None, *names: object) -> int:
    """A 64-bit seed for one named stream of `seed` (None: the graders' own fixed seeds)."""
    text = "\n".join(map(str, (seed or "fixed", *names)))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


class Draw:
    """The seeded random source of one submission's graders.

    `draw(function, n, ...)` draws a family of `n` cases over the function's contract;
    `draw.case(...)` writes one by hand; `draw.random(name)` is a random generator of its own
    for a grader that builds inputs itself. Everything depends on the seed and the names only,
    never on what else was drawn before, so a family's cases are the same whichever tests run."""

    def __init__(self, contract: Contract, seed: str | None = None, prefix: str = ""):
        self.contract = contract
        self.seed = seed
        self.prefix = prefix  # of every call key (one file's cases apart from another's)
        self._group = ""
        self._count = itertools.count()

    def for_grader(self, function: str) -> Draw:
        """The source `function`'s grader file is given (its `@cases` function's `draw`): the
        same seed, its calls' keys named apart from every other file's. Made here only: the
        runner and the pytest plugin both ask for it, so both draw the same cases."""
        return Draw(self.contract, self.seed, prefix=f"{self.prefix}{function}/")

    def random(self, name: str) -> np.random.Generator:
        """A random generator of its own, for `name`, under the submission's seed."""
        return np.random.default_rng(_stream(self.seed, self.prefix, "random", name))

    def group(self, name: str) -> Draw:
        """The same source, naming the family its cases belong to (in their keys)."""
        other = Draw(self.contract, self.seed, self.prefix)
        other._group = name
        other._count = self._count
        return other

    def case(
        self,
        function: str,
        *args: Any,
        what: str,
        readonly: bool = False,
        errstate: bool = False,
        related: Mapping[str, Relation] | None = None,
        **kwargs: Any,
    ) -> Case:
        """A case written by hand (always the same, whatever the seed): `what` says what it is."""
        key = f"{self.prefix}{function}:{self._group or 'case'}#{next(self._count)}"
        call = Call(key, function, tuple(args), dict(kwargs), readonly=readonly, errstate=errstate)
        spec = self.contract.functions.get(function)
        names = tuple(spec.names) if spec is not None else ()
        case = Case(call, what, None, {}, self._group, names, spec=spec)
        return _relate(case, related)

    def __call__(
        self,
        function: str,
        n: int,
        *,
        given: Sequence[str] = (),
        values: Mapping[str, Any] | None = None,
        edges: Mapping[str, str] | None = None,
        dtypes: Mapping[str, str] | None = None,
        ranks: Sequence[int] | None = None,
        sizes: Mapping[str, tuple[int, int] | int] | None = None,
        large: Sequence[str] = (),
        ties: Sequence[Sequence[str]] = (),
        forms: Sequence[str] | None = None,
        readonly: bool = False,
        errstate: bool = False,
        related: Mapping[str, Relation] | None = None,
    ) -> list[Case]:
        """`n` cases of `function` drawn from the region the arguments name (see Region)."""
        spec = self.contract.function(function)
        region = Region(
            function,
            tuple(given),
            tuple((values or {}).items()),
            tuple((edges or {}).items()),
            tuple((dtypes or {}).items()),
            None if ranks is None else tuple(ranks),
            tuple(
                (k, (v, v) if isinstance(v, int) else (v[0], v[1]))
                for k, v in (sizes or {}).items()
            ),
            tuple(large),
            tuple(tuple(t) for t in ties),
            None if forms is None else tuple(forms),
            readonly,
            errstate,
        )
        _check_region(spec, region)
        family = _region_key(region)
        cases = []
        for i, (rank, form) in enumerate(_forms(self.contract, spec, region, n)):
            rng = np.random.default_rng(_stream(self.seed, self.prefix, family, i))
            point = _point(self.contract, spec, region, rank, form, i, rng, small=i < SMALL_DRAWS)
            key = f"{self.prefix}{function}:{self._group or 'draw'}#{next(self._count)}"
            cases.append(_relate(make(self.contract, point, key, self._group), related))
        return cases

    def smaller(self, case: Case, key: str) -> list[Case]:
        """Cases like `case` but smaller or simpler, within its family's region, their related
        calls made as the case's were: what shrinking a failing draw tries next (none for a
        case written by hand)."""
        if case.point is None:
            if case.origin is None:
                return []
            parent, name = case.origin
            return [c.related[name] for c in self.smaller(parent, key) if name in c.related]
        spec = self.contract.function(case.function)
        found = []
        for i, point in enumerate(_shrunk(self.contract, spec, case.point)):
            made = make(self.contract, point, f"{key}.{i}", case.group)
            found.append(_relate(made, case.relations))
        return found


def _region_key(region: Region) -> str:
    """A region in words, for the name of its random stream: the same region draws the same
    cases, another region others (pinned arrays by their shape only)."""
    pinned = tuple((k, np.shape(v) if isinstance(v, np.ndarray) else v) for k, v in region.values)
    return repr(replace(region, values=pinned))


def _relate(case: Case, related: Mapping[str, Relation] | None) -> Case:
    case.relations = related
    for name, relation in (related or {}).items():
        for suffix, derived in relation(case).items():
            full = f"{name}/{suffix}" if suffix else name
            derived.origin = (case, full)
            case.related[full] = derived
    return case


def _check_region(spec: FunctionContract, region: Region) -> None:
    names = spec.names
    for name in (*region.given, *(k for k, _ in region.values), *(k for k, _ in region.edges)):
        if name not in names:
            raise ValueError(f"{region.function} has no argument {name!r}")
    for name in region.given:
        if not spec.argument(name).optional:
            raise ValueError(f"{region.function}: {name!r} is not optional; it is always given")
    for name, edge in region.edges:
        if edge not in spec.argument(name).edges:
            raise ValueError(f"{region.function}: the contract gives {name!r} no edge {edge!r}")
    for size in (
        *(k for k, _ in region.sizes),
        *region.large,
        *(s for t in region.ties for s in t),
    ):
        if size not in spec.sizes:
            raise ValueError(f"{region.function} has no size {size!r}")


def _has_batch(spec: FunctionContract) -> bool:
    return any(BATCH in a.shape for a in spec.arguments if a.array is not None)


def _mask_argument(spec: FunctionContract, region: Region) -> Argument | None:
    """The mask argument the region passes, if any."""
    for a in spec.arguments:
        if a.mask is not None and (a.name in region.given or not a.optional):
            return a
    return None


def _forms_for(rank: int, rows: bool) -> list[str]:
    """The distinct mask forms at `rank` leading axes."""
    forms = ["2d", "keys", "key_row"]
    if rank >= 1:
        forms.insert(0, "full")
    if rank >= 2:
        forms += ["lead_ones", "inner_lead"]
    if rows:
        forms.append("query_col")
    return forms


def _forms(
    contract: Contract, spec: FunctionContract, region: Region, n: int
) -> list[tuple[int, str | None]]:
    """The (leading axes, mask form) of each of a family's `n` draws: every pair the region
    allows, in a fixed order (so that every seed covers the same ones), then again."""
    ranks = region.ranks if region.ranks is not None else tuple(contract.leading.ranks)
    if not _has_batch(spec):
        ranks = (0,)
    mask = _mask_argument(spec, region)
    if mask is None:
        pairs: list[tuple[int, str | None]] = [(r, None) for r in ranks]
    else:
        rows = region.edge(mask.name) == "fully_masked_row"
        allowed = region.forms
        pairs = [
            (r, f) for r in ranks for f in _forms_for(r, rows) if allowed is None or f in allowed
        ]
        if not pairs:
            raise ValueError(f"{region.function}: no mask form fits the region")
        # the order in which forms come: each rank's first form, then each rank's second, ...
        place = {p: [f for r, f in pairs if r == p[0]].index(p[1]) for p in pairs}
        pairs.sort(key=lambda p: (place[p], p[0]))
    return [pairs[i % len(pairs)] for i in range(n)]


def _range(
    contract: Contract, spec: FunctionContract, region: Region, size: str
) -> tuple[int, int]:
    """Where the named size is drawn from in this region."""
    given = dict(region.sizes)
    if size in given:
        return given[size]
    kind = spec.sizes[size]
    if kind in spec.choices:
        values = spec.choices[kind]
        return min(values), max(values)
    ranges = contract.sizes[kind]
    if size in region.large:
        if ranges.large is None:
            raise ValueError(f"size kind {kind!r} has no large range")
        return ranges.large
    return ranges.usual


def _point(
    contract: Contract,
    spec: FunctionContract,
    region: Region,
    rank: int,
    form: str | None,
    variant: int,
    rng: np.random.Generator,
    small: bool,
) -> Point:
    """A point of the region: its sizes drawn apart from one another where their ranges allow
    (two axes of one size could stand in for each other, and hide a mistake that mixes them
    up). The first draws of a family take the lower part of their ranges, 1 included; the
    others sizes of 2 or more where their ranges allow (an axis of 1 broadcasts against any
    other, and hides a mistake that mixes them up too)."""
    tied = {s for tie in region.ties for s in tie[1:]}
    free = [s for s, k in spec.sizes.items() if "*" not in k and s not in tied]
    batch = contract.sizes.get("batch")
    lo_batch, hi_batch = batch.usual if batch else (1, 3)
    wanted = len(free) + rank
    used: set[int] = set()

    def pick(lo: int, hi: int) -> int:
        if small:
            hi = max(lo, min(hi, lo + wanted))
        elif hi > lo == 1:
            lo = 2
        left = [n for n in range(lo, hi + 1) if n not in used] if hi - lo < 4096 else []
        n = int(rng.choice(left)) if left else int(rng.integers(lo, hi + 1))
        used.add(n)
        return n

    lead = tuple(pick(lo_batch, hi_batch) for _ in range(rank))  # the narrowest range first
    dims: dict[str, int] = {}
    for size in free:
        kind = spec.sizes[size]
        if kind in spec.choices and size not in dict(region.sizes):
            dims[size] = int(rng.choice(spec.choices[kind]))
            continue
        lo, hi = _range(contract, spec, region, size)
        dims[size] = pick(lo, hi) if size not in region.large else int(rng.integers(lo, hi + 1))
    seed = int(rng.integers(2**63))
    point = Point(region, tuple(dims.items()), lead, form, variant, seed, simple=small)
    return _settle(spec, point)


def _settle(spec: FunctionContract, point: Point) -> Point:
    """The point's sizes made consistent: ties equal, products multiplied out, an indivisible
    edge's product off by a remainder, sizes that an absent argument makes equal."""
    region = point.region
    dims = dict(point.dims)
    for tie in region.ties:
        for size in tie[1:]:
            if tie[0] in dims and "*" not in spec.sizes[size]:
                dims[size] = dims[tie[0]]
    for arg, edge in region.edges:
        a = spec.argument(arg)
        if edge == "indivisible" and a.size is not None:
            dims[a.size] = max(dims[a.size], 3)  # remainders below and above one half exist
    for size, kind in spec.sizes.items():
        if "*" in kind:
            dims[size] = int(np.prod([dims[f] for f in spec.factors(size)]))
            for arg, edge in region.edges:
                a = spec.argument(arg)
                if edge == "indivisible" and a.size in spec.factors(size):
                    heads = dims[a.size]
                    dims[size] += 1 if point.variant % 2 == 0 else heads - 1
    for arg, (size, equal) in spec.same_without.items():
        if arg not in region.given and arg not in dict(region.values):
            dims[size] = dims[equal]
    for tie in region.ties:  # a tie with a product
        for size in tie[1:]:
            dims[size] = dims[tie[0]]
    return replace(point, dims=tuple(dims.items()))


def _shrunk(contract: Contract, spec: FunctionContract, point: Point) -> Iterable[Point]:
    """Smaller or simpler points than `point` in its region, most promising first: everything
    at its least, each size and each leading axis alone at its least or halved, one leading
    axis fewer, and the same with simple values. Duplicates and the point itself left out."""
    region = point.region
    dims = dict(point.dims)
    plain = [s for s, k in spec.sizes.items() if "*" not in k and k not in spec.choices]
    least = {s: _range(contract, spec, region, s)[0] for s in plain}
    ranks = region.ranks if region.ranks is not None else tuple(contract.leading.ranks)
    batch = contract.sizes.get("batch")
    lo_batch = batch.usual[0] if batch else 1
    min_rank = min([r for r in ranks if _form_fits(r, point.form)] or [len(point.lead)])
    candidates: list[Point] = []
    smallest = replace(
        point,
        dims=tuple({**dims, **least}.items()),
        lead=(lo_batch,) * min_rank,
        simple=True,
    )
    candidates.append(smallest)
    for s in plain:
        for n in sorted({least[s], max(least[s], dims[s] // 2), max(least[s], dims[s] - 1)}):
            if n < dims[s]:
                candidates.append(replace(point, dims=tuple({**dims, s: n}.items()), simple=True))
    for i, n in enumerate(point.lead):
        if n > lo_batch:
            lead = point.lead[:i] + (lo_batch,) + point.lead[i + 1 :]
            candidates.append(replace(point, lead=lead, simple=True))
    if len(point.lead) > min_rank:
        candidates.append(replace(point, lead=point.lead[1:], simple=True))
    if not point.simple:
        candidates.append(replace(point, simple=True))
    seen = {point}
    for c in candidates:
        settled = _settle(spec, c)
        if settled not in seen and _fits(contract, spec, settled):
            seen.add(settled)
            yield settled


def _form_fits(rank: int, form: str | None) -> bool:
    return form is None or form in _forms_for(rank, rows=True)


def _fits(contract: Contract, spec: FunctionContract, point: Point) -> bool:
    """Whether a shrunk point still lies in its region (its mask form at its rank, its tied
    sizes equal)."""
    return _form_fits(len(point.lead), point.form)


# --------------------------------------------------------------------------- relations


def writable(case: Case) -> dict[str, Case]:
    """The same call with writable inputs (the twin of a read-only case)."""
    return {"": case.with_options("writable", readonly=False)}


def leading(case: Case) -> tuple[int, ...]:
    """The case's leading batch axes ("..."), from its point or its first batched array."""
    if case.point is not None:
        return case.point.lead
    spec = case.spec
    for a in spec.arguments if spec is not None else ():
        value = case.arg(a.name)
        if a.array is not None and BATCH in a.array and isinstance(value, np.ndarray):
            return value.shape[: value.ndim - (len(a.array) - 1)]
    return ()


def alone(case: Case) -> dict[str, Case]:
    """The first and the last batch element of the case on its own (a mix-up of the batch with
    other axes moves both ends): every batched array indexed by its place in the leading axes,
    a mask broadcast to the scores and indexed the same way."""
    spec = case.spec
    if spec is None:
        raise ValueError(f"{case.function}: no contract to slice its batch by")
    lead = leading(case)
    found = {}
    ends = dict.fromkeys([tuple(0 for _ in lead), tuple(n - 1 for n in lead)])
    for i in ends if all(lead) else ():
        named: dict[str, Any] = {}
        for a in spec.arguments:
            value = case.arg(a.name)
            if not isinstance(value, np.ndarray):
                continue
            if a.array is not None and BATCH in a.array:
                named[a.name] = np.array(value[i])
            elif a.mask is not None:
                q, k = _mask_sizes(case, a)
                named[a.name] = np.array(np.broadcast_to(value, (*lead, q, k))[i])
        where = ", ".join(map(str, i))
        found[where] = case.replaced(where, what=f"batch element ({where}) on its own", **named)
    return found


def pieces(case: Case, relation: str = "alone") -> list[tuple[tuple[int, ...], Case]]:
    """The batch elements `alone` made of `case`, each with its index in the leading axes."""
    found = []
    for name, single in case.related.items():
        if name.startswith(f"{relation}/"):
            index = tuple(int(n) for n in name.removeprefix(f"{relation}/").split(", ") if n)
            found.append((index, single))
    return found


def _mask_sizes(case: Case, a: Argument) -> tuple[int, int]:
    """The (seq_len_q, seq_len_k) a mask argument broadcasts to, from the case's other
    arguments' shapes."""
    spec = case.spec
    assert spec is not None and a.mask is not None
    found: dict[str, int] = {}
    for b in spec.arguments:
        value = case.arg(b.name)
        if b.array is not None and isinstance(value, np.ndarray):
            tail = [d for d in b.array if d != BATCH]
            for d, n in zip(tail, value.shape[value.ndim - len(tail) :], strict=True):
                found.setdefault(d, n)
    for size, equal in spec.same_without.values():  # keys of the queries' own sequence
        if size not in found and equal in found:
            found[size] = found[equal]
    return found[a.mask[-2]], found[a.mask[-1]]


# --------------------------------------------------------------------------- making inputs


def make(contract: Contract, point: Point, key: str, group: str = "") -> Case:
    """The case at `point`: its arguments, always the same for the same point."""
    region = point.region
    spec = contract.function(region.function)
    dims = dict(point.dims)
    rng = np.random.default_rng(point.seed)
    pinned = dict(region.values)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    words = []
    made: dict[str, Any] = {}
    for a in spec.arguments:
        if a.name in pinned:
            value = pinned[a.name]
        elif a.optional and a.name not in region.given:
            continue
        elif a.array is not None:
            value = _array(a, dims, point, region, rng, made)
        elif a.mask is not None:
            value = _mask(a, dims, point, region, rng)
        elif a.size is not None:
            value = dims[a.size]
        elif a.flag is not None:
            value = bool(rng.integers(2))
        else:  # an axis of an array argument
            value = _axis(made[str(a.axis)], point, rng)
        made[a.name] = value
        words.append(_words(a, value, region))
        if a.optional:
            kwargs[a.name] = value
        else:
            args.append(value)
    call = Call(key, region.function, tuple(args), kwargs, region.readonly, region.errstate)
    what = ", ".join(w for w in words if w)
    return Case(call, what, point, {}, group, tuple(spec.names), spec=spec)


def _shape(shape: Sequence[str], dims: Mapping[str, int], lead: tuple[int, ...]) -> tuple[int, ...]:
    out: list[int] = []
    for d in shape:
        out.extend(lead if d == BATCH else (dims[d],))
    return tuple(out)


def _slice_axis(made: Mapping[str, Any], region: Region, ndim: int) -> int:
    """The axis an edge acts along: the axis argument already made, else the last."""
    for name, value in made.items():
        if isinstance(value, int) and not isinstance(value, bool) and name == "axis":
            return value % ndim
    return ndim - 1


def _array(
    a: Argument,
    dims: Mapping[str, int],
    point: Point,
    region: Region,
    rng: np.random.Generator,
    made: Mapping[str, Any],
) -> np.ndarray:
    shape = _shape(a.array or [], dims, point.lead)
    dtype = dict(region.dtypes).get(a.name, "float64")
    if dtype == "int64":
        return rng.integers(-4, 5, size=shape).astype(np.int64)
    base = (
        rng.integers(-2, 3, size=shape).astype(np.float64)
        if point.simple
        else rng.normal(size=shape)
    )
    edge = region.edge(a.name)
    if edge is None or base.ndim == 0:
        return base
    axis = _axis_of_edge(a, region, base.ndim, point, rng)
    slices = np.moveaxis(base, axis, -1)  # (..., n): one slice per row of the last axis
    count = int(np.prod(slices.shape[:-1]))
    if edge == "large":
        out = _large(slices, point.variant, rng)
    elif edge == "fine":  # near 10000 or -3000, entries 0.0005 apart: float32 merges them
        offsets = rng.choice([1e4, -3e3], size=slices.shape[:-1])
        out = offsets[..., None] + slices * 5e-4
    elif edge == "spread":  # slices near +1000, near 0 and near -900
        offsets = np.resize(np.array([1000.0, 0.0, -900.0]), count).reshape(slices.shape[:-1])
        out = slices + offsets[..., None]
    else:  # neg_inf: entries of -inf, one slice entirely -inf, another with a finite entry
        out = slices.copy()
        out[rng.random(out.shape) < 0.35] = -np.inf
        flat = out.reshape(count, -1)
        flat[point.variant % count] = -np.inf
        if count > 1:
            keep = (point.variant + 1) % count
            flat[keep, rng.integers(flat.shape[1])] = 0.0 if point.simple else rng.normal()
        out = flat.reshape(out.shape)
    return np.ascontiguousarray(np.moveaxis(out, -1, axis))


def _large(slices: np.ndarray, variant: int, rng: np.random.Generator) -> np.ndarray:
    """Entries of magnitude near 1000, four ways in turn: slices near +1000 or -1000 whose
    entries are close; entries up to ~2000 far apart; one entry 1500 below the others; one 1500
    above them (each way overflows a different wrong shift of a softmax)."""
    kind = variant % 4
    if kind == 0:
        return slices + rng.choice([1000.0, -1000.0], size=slices.shape[:-1])[..., None]
    if kind == 1:
        return slices * 800.0
    out = slices.copy()
    out[..., rng.integers(out.shape[-1])] += -1500.0 if kind == 2 else 1500.0
    return out


def _axis_of_edge(
    a: Argument, region: Region, ndim: int, point: Point, rng: np.random.Generator
) -> int:
    """The axis an array's edge acts along: its function's axis argument when the region
    gives one (drawn the same way as `_axis` will), else the last."""
    return ndim - 1 if "axis" not in region.given else _axis_value(ndim, point) % ndim


def _axis_value(ndim: int, point: Point) -> int:
    """An axis of an ndim array: each in turn, negative and positive alternately."""
    axis = (point.variant // 2) % ndim
    return axis - ndim if point.variant % 2 else axis


def _axis(array: np.ndarray, point: Point, rng: np.random.Generator) -> int:
    return _axis_value(max(np.ndim(array), 1), point)


def _mask_shape(form: str, target: tuple[int, ...]) -> tuple[int, ...]:
    *lead, q, k = target
    shapes = {
        "full": (*lead, q, k),
        "2d": (q, k),
        "keys": (k,),
        "key_row": (1, k),
        "lead_ones": (*lead[:1], *(1 for _ in lead[1:]), q, k),
        "inner_lead": (*lead[1:], q, k),
        "query_col": (q, 1),
    }
    return shapes[form]


def _mask(
    a: Argument, dims: Mapping[str, int], point: Point, region: Region, rng: np.random.Generator
) -> np.ndarray:
    """A mask of its form: every row keeps an allowed key and, where there are two keys or
    more, some row forbids one; with the fully_masked_row edge, one row forbids every key."""
    target = _shape(a.mask or [], dims, point.lead)
    shape = _mask_shape(point.form or "2d", target)
    mask = rng.random(shape) < 0.4
    rows = mask.reshape(-1, shape[-1])
    for row in rows:
        if row.all():
            row[rng.integers(len(row))] = False
    if shape[-1] >= 2 and not rows.any():
        rows[rng.integers(len(rows)), rng.integers(shape[-1])] = True
    if point.form == "query_col":
        rows[:] = False
    if region.edge(a.name) == "fully_masked_row":
        rows[point.variant % len(rows)] = True
    return rows.reshape(shape).copy()


def _words(a: Argument, value: Any, region: Region) -> str:
    """An argument in words for the student: its name and shape (or value), and its edge."""
    if isinstance(value, np.ndarray):
        text = f"{a.name} {_shape_text(value.shape)}"
        if value.dtype != np.float64 and value.dtype != bool:
            text += f" of dtype {value.dtype}"
        edge = region.edge(a.name)
        if edge:
            text += f" ({EDGE_WORDS[edge]})"
        return text
    return f"{a.name}={value!r}"


EDGE_WORDS = {
    "large": "entries of magnitude near 1000",
    "fine": "entries near 10000 or -3000 that differ by less than 0.001",
    "spread": "slices near 1000, near 0 and near -900",
    "neg_inf": "-inf entries, a slice of -inf only",
    "fully_masked_row": "a query may see no key",
}


def _shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + (",)" if len(shape) == 1 else ")")


# --------------------------------------------------------------------------- showing inputs

SHOWN_ELEMENTS = 24  # an array of at most this many elements is shown whole


def _number(x: Any) -> str:
    """A number as a student would type it: floats with 4 decimals at most, -inf and nan as
    numpy's."""
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if not np.isfinite(x):
        return "np.nan" if np.isnan(x) else ("-np.inf" if x < 0 else "np.inf")
    return np.format_float_positional(float(x), precision=4, trim="0")


def _nested(value: np.ndarray) -> str:
    """An array as nested lists on one line: [[1.0, -2.0], [0.5, 3.0]]."""
    if value.ndim == 0:
        return _number(value[()])
    return "[" + ", ".join(_nested(v) for v in value) + "]"


def show(case: Case) -> str:
    """The case's inputs for the student: each argument with its shape, and its values where
    it is small (never anything computed from them)."""
    names = case.names or tuple(f"arg{i}" for i in range(len(case.args)))
    parts = [(n, v) for n, v in zip(names, case.args, strict=False)]
    parts += list(case.kwargs.items())
    out = []
    for name, value in parts:
        if isinstance(value, np.ndarray):
            if value.size <= SHOWN_ELEMENTS:
                out.append(f"{name} = np.array({_nested(value)})")
            else:
                out.append(f"{name}: shape {_shape_text(value.shape)}")
        else:
            out.append(f"{name} = {value!r}")
    return "; ".join(out)
