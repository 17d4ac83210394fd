"""Presidio's side of ``bench/scrub.py``, run with the Python of a separate Presidio venv.

It speaks JSON lines on stdin/stdout, so ``bench/scrub.py`` can take Presidio's
repetitions in turn with faithmon's:

- ``{"cmd": "probe"}`` → Presidio's version and the official spaCy English models importable;
- ``{"cmd": "load", "texts": [...], "entities": [...], "nlp": "no_op" | "<spaCy model>"}``
  builds the analyzer and anonymizer, analyses every text once (which also warms them up)
  and answers with every text's detections as ``[start, end, entity, score]``;
- ``{"cmd": "time"}`` → the seconds one pass of ``analyze`` + ``anonymize`` over the texts takes;
- ``{"cmd": "quit"}``.

faithmon is not installed there and this file imports nothing of it. Offline use:
``TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS`` set to an empty string (``bench/scrub.py`` does
it) keeps ``tldextract`` from fetching the public-suffix list; it uses its bundled copy.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import sys
import time
import warnings
from importlib.metadata import version
from typing import Any

SPACY_MODELS = ("en_core_web_sm", "en_core_web_md", "en_core_web_lg", "en_core_web_trf")


def _engines(nlp: str) -> tuple[Any, Any]:
    from presidio_analyzer import AnalyzerEngine  # type: ignore[import-not-found]
    from presidio_analyzer.nlp_engine import NlpEngineProvider  # type: ignore[import-not-found]
    from presidio_anonymizer import AnonymizerEngine  # type: ignore[import-not-found]

    name = "no_op" if nlp == "no_op" else "spacy"
    configuration = {"nlp_engine_name": name, "models": [{"lang_code": "en", "model_name": nlp}]}
    engine = NlpEngineProvider(nlp_configuration=configuration).create_engine()
    with warnings.catch_warnings():
        # The no-op engine cannot feed context words to the enhancer, and says so.
        warnings.simplefilter("ignore", UserWarning)
        analyzer = AnalyzerEngine(nlp_engine=engine, supported_languages=["en"])
    return analyzer, AnonymizerEngine()


def main() -> int:
    logging.basicConfig(level=logging.ERROR)
    out = sys.stdout
    texts: list[str] = []
    entities: list[str] = []
    analyzer: Any = None
    anonymizer: Any = None

    def answer(payload: dict[str, Any]) -> None:
        out.write(json.dumps(payload) + "\n")
        out.flush()

    for line in sys.stdin:
        request = json.loads(line)
        command = request["cmd"]
        if command == "probe":
            answer(
                {
                    "presidio_analyzer": version("presidio-analyzer"),
                    "presidio_anonymizer": version("presidio-anonymizer"),
                    "phonenumbers": version("phonenumbers"),
                    "spacy_models": [m for m in SPACY_MODELS if importlib.util.find_spec(m)],
                }
            )
        elif command == "load":
            texts, entities = request["texts"], request["entities"]
            started = time.perf_counter()
            analyzer, anonymizer = _engines(request["nlp"])
            setup = time.perf_counter() - started
            detections = []
            for text in texts:
                results = analyzer.analyze(text=text, language="en", entities=entities)
                anonymizer.anonymize(text=text, analyzer_results=results)
                detections.append([[r.start, r.end, r.entity_type, r.score] for r in results])
            answer({"setup_seconds": setup, "detections": detections})
        elif command == "time":
            started = time.perf_counter()
            for text in texts:
                results = analyzer.analyze(text=text, language="en", entities=entities)
                anonymizer.anonymize(text=text, analyzer_results=results)
            answer({"seconds": time.perf_counter() - started})
        elif command == "quit":
            return 0
        else:
            answer({"error": f"unknown command {command!r}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
