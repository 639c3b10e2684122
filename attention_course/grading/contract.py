"""The exercise contract as data: the schema of a course's `contract.toml`, and reading it.

The contract says, for each graded function, what it takes in every form the course allows:
arrays of named sizes with any leading batch axes, masks in every shape that broadcasts, sizes,
flags and axes, which arguments are optional, and the edges of that space (large magnitudes,
all `-inf` slices, fully masked rows, head counts that do not divide the width). The graders draw
their inputs over it (draws.py). The file is data a person writes: this module is its declared
schema (pydantic), and a mistake in it is one line naming the place and, for a mistyped key, the
key it was probably meant to be.

What a graded function may call is the contract's rule, not a list: any function of its own
notebook, graded there or pasted into it (course.toml's `functions` and `helpers`).

Where this stands on a submission's way (docs/life-of-a-submission.md): read once per process by
course_graders.py, before any submission's cases are drawn; draws.py draws each grader file's
cases over it.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

# The edges each kind of argument may declare (draws.py makes each one).
ARRAY_EDGES = ("large", "fine", "spread", "neg_inf")
MASK_EDGES = ("fully_masked_row",)
SIZE_EDGES = ("indivisible",)
DTYPES = ("float64", "int64")
BATCH = "..."  # the leading batch axes of a shape
_PRODUCT = re.compile(r"^\s*\w+(\s*\*\s*\w+)*\s*$")


class ContractError(ValueError):
    """contract.toml cannot be read or breaks its schema (one line: where, and what)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SizeRange(_Strict):
    """Where a kind of size is drawn from: `usual` for most draws, `large` for families that ask
    for sizes past any constant a student might write in."""

    usual: tuple[int, int]
    large: tuple[int, int] | None = None

    @model_validator(mode="after")
    def _ordered(self) -> SizeRange:
        for lo, hi in (self.usual, self.large or (1, 1)):
            if not 1 <= lo <= hi:
                raise ValueError(f"a range is [low, high] with 1 <= low <= high, not [{lo}, {hi}]")
        return self


class Leading(_Strict):
    """How many leading batch axes ("...") a draw has, in turn."""

    ranks: list[int] = Field(default=[0, 1, 2], min_length=1)


class Argument(_Strict):
    """One argument: exactly one of `array` (a shape of named sizes, "..." for the batch axes),
    `mask` (a bool array broadcastable to that shape), `size` (an int, one named size), `flag`
    (a bool) or `axis` (an axis of the named array argument)."""

    name: str
    array: list[str] | None = None
    mask: list[str] | None = None
    size: str | None = None
    flag: bool | None = None
    axis: str | None = None
    dtypes: list[Literal["float64", "int64"]] = ["float64"]
    edges: list[str] = []
    default: Any = None  # given: the argument is optional ("none" for None)

    @model_validator(mode="before")
    @classmethod
    def _none(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("default") == "none":
            data = dict(data, default=None)
        return data

    @model_validator(mode="after")
    def _one_kind(self) -> Argument:
        kinds = [
            k for k in ("array", "mask", "size", "flag", "axis") if getattr(self, k) is not None
        ]
        if len(kinds) != 1:
            raise ValueError(
                f"argument {self.name!r} must be exactly one of array, mask, size, flag, axis "
                f"(it is {', '.join(kinds) or 'none of them'})"
            )
        allowed = {"array": ARRAY_EDGES, "mask": MASK_EDGES, "size": SIZE_EDGES}.get(kinds[0], ())
        for edge in self.edges:
            if edge not in allowed:
                raise ValueError(
                    f"argument {self.name!r}: {edge!r} is not an edge of {kinds[0]} arguments "
                    f"(known: {', '.join(allowed) or 'none'})"
                )
        return self

    @property
    def kind(self) -> str:
        return next(
            k for k in ("array", "mask", "size", "flag", "axis") if getattr(self, k) is not None
        )

    @property
    def optional(self) -> bool:
        return "default" in self.model_fields_set

    @property
    def shape(self) -> list[str]:
        return self.array or self.mask or []


class FunctionContract(_Strict):
    """One graded function: its arguments in signature order, the named sizes its shapes use
    (each a kind of [sizes], a choice, or a product of other names: "heads * d_k"), and its
    section of docs/exercise-contract.md."""

    section: str
    arguments: list[Argument]
    sizes: dict[str, str] = {}
    choices: dict[str, list[int]] = {}
    # an optional argument -> [size, size it equals when the argument is not given]
    same_without: dict[str, tuple[str, str]] = {}
    # the functions of its notebook it may call (default: every other one)
    may_call: list[str] | None = None

    def argument(self, name: str) -> Argument:
        return next(a for a in self.arguments if a.name == name)

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.arguments]

    def factors(self, size: str) -> list[str]:
        """The names a product size is made of (["heads", "d_k"] for "heads * d_k"), or []."""
        spec = self.sizes.get(size, "")
        return [p.strip() for p in spec.split("*")] if "*" in spec else []


