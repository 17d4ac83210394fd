"""A PII detector plug-in, as ``FAITHMON_SCRUB_DETECTORS`` names one: loyalty card numbers
(``LC-`` and six digits), which no built-in detector knows."""

from __future__ import annotations

import re

from faithmon.ingest.detectors import Found

_CARD = re.compile(r"\bLC-\d{6}\b")


def loyalty_cards(text: str) -> list[Found]:
    return [Found(m.start(), m.end(), "LOYALTY", m.group()) for m in _CARD.finditer(text)]
