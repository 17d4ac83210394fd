"""RAGAS and DeepEval, the LLM judge's peers in ``bench/judge_cost.py``: their venv
(made and filled if missing), the stub RAGAS 0.4.3 needs, and one run of a peer's
faithfulness metric over the samples through ``ragas_deepeval_worker.py``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge_cost_mock import CountingJudge
from judge_cost_samples import Sample
from judge_cost_table import Row

WORKER = Path(__file__).resolve().parent / "ragas_deepeval_worker.py"
DEFAULT_VENV = Path("/tmp/peers-venv")
PEERS = ("ragas", "deepeval")
PINNED = {"ragas": "0.4.3", "deepeval": "4.3.1"}
STUB_NOTE = "written by faithmon bench/judge_cost.py"
RAGAS_STUB = f'''"""Stub {STUB_NOTE}.

ragas 0.4.3 imports ``ChatVertexAI`` from here only to list it among the models
that support n completions (an isinstance check); langchain-community 0.4 no longer
ships this module. Nothing here is ever instantiated.
"""


class ChatVertexAI:
    """Placeholder type: no instance of it exists, so isinstance checks are False."""
'''


@dataclass(slots=True)
class Peers:
    python: Path | None
    versions: dict[str, str | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problem: str | None = None


def _peer_env(base: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CONFIDENT_"))}
    env.update(
        {
            "RAGAS_DO_NOT_TRACK": "true",
            "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
            "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "PYTHONUNBUFFERED": "1",
            # Anything that still reaches for OpenAI lands on the counting server as a stray.
            "OPENAI_API_KEY": "x",
            "OPENAI_BASE_URL": f"{base or 'http://127.0.0.1:9'}/stray/none/v1",
        }
    )
    return env


def _probe(python: Path) -> dict[str, Any]:
    done = subprocess.run(
        [str(python), str(WORKER), "probe"],
        capture_output=True,
        text=True,
        timeout=300,
        env=_peer_env(),
        cwd=tempfile.gettempdir(),
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"probe failed: {done.stderr.strip()[-500:]}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _pip(python: Path, requirements: Sequence[str], log: Path) -> bool:
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n$ pip install {' '.join(requirements)}\n")
        out.flush()
        done = subprocess.run(
            [str(python), "-m", "pip", "install", *requirements],
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=1800,
            check=False,
        )
    return done.returncode == 0


def setup_peers(venv: Path) -> Peers:
    """Make (if needed) and check the peers' venv; write the RAGAS stub if it is needed."""
    python = venv / "bin" / "python"
    peers = Peers(python=python)
    log = venv / "bench-install.log"
    try:
        if not python.exists():
            base = shutil.which("python3") or sys.executable
            print(f"creating {venv} with {base} (pip install ragas, deepeval) ...", flush=True)
            subprocess.run([base, "-m", "venv", str(venv)], check=True, timeout=300)
            peers.notes.append(f"created {venv}")
        found = _probe(python)
        if any(found["versions"].get(name) is None for name in PEERS):
            pinned = [f"{name}=={PINNED[name]}" for name in PEERS]
            if not _pip(python, pinned, log):
                peers.notes.append(
                    f"{' '.join(pinned)} not installable (see {log}); trying the newest"
                )
                if not _pip(python, list(PEERS), log):
                    peers.problem = f"pip could not install ragas and deepeval; see {log}"
                    return peers
            found = _probe(python)
        ragas_error = found.get("ragas_error") or ""
        if "vertexai" in ragas_error and found.get("community"):
            stub = Path(found["community"]) / "chat_models" / "vertexai.py"
            stub.write_text(RAGAS_STUB, encoding="utf-8")
            peers.notes.append(f"import ragas needed a stub: wrote {stub}")
            found = _probe(python)
        elif found.get("community"):
            stub = Path(found["community"]) / "chat_models" / "vertexai.py"
            if stub.exists() and STUB_NOTE in stub.read_text(encoding="utf-8"):
                peers.notes.append(f"the RAGAS stub is in place: {stub}")
        peers.versions = dict(found["versions"])
        for name in PEERS:
            got = peers.versions.get(name)
            if got is not None and got != PINNED[name]:
                peers.notes.append(f"{name} {got} installed instead of {PINNED[name]}")
        broken = [
            f"{name}: {found[f'{name}_error']}" for name in PEERS if found.get(f"{name}_error")
        ]
        if broken:
            peers.problem = "import failed in the peers venv: " + "; ".join(broken)
    except (OSError, RuntimeError, subprocess.SubprocessError, ValueError, KeyError) as error:
        peers.problem = f"{type(error).__name__}: {error}"
    return peers


def run_peer(
    peers: Peers, judge: str, mock: CountingJudge, base: str, samples: Sequence[Sample]
) -> tuple[list[Row], str | None]:
    """One peer over every sample in the peers venv; rows, or the reason there are none."""
    assert peers.python is not None
    with tempfile.TemporaryDirectory(prefix=f"judge-cost-{judge}-") as work:
        samples_path = Path(work) / "samples.json"
        out_path = Path(work) / "out.jsonl"
        samples_path.write_text(json.dumps([s.as_json() for s in samples]), encoding="utf-8")
        try:
            done = subprocess.run(
                [str(peers.python), str(WORKER), "run", judge, base, samples_path, out_path],
                capture_output=True,
                text=True,
                timeout=900,
                env=_peer_env(base),
                cwd=work,  # DeepEval writes .deepeval/ into the working directory
                check=False,
            )
        except subprocess.TimeoutExpired:
            return [], f"{judge} worker timed out"
        results = {}
        if out_path.exists():
            for line in out_path.read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                results[row["sample"]] = row
        if done.returncode != 0 or not results:
            return [], f"{judge} worker exited {done.returncode}: {done.stderr.strip()[-800:]}"
    rows = []
    for sample in samples:
        logged = mock.requests_of(judge, sample.id)
        result = results.get(sample.id, {})
        rows.append(
            Row(
                sample=sample.id,
                calls=len(logged),
                prompt_tokens=sum(r.prompt_tokens for r in logged),
                score=result.get("score"),
                error=result.get("error"),
                extra={"steps": [r.step for r in logged], "seconds": result.get("seconds")},
            )
        )
    return rows, None
