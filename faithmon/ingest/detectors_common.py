"""What every detector shares: the ``Found`` span, the ``Detector`` type and boundary checks."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple


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
