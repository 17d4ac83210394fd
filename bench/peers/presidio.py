"""Presidio, the scrubber's peer in ``bench/scrub.py``: ``presidio_worker.py`` in
Presidio's own venv, spoken to in JSON lines, so its passes can be taken in turn with
faithmon's."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scrub_score import Span

WORKER = Path(__file__).resolve().parent / "presidio_worker.py"
DEFAULT_PRESIDIO = "/tmp/presidio-venv/bin/python"
# The six entities with a faithmon counterpart, by faithmon's name for them.
PRESIDIO_KINDS = {
    "EMAIL_ADDRESS": "EMAIL",
    "PHONE_NUMBER": "PHONE",
    "CREDIT_CARD": "CARD",
    "IBAN_CODE": "IBAN",
    "US_SSN": "SSN",
    "IP_ADDRESS": "IP",
}


class Presidio:
    """``presidio_worker.py`` in Presidio's venv, spoken to in JSON lines."""

    def __init__(self, python: str) -> None:
        env = dict(os.environ)
        # tldextract: no fetch of the public-suffix list, use the snapshot it ships.
        env["TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS"] = ""
        env["TLDEXTRACT_CACHE"] = str(Path(tempfile.gettempdir()) / "faithmon-bench-tldextract")
        env.pop("PYTHONPATH", None)
        self.process = subprocess.Popen(
            [python, str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the Presidio worker stopped (exit {self.process.wait()})")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer

    def load(self, texts: Sequence[str], nlp: str) -> tuple[list[list[Span]], float]:
        answer = self.ask(
            {"cmd": "load", "texts": list(texts), "entities": list(PRESIDIO_KINDS), "nlp": nlp}
        )
        detections = [
            [(s, e, PRESIDIO_KINDS.get(kind, kind)) for s, e, kind, _ in found]
            for found in answer["detections"]
        ]
        return detections, float(answer["setup_seconds"])

    def timed_pass(self) -> float:
        return float(self.ask({"cmd": "time"})["seconds"])

    def close(self) -> None:
        """Ask the worker to stop; end it if it does not within 30 s."""
        assert self.process.stdin is not None
        if self.process.poll() is None:
            with contextlib.suppress(BrokenPipeError):
                self.process.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
