"""The peers' side of ``bench/judge_cost.py``, run with the Python of a separate peers venv.

faithmon is not installed there and this file imports nothing of it.

- ``python ragas_deepeval_worker.py probe`` prints JSON: the installed versions of ragas, deepeval,
  openai, instructor and langchain-community, where ``langchain_community`` lives, and the
  error ``import ragas`` raises, if any (RAGAS 0.4.3 imports
  ``langchain_community.chat_models.vertexai``, which langchain-community 0.4 dropped).
- ``python ragas_deepeval_worker.py run JUDGE BASE SAMPLES OUT`` runs one judge's faithfulness
  metric (``ragas``: ``ragas.metrics.collections.Faithfulness``; ``deepeval``:
  ``FaithfulnessMetric`` with its defaults) on every sample in the JSON file ``SAMPLES``,
  one after the other, each with a client pointed at ``BASE/<judge>/<sample id>/v1`` so
  the counting server can tell whose request it is. It writes one JSON line per sample
  to ``OUT``: ``{"sample", "score", "error", "seconds"}``.

The model name is ``gpt-4o-mini`` for both, so each library takes the request path it
takes with a real OpenAI model (DeepEval: strict ``json_schema``; RAGAS through
instructor: ``json_object``), and the key is a dummy. Telemetry is turned off by the
environment ``bench/judge_cost.py`` sets (``RAGAS_DO_NOT_TRACK``,
``DEEPEVAL_TELEMETRY_OPT_OUT``).
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
import traceback
from importlib.metadata import PackageNotFoundError, version
from typing import Any

MODEL = "gpt-4o-mini"
PACKAGES = ("ragas", "deepeval", "openai", "instructor", "langchain-community", "langchain-core")


def probe() -> dict[str, Any]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = None
    found: dict[str, Any] = {"versions": versions, "ragas_error": None, "community": None}
    try:
        import langchain_community  # type: ignore[import-not-found]

        found["community"] = next(iter(langchain_community.__path__))
    except Exception as error:  # reported, not raised: the bench decides
        found["community_error"] = f"{type(error).__name__}: {error}"
    try:
        import ragas  # type: ignore[import-not-found]  # noqa: F401
    except Exception as error:
        found["ragas_error"] = f"{type(error).__name__}: {error}"
    try:
        import deepeval  # type: ignore[import-not-found]  # noqa: F401
    except Exception as error:
        found["deepeval_error"] = f"{type(error).__name__}: {error}"
    return found


def _ragas(base: str, sample: dict[str, Any]) -> float:
    from openai import AsyncOpenAI
    from ragas.llms import llm_factory  # type: ignore[import-not-found]
    from ragas.metrics.collections import Faithfulness  # type: ignore[import-not-found]

    client = AsyncOpenAI(api_key="x", base_url=f"{base}/ragas/{sample['id']}/v1")
    metric = Faithfulness(llm=llm_factory(MODEL, client=client))
    result = asyncio.run(
        metric.ascore(
            user_input=sample["question"],
            response=sample["answer"],
            retrieved_contexts=list(sample["chunks"]),
        )
    )
    return float(result.value)


def _deepeval(base: str, sample: dict[str, Any]) -> float:
    from deepeval.metrics import FaithfulnessMetric  # type: ignore[import-not-found]
    from deepeval.models import GPTModel  # type: ignore[import-not-found]
    from deepeval.test_case import LLMTestCase  # type: ignore[import-not-found]

    model = GPTModel(model=MODEL, api_key="x", base_url=f"{base}/deepeval/{sample['id']}/v1")
    metric = FaithfulnessMetric(model=model)
    case = LLMTestCase(
        input=sample["question"],
        actual_output=sample["answer"],
        retrieval_context=list(sample["chunks"]),
    )
    return float(metric.measure(case))


def run(judge: str, base: str, samples_path: str, out_path: str) -> None:
    score = {"ragas": _ragas, "deepeval": _deepeval}[judge]
    with open(samples_path, encoding="utf-8") as handle:
        samples = json.load(handle)
    with open(out_path, "w", encoding="utf-8") as out:
        for sample in samples:
            started = time.perf_counter()
            row: dict[str, Any] = {"sample": sample["id"], "score": None, "error": None}
            try:
                value = score(base, sample)
                row["score"] = None if math.isnan(value) else value
            except Exception as error:
                row["error"] = f"{type(error).__name__}: {error}"[:500]
                traceback.print_exc(file=sys.stderr)
            row["seconds"] = time.perf_counter() - started
            out.write(json.dumps(row) + "\n")
            out.flush()


def main(argv: list[str]) -> int:
    if argv[:1] == ["probe"]:
        print(json.dumps(probe()))
        return 0
    if len(argv) == 5 and argv[0] == "run" and argv[1] in ("ragas", "deepeval"):
        run(argv[1], argv[2], argv[3], argv[4])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
