"""JSON from outside (an OTLP/JSON body, a string attribute that packs JSON), parsed with
a nesting limit.

``json.loads`` recurses in C as deep as the interpreter's recursion limit allows, and so
does everything after it that walks the value: scrubbing, pickling it to a worker
process, the store's serialiser. A value nested a thousand deep then raises
RecursionError wherever the stack happens to run out, far from here, and takes its
trace with it. Refused here, at a fixed depth, before anything walks it, a value that
deep is one problem with a name.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 100
"""Lists and objects inside one another, at most: as deep as protobuf lets an OTLP
attribute nest, and far past what any app's metadata needs."""


class TooDeep(ValueError):
    """The JSON nests lists and objects deeper than the limit.

    A ValueError, so a caller that treats any bad JSON alike (``except ValueError``)
    needs no change; one that says why catches this first.
    """

    def __init__(self, max_depth: int) -> None:
        super().__init__(f"JSON nested deeper than {max_depth} levels")
        self.max_depth = max_depth


def loads(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)``, or TooDeep when it nests deeper than ``max_depth``.

    Other bad JSON raises what ``json.loads`` raises (ValueError and its kinds).
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep(max_depth) from None
    if _openings(text) > max_depth and too_deep(value, max_depth):
        raise TooDeep(max_depth)
    return value


def _openings(text: str | bytes) -> int:
    # Depth needs as many opening brackets: most values have too few to need the walk.
    if isinstance(text, bytes):
        return text.count(b"[") + text.count(b"{")
    return text.count("[") + text.count("{")


def too_deep(value: Any, max_depth: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests lists and mappings deeper than ``max_depth``; iterative, so
    the check itself costs no stack."""
    if not isinstance(value, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        for child in children:
            if isinstance(child, dict | list):
                if depth >= max_depth:
                    return True
                stack.append((child, depth + 1))
    return False
