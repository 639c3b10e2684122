"""Process start-up of the commands: keep one slow optional import out of them."""

from __future__ import annotations

import sys


def skip_slow_imports() -> None:
    """nbformat validates with jsonschema, which imports `rfc3987_syntax` whenever it is
    installed (jupyter's dependencies install it) and compiles a grammar for IRI formats at
    import: about a second of CPU in every process that reads a notebook. No schema used here
    has such a format, so the commands go without it (jsonschema then skips those formats)."""
    if "jsonschema" not in sys.modules:
        # None in sys.modules makes the import fail (the documented way); typeshed allows modules.
        sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