class Contract(_Strict):
    sizes: dict[str, SizeRange] = {}
    leading: Leading = Leading()
    functions: dict[str, FunctionContract] = {}

    @model_validator(mode="after")
    def _consistent(self) -> Contract:
        for fname, f in self.functions.items():
            _check_function(fname, f, self)
        return self

    def function(self, name: str) -> FunctionContract:
        try:
            return self.functions[name]
        except KeyError:
            raise ContractError(f"the contract declares no function {name!r}") from None


def _check_function(fname: str, f: FunctionContract, contract: Contract) -> None:
    where = f"functions.{fname}"
    names = f.names
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: an argument is named twice")
    for size, spec in f.sizes.items():
        if not _PRODUCT.match(spec):
            raise ValueError(f"{where}.sizes.{size}: {spec!r} is not a size kind or a product")
        if "*" in spec:
            unknown = [p for p in f.factors(size) if p not in f.sizes or "*" in f.sizes[p]]
            if unknown:
                raise ValueError(f"{where}.sizes.{size}: {unknown[0]!r} is no plain size here")
        elif spec not in contract.sizes and spec not in f.choices:
            raise ValueError(f"{where}.sizes.{size}: no size kind {spec!r} in [sizes] or choices")
    for a in f.arguments:
        for dim in a.shape:
            if dim != BATCH and dim not in f.sizes:
                raise ValueError(
                    f"{where}: argument {a.name!r} uses the size {dim!r}, not in sizes"
                )
        if a.size is not None and a.size not in f.sizes:
            raise ValueError(f"{where}: argument {a.name!r} is the size {a.size!r}, not in sizes")
        if a.axis is not None and (a.axis not in names or f.argument(a.axis).array is None):
            raise ValueError(
                f"{where}: argument {a.name!r} is an axis of {a.axis!r}, no array here"
            )
        if "indivisible" in a.edges and not any(a.size in f.factors(s) for s in f.sizes):
            raise ValueError(
                f"{where}: argument {a.name!r} can only be indivisible when a size is a "
                f"product of {a.size!r}"
            )
    for arg, (size, equal) in f.same_without.items():
        if arg not in names or not f.argument(arg).optional:
            raise ValueError(f"{where}.same_without: {arg!r} is no optional argument")
        if size not in f.sizes or equal not in f.sizes:
            raise ValueError(f"{where}.same_without.{arg}: unknown size")
    for name in f.may_call or []:
        if name == fname:
            raise ValueError(f"{where}.may_call: a function does not call itself")


def _message(exc: ValidationError) -> str:
    """A schema error as one line: where in the file, what is wrong, and for a key the schema
    does not know, the known key it is closest to."""
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    if error["type"] == "extra_forbidden":
        key = str(error["loc"][-1])
        known = _known_keys(error["loc"][:-1])
        near = difflib.get_close_matches(key, known, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else f" (known: {', '.join(known)})"
        return f"{where}: unknown key{hint}"
    return f"{where}: {error['msg'].removeprefix('Value error, ')}"


def _known_keys(loc: tuple) -> list[str]:
    """The keys the schema allows at `loc` (a path into the file)."""
    model: type[BaseModel] = Contract
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            continue  # a key of a table of names (functions.<name>)
        inner = _model_in(field.annotation)
        if inner is None:
            break
        model = inner
    return sorted(model.model_fields)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def parse(data: dict[str, Any], source: str = "contract.toml") -> Contract:
    """A contract from the data of its file (ContractError: one line, `source` first)."""
    try:
        return Contract.model_validate(data)
    except ValidationError as exc:
        raise ContractError(f"{source}: {_message(exc)}") from None


_loaded: dict[tuple[str, int, int], Contract] = {}


def load(path: Path) -> Contract:
    """The contract in `path`; an empty one where the course has none."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return Contract()
    except OSError as exc:
        raise ContractError(f"{path}: cannot be read ({exc.strerror})") from None
    stamp = (str(path), st.st_size, st.st_mtime_ns)
    if stamp not in _loaded:
        try:
            data = tomllib.loads(path.read_text())
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ContractError(f"{path}: not a readable TOML file ({exc})") from None
        _loaded[stamp] = parse(data, str(path))
    return _loaded[stamp]
