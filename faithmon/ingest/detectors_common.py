"""What every detector shares: the ``Found`` span, the ``Detector`` type and boundary checks."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any, NamedTuple


class Found(NamedTuple):
    start: int
    end: int
    kind: str
    value: str
    """The normalised value the pseudonym is keyed on."""


Detector = Callable[[str], list[Found]]

# Words that make the number after them an identifier or a version, not PII.
_NOT_PII_BEFORE = re.compile(
    r"(?i)(?:order|invoice|tracking|ticket|case|ref(?:erence)?|sku|id|no\.?|number|#|"
    r"version|firmware|release|build|isbn(?:-?1[03])?|doi|v)\s*[:#]?\s*$"
)


def bounded(text: str, start: int, end: int, extra: str = "") -> bool:
    """No word character (or one of ``extra``) touches the match on either side.

    The patterns leave their boundaries to this check: a regex that starts with a
    lookbehind cannot skip ahead and costs two to three times more per text.
    """
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return not (before.isalnum() or before == "_" or before in extra) and not (
        after.isalnum() or after == "_" or after in extra
    )


def preceded_by_identifier_word(text: str, start: int) -> bool:
    return bool(_NOT_PII_BEFORE.search(text[max(0, start - 24) : start]))


@lru_cache(maxsize=16)
def lowered(text: str) -> str:
    """``text`` in lower case with every offset kept, for case-sensitive trigger patterns.

    A case-insensitive alternation makes ``re`` try every position; on lower-cased text a
    case-sensitive one skips ahead to its first letters, about five times faster. "İ" is
    the one character whose lower case is longer than itself. Cached: every detector
    asks for the text it is given in turn.
    """
    return (text.replace("İ", "I") if "İ" in text else text).lower()


def alternation(words: Iterable[str]) -> str:
    """A regex alternation of ``words`` as a trie ("ab(?:el|ram)|..."): ``re`` tries the
    branches of a flat alternation one by one, a trie's in one walk per position."""
    tree: dict[str, Any] = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    return _branches(tree)


def _branches(node: dict[str, Any]) -> str:
    ends = "" in node
    parts = [re.escape(char) + _branches(child) for char, child in sorted(node.items()) if char]
    if not parts:
        return ""
    body = parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"
    if ends:
        return f"(?:{body})?"
    return body
