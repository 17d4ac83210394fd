"""One reader per tracing convention, each turning a span into Facts.

Readers are tried in order and the first that recognises a span wins:
faithmon's own spans (``faithmon.role``), OpenInference
(``openinference.span.kind``), OpenLLMetry (``traceloop.*``, ``gen_ai.prompt.*``,
vector-database result events), then the OpenTelemetry GenAI semantic
conventions (``gen_ai.operation.name``, ``gen_ai.*.messages``).
"""

from __future__ import annotations

from ..spans import IngestSpan
from . import faithmon, genai, openinference, openllmetry
from .facts import Facts

READERS = (faithmon.read, openinference.read, openllmetry.read, genai.read)


def read_span(span: IngestSpan) -> Facts | None:
    for read in READERS:
        facts = read(span)
        if facts is not None:
            return facts
    return None


__all__ = ["Facts", "read_span"]
