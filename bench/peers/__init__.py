"""The peers the benches measure faithmon against, one harness per peer:

- ``arize_phoenix``: ``phoenix serve`` as the ingest bench's peer (``bench/ingest.py``);
- ``presidio``: Presidio's analyzer and anonymizer as the scrubber's (``bench/scrub.py``),
  driven through ``presidio_worker.py`` in Presidio's own venv;
- ``ragas_deepeval``: RAGAS and DeepEval faithfulness as the LLM judge's
  (``bench/judge_cost.py``), driven through ``ragas_deepeval_worker.py`` in their venv.

No peer is installed next to faithmon: each runs from a venv of its own, and a bench
without it says so and measures faithmon alone. The workers run in those venvs with
this folder first on their path, so no module here may share a name with a package
they import (``ragas``, ``deepeval``, ``presidio_analyzer``, ``openai``, ...).
"""
