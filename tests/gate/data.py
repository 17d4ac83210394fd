"""Case lines the offline judge decides the same way every time, and the check that a
usage error is one line."""

from __future__ import annotations

from typing import Any

from click.testing import Result

LEEDS = "The office is in Leeds."
SHIPPED = "Order A17 shipped on 3 March by courier."

FAITHFUL = LEEDS
"""Strict score 1.0 against ``LEEDS``: one claim, supported by chunk 0."""
HALF = LEEDS + " It has a rooftop garden."
"""Strict score 0.5 against ``LEEDS``: the second claim is unsupported (and not critical)."""
WRONG_DATE = "Order A17 shipped on 5 March by courier."
"""Strict score 0.0 against ``SHIPPED``: one critical claim (a date), contradicted by chunk 0."""


def case(case_id: str, response: str, context: str = LEEDS, **extra: Any) -> dict[str, Any]:
    """A line as RAGAS writes it, with the gate's own fields in ``extra``."""
    return {
        "id": case_id,
        "user_input": "Where is the office?",
        "response": response,
        "retrieved_contexts": [context],
        **extra,
    }


def one_line(result: Result) -> str:
    """The single line a usage error prints on stderr (never a traceback); exit status 2."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    printed = result.stderr.strip().splitlines()
    assert len(printed) == 1 and "Traceback" not in result.output, result.output
    return printed[0]
