"""Judge cost: LLM calls and prompt tokens per trace for faithmon, RAGAS and DeepEval.

Run from the repository root::

    python bench/judge_cost.py           # 13 samples
    python bench/judge_cost.py --quick   # 4 samples

All three judges score the same samples against one counting OpenAI-compatible
server on 127.0.0.1, in one run:

- faithmon: ``OpenAIJudge`` in this process, one judge per sample;
- RAGAS 0.4.3 ``ragas.metrics.collections.Faithfulness`` and DeepEval 4.3.1
  ``FaithfulnessMetric`` (defaults, reason included) in a separate venv
  (``/tmp/peers-venv``, made and filled by this script if missing), driven by
  ``bench/_peer_worker.py`` in a subprocess with telemetry off.

Each client's base URL is ``http://127.0.0.1:PORT/<judge>/<sample>/v1``, so the
server logs every request under the judge and the sample that sent it. Its
estimate of prompt tokens is the same for every judge: characters / 4, rounded
up, over the text of all messages plus the compact JSON of ``response_format``
and ``tools`` when the request has them (a schema sent there is billed as prompt).
Its replies are schema-valid JSON: it reads the schema from ``response_format``
(or, for JSON mode, the first JSON schema in the messages) and builds an instance,
filling the fields the libraries look at: every statement, claim and verdict is
supported, and faithmon's quote is the first 20 characters of chunk C0.

Goals (from the issue): faithmon makes at most 1 call per trace and sends at
most 0.3 times RAGAS's prompt tokens per trace (mean over the samples). The
table goes to stdout, everything measured to ``bench/results/judge_cost.json``.
If the peers cannot be installed or run, the script says why, prints faithmon's
figures alone and still exits 0.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from common import RESULTS_DIR, number, ratio, relative

from faithmon.judge.openai_judge import OpenAIJudge, OpenAIJudgeConfig

RESULTS = RESULTS_DIR / "judge_cost.json"
WORKER = Path(__file__).resolve().parent / "_peer_worker.py"
DEFAULT_VENV = Path("/tmp/peers-venv")
PEERS = ("ragas", "deepeval")
PINNED = {"ragas": "0.4.3", "deepeval": "4.3.1"}
FAITHMON_MODEL = "bench-judge"
QUOTE_CHARS = 20
CALLS_GOAL = 1
TOKENS_GOAL = 0.3
STUB_NOTE = "written by faithmon bench/judge_cost.py"
RAGAS_STUB = f'''"""Stub {STUB_NOTE}.

ragas 0.4.3 imports ``ChatVertexAI`` from here only to list it among the models
that support n completions (an isinstance check); langchain-community 0.4 no longer
ships this module. Nothing here is ever instantiated.
"""


class ChatVertexAI:
    """Placeholder type: no instance of it exists, so isinstance checks are False."""
'''


# -- samples ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sample:
    id: str
    kind: str
    """paraphrase, partly unsupported, verbatim or mixed (one sentence verbatim)."""
    question: str
    chunks: tuple[str, ...]
    answer: str

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "question": self.question,
            "chunks": list(self.chunks),
            "answer": self.answer,
        }


SAMPLES: tuple[Sample, ...] = (
    Sample(
        "s01",
        "paraphrase",
        "When is the Halden Street library open on weekends?",
        (
            "The Halden Street branch library reopened in March after a six-month renovation "
            "that added a children's reading room and twelve public computers. The branch is "
            "run by the county library service and shares its catalogue with the other nine "
            "branches, so books can be requested from anywhere in the county and collected at "
            "Halden Street.",
            "Opening hours for the Halden Street branch: Monday to Friday from 9:00 to 19:00, "
            "Saturday from 10:00 to 16:00. The branch is closed on Sundays and on public "
            "holidays. The returns box by the front door is emptied every morning at 8:30, "
            "including on days when the branch is closed.",
            "Parking near the branch is limited to the twenty spaces behind the community "
            "hall, which are free for the first two hours. Cyclists can use the covered racks "
            "beside the entrance. The number 14 bus stops directly outside.",
        ),
        "On Saturdays the library opens at 10 in the morning and closes at 4 in the "
        "afternoon. It does not open on Sundays, though you can still drop returns in the box "
        "by the front door.",
    ),
    Sample(
        "s02",
        "partly unsupported",
        "What does the warranty on the Corvel e-bike battery cover?",
        (
            "Corvel batteries carry a warranty of three years or 800 full charge cycles, "
            "whichever comes first. The warranty covers manufacturing defects and a loss of "
            "capacity below 70 percent of the rated capacity within that period.",
            "The warranty does not cover damage from water immersion, from charging with a "
            "third-party charger, or from storing the battery fully discharged for more than "
            "three months. Claims must be made through the dealer that sold the bike, with the "
            "proof of purchase and the battery's serial number.",
        ),
        "The battery is covered for three years or 800 charge cycles, whichever ends first, "
        "against defects and capacity falling under 70 percent. The warranty also pays for a "
        "free replacement charger if the original one fails. You can claim directly online "
        "without going through a dealer.",
    ),
    Sample(
        "s03",
        "verbatim",
        "How long should a sourdough starter rest after feeding?",
        (
            "Feed the starter with equal weights of flour and water, stir well and leave it "
            "uncovered for five minutes. Cover the jar loosely and let it rest at room "
            "temperature for four to six hours, until it has roughly doubled in size.",
            "A starter kept in the fridge only needs feeding once a week. Take it out the "
            "evening before you plan to bake and give it two feedings twelve hours apart "
            "before using it in a dough.",
        ),
        "Cover the jar loosely and let it rest at room temperature for four to six hours, "
        "until it has roughly doubled in size. A starter kept in the fridge only needs "
        "feeding once a week.",
    ),
    Sample(
        "s04",
        "paraphrase",
        "What happens when a client exceeds the Tessera API rate limit?",
        (
            "Every Tessera API key may make 600 requests per minute and 20,000 per day. Limits "
            "are counted per key, not per IP address, and requests that fail with a 5xx status "
            "are not counted against the limit.",
            "When a key goes over its per-minute limit, the API answers 429 Too Many Requests "
            "with a Retry-After header giving the number of seconds to wait. Keys that exceed "
            "the daily limit are blocked until midnight UTC. Repeated abuse can lead to a key "
            "being suspended after a manual review.",
            "Enterprise customers can ask for higher limits through their account manager. "
            "Limits for sandbox keys are a tenth of the production ones.",
        ),
        "Going over the per-minute quota gets a 429 response, and its Retry-After header "
        "says how many seconds to back off. If the daily cap is exceeded instead, the key "
        "stays blocked until midnight UTC.",
    ),
    Sample(
        "s05",
        "partly unsupported",
        "Are children admitted free to the Ostrander Maritime Museum?",
        (
            "Admission to the Ostrander Maritime Museum is 14 euros for adults and 9 euros for "
            "students and visitors over 65. Children under 12 enter free when accompanied by "
            "an adult. Family tickets for two adults and up to three children cost 32 euros.",
            "The museum is open Tuesday to Sunday from 10:00 to 17:00, with late opening until "
            "21:00 on the first Thursday of each month. The harbour tour boat leaves from the "
            "museum pier at 11:00 and 14:00 between May and September.",
        ),
        "Children under 12 get in for free as long as an adult is with them. Teenagers "
        "between 12 and 17 also pay nothing on the first Thursday of each month. The harbour "
        "boat tour is included in every ticket.",
    ),
    Sample(
        "s06",
        "paraphrase",
        "When will the Northgate data centre maintenance take place and what is affected?",
        (
            "Planned maintenance at the Northgate data centre will take place on Saturday 14 "
            "June between 01:00 and 05:00 UTC. Engineers will replace the two main power "
            "distribution units in hall B, one after the other, so that at least one feed "
            "stays live throughout.",
            "Services hosted only in hall B may see brief interruptions of up to two minutes "
            "while the load moves between feeds. Virtual machines in halls A and C are not "
            "affected. Customers with redundant deployments across halls should see no impact "
            "at all.",
            "Object storage and the managed database service run in all three halls and will "
            "stay available. The status page will be updated at the start and the end of the "
            "work, and at any point an interruption lasts longer than planned.",
            "If you need to move a workload out of hall B ahead of the work, open a support "
            "ticket before 12 June and the operations team will schedule a live migration at "
            "no charge.",
        ),
        "The work is scheduled for Saturday 14 June from 01:00 to 05:00 UTC, when the power "
        "distribution units in hall B will be swapped one at a time. Workloads that live only "
        "in hall B could drop for up to two minutes, while halls A and C carry on normally. "
        "Object storage and managed databases stay up throughout.",
    ),
    Sample(
        "s07",
        "verbatim",
        "Which documents do I need to renew a fishing permit for Lake Varna?",
        (
            "Fishing permits for Lake Varna are valid for one calendar year and can be renewed "
            "from 1 December. To renew, bring your previous permit, a photo identity document "
            "and proof of address dated within the last three months to any district office.",
            "Renewal costs 45 lari for residents and 90 lari for visitors. Anglers under 16 "
            "fish free but must still carry a youth card, which is issued at the district "
            "office on the same day.",
        ),
        "To renew, bring your previous permit, a photo identity document and proof of "
        "address dated within the last three months to any district office. Renewal costs 45 "
        "lari for residents and 90 lari for visitors.",
    ),
    Sample(
        "s08",
        "mixed",
        "What changed in version 3.2 of the Quillmark editor?",
        (
            "Quillmark 3.2 adds a split view that shows the Markdown source and the rendered "
            "page side by side. Scrolling either pane keeps the other in step. The export menu "
            "gains a PDF option that embeds the fonts used in the document.",
            "Version 3.2 drops support for the legacy plugin format introduced in 1.x; plugins "
            "must be rebuilt with the 2.0 plugin kit. Spell checking now runs in a background "
            "thread, which fixes the typing lag reported on long documents.",
        ),
        "Quillmark 3.2 adds a split view that shows the Markdown source and the rendered page "
        "side by side. It also moves spell checking off the main thread, curing the lag when "
        "typing in long files, and old 1.x plugins no longer load.",
    ),
    Sample(
        "s09",
        "partly unsupported",
        "How often do trains run between Brenholm and Kessel on Sundays?",
        (
            "On weekdays trains between Brenholm and Kessel run every 20 minutes from 06:00 to "
            "20:00 and every 40 minutes in the evening. The journey takes 34 minutes with stops "
            "at Aalby and Mersted.",
            "On Saturdays and Sundays the service runs every 30 minutes all day. The first "
            "Sunday train leaves Brenholm at 07:15 and the last leaves Kessel at 23:05. "
            "Bicycles are carried free on weekend trains, space permitting.",
        ),
        "On Sundays there is a train every 30 minutes throughout the day, starting at 07:15 "
        "from Brenholm. The trip lasts about 25 minutes, and bikes cost 3 euros each.",
    ),
    Sample(
        "s10",
        "paraphrase",
        "How should Velorin eye drops be stored?",
        (
            "Store unopened bottles of Velorin eye drops in a refrigerator at 2 to 8 °C. Do not "
            "freeze. Keep the bottle in its outer carton to protect it from light.",
            "Once opened, a bottle may be kept at room temperature below 25 °C and must be "
            "discarded four weeks after opening, even if some solution remains. Write the date "
            "of opening on the carton.",
            "Do not use the drops if the solution has changed colour or contains particles. Ask "
            "your pharmacist how to throw away medicines you no longer use.",
        ),
        "Keep unopened bottles cold, between 2 and 8 °C, in the carton and away from light, "
        "and never let them freeze. After opening you can keep a bottle at room temperature "
        "below 25 °C, but throw it away four weeks later.",
    ),
    Sample(
        "s11",
        "partly unsupported",
        "How many days a week can staff at Lindqvist & Ode work from home?",
        (
            "Staff at Lindqvist & Ode may work from home up to two days a week once they have "
            "completed their probation period. Team leads can agree different patterns for "
            "roles that need to be on site, such as reception and the print room.",
            "Home working days must be recorded in the staff calendar by Friday for the "
            "following week. The company pays a one-off allowance of 300 euros towards a desk "
            "or chair for home working.",
        ),
        "After probation, employees can work from home for up to two days each week. The "
        "company also covers their home internet bill every month. Requests for a third day "
        "are approved automatically for staff with more than five years of service.",
    ),
    Sample(
        "s12",
        "paraphrase",
        "Why is the beach at Port Saldane black?",
        (
            "The beaches on the western coast of Saldane Island are formed from basalt that "
            "erupted from the island's shield volcano about 4,000 years ago. Waves broke the "
            "lava flows into grains, giving the sand its dark colour.",
            "Black sand heats up much more than pale sand in direct sun; on summer afternoons "
            "its surface can pass 60 °C, so visitors are advised to wear sandals. The sand is "
            "protected, and taking it off the island is forbidden.",
        ),
        "Its sand comes from basalt lava that the island's volcano erupted some 4,000 years "
        "ago, which the sea has ground into dark grains. In summer the surface can get hotter "
        "than 60 °C, so wear sandals.",
    ),
    Sample(
        "s13",
        "paraphrase",
        "Can I bring my dog on the Kavala ferry?",
        (
            "Dogs may travel on Kavala ferries on the open deck or in the pet area on deck 4. "
            "They must be on a lead and wear a muzzle in indoor areas. Dogs are not allowed in "
            "cabins, restaurants or the lounge.",
            "Each dog needs a pet ticket, which costs 12 euros per crossing and can be bought "
            "online or at the port. Assistance dogs travel free and may accompany their owner "
            "everywhere on board.",
        ),
        "Yes, dogs are welcome on the open deck or in the deck 4 pet area, on a lead. A pet "
        "ticket costs 12 euros per crossing, while assistance dogs go free. Hope this helps!",
    ),
)
QUICK_IDS = ("s01", "s02", "s03", "s08")


# -- the counting server -----------------------------------------------------------------

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])")
_PATH = re.compile(r"^/(?P<judge>[a-z]+)/(?P<sample>[A-Za-z0-9_-]+)/v1/chat/completions$")
_TARGET = re.compile(r"^JUDGE:\s*(.+)$", re.MULTILINE)
_ANSWER_LINE = re.compile(r"^\[S(\d+)\] (.*)$", re.MULTILINE)
_CHUNK0 = re.compile(r"\[C0\] (.+)")


def split_sentences(text: str) -> list[str]:
    """The mock's own plain splitter (the peers' LLM would extract statements instead)."""
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]


def message_text(message: dict[str, Any]) -> str:
    """A message's text, whether its content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def prompt_chars(body: dict[str, Any]) -> int:
    """Characters the estimator counts: all message texts, response_format and tools."""
    chars = sum(len(message_text(m)) for m in body.get("messages", []) if isinstance(m, dict))
    for key in ("response_format", "tools"):
        if body.get(key) is not None:
            chars += len(compact(body[key]))
    return chars


def estimate_tokens(chars: int) -> int:
    return math.ceil(chars / 4)


def _first_schema(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` that looks like a JSON schema (JSON mode prompts)."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("properties"), dict):
            return value
    return None


def request_schema(body: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The reply schema the request asks for, and where it was found."""
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        schema = response_format.get("json_schema", {}).get("schema")
        if isinstance(schema, dict):
            return schema, "response_format"
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        parameters = tools[0].get("function", {}).get("parameters")
        if isinstance(parameters, dict):
            return parameters, "tools"
    for message in body.get("messages", []):
        if isinstance(message, dict):
            found = _first_schema(message_text(message))
            if found is not None:
                return found, "prompt"
    return None, "none"


@dataclass(slots=True)
class _Context:
    """What the mock fills the schema with for one request."""

    answer_sentences: list[str]
    context_sentences: list[str]
    targets: list[tuple[int, str]]
    """faithmon's sentences to judge: (index, sentence)."""
    quote: str


def _context(body: dict[str, Any], sample: Sample | None) -> _Context:
    text = "\n".join(message_text(m) for m in body.get("messages", []) if isinstance(m, dict))
    if sample is not None:
        answer = split_sentences(sample.answer)
        context = [s for chunk in sample.chunks for s in split_sentences(chunk)]
        quote = sample.chunks[0][:QUOTE_CHARS]
    else:
        answer = split_sentences(text)[-3:]
        context = split_sentences(text)[:3]
        quote = ""
    found = _CHUNK0.search(text)
    if found:
        quote = found.group(1)[:QUOTE_CHARS]
    lines = {int(i): s for i, s in _ANSWER_LINE.findall(text)}
    targets: list[tuple[int, str]] = []
    judge = _TARGET.search(text)
    if judge:
        for token in re.findall(r"S(\d+)", judge.group(1)):
            index = int(token)
            targets.append((index, lines.get(index, "")))
    return _Context(answer, context, targets, quote)


class _Instance:
    """A minimal valid instance of a JSON schema, with the fields the judges read filled."""

    def __init__(self, root: dict[str, Any], context: _Context) -> None:
        self.root = root
        self.context = context

    def resolve(self, schema: Any) -> dict[str, Any]:
        while isinstance(schema, dict) and "$ref" in schema:
            node: Any = self.root
            for part in str(schema["$ref"]).lstrip("#/").split("/"):
                node = node[part]
            schema = node
        return schema if isinstance(schema, dict) else {}

    def build(self, schema: Any, key: str | None = None, index: int = 0) -> Any:
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.choose(list(schema["enum"]))
        for combinator in ("anyOf", "oneOf", "allOf"):
            if combinator in schema:
                branches = [self.resolve(b) for b in schema[combinator]]
                usable = [b for b in branches if b.get("type") != "null"] or branches
                return self.build(usable[0], key, index)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind is None:
            kind = "object" if "properties" in schema else "string"
        if kind == "object":
            properties = schema.get("properties", {})
            return {name: self.build(sub, name, index) for name, sub in properties.items()}
        if kind == "array":
            items = self.resolve(schema.get("items", {}))
            return [self.build(items, key, i) for i in range(self.count(key, items))]
        if kind in ("integer", "number"):
            return self.integer(key, index)
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        return self.string(key, index)

    def count(self, key: str | None, items: dict[str, Any]) -> int:
        context = self.context
        if key == "truths":
            return len(context.context_sentences)
        if key == "claims" and "sentence" in items.get("properties", {}):
            return len(context.targets)
        if key in ("statements", "claims", "verdicts"):
            return len(context.answer_sentences)
        return 1

    def items_of(self, key: str | None) -> list[str]:
        if key == "truths":
            return self.context.context_sentences
        return self.context.answer_sentences

    @staticmethod
    def choose(values: list[Any]) -> Any:
        for preferred in ("supported", "yes", 1, True):
            if preferred in values:
                return preferred
        return values[0]

    def integer(self, key: str | None, index: int) -> int:
        if key == "sentence":
            targets = self.context.targets
            return targets[index][0] if index < len(targets) else 0
        if key in ("verdict", "chunk"):
            return 1 if key == "verdict" else 0
        return 0

    def string(self, key: str | None, index: int) -> str:
        context = self.context
        if key in ("statements", "claims", "truths"):
            values = self.items_of(key)
            return values[index] if index < len(values) else "x"
        if key in ("statement", "claim"):
            if context.targets:
                return context.targets[index][1] if index < len(context.targets) else "x"
            values = context.answer_sentences
            return values[index] if index < len(values) else "x"
        if key == "quote":
            return context.quote
        if key == "verdict":
            return "yes"
        if key == "reason":
            return "The score is 1.00 because the context states every claim."
        return "x"


def _step(reply: Any) -> str:
    """A label for the request's step: the reply's keys, with the fields of object items."""
    if not isinstance(reply, dict):
        return type(reply).__name__
    labels = []
    for key, value in reply.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            labels.append(f"{key}[{','.join(value[0])}]")
        else:
            labels.append(key)
    return " ".join(labels)


@dataclass(frozen=True, slots=True)
class Logged:
    judge: str
    sample: str
    model: str
    step: str
    schema_from: str
    response_format: str | None
    prompt_chars: int
    prompt_tokens: int
    completion_tokens: int

    def as_json(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "sample": self.sample,
            "model": self.model,
            "step": self.step,
            "schema_from": self.schema_from,
            "response_format": self.response_format,
            "prompt_chars": self.prompt_chars,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


@dataclass(slots=True)
class CountingServer:
    """An OpenAI-compatible ``/v1/chat/completions`` on 127.0.0.1 that logs every request."""

    samples: dict[str, Sample]
    log: list[Logged] = field(default_factory=list)
    stray: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    httpd: ThreadingHTTPServer | None = None

    def start(self) -> str:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                server.note_stray(f"GET {self.path}")
                self.send(404, {"error": {"message": "not found", "type": "invalid_request"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                match = _PATH.match(self.path)
                if match is None and self.path != "/v1/chat/completions":
                    server.note_stray(f"POST {self.path}")
                    self.send(404, {"error": {"message": "not found", "type": "invalid_request"}})
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    self.send(400, {"error": {"message": "bad JSON", "type": "invalid_request"}})
                    return
                judge = match.group("judge") if match else "unknown"
                sample = match.group("sample") if match else "unknown"
                self.send(200, server.answer(judge, sample, body))

            def send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()

    def note_stray(self, what: str) -> None:
        with self.lock:
            self.stray.append(what)

    def answer(self, judge: str, sample_id: str, body: dict[str, Any]) -> dict[str, Any]:
        schema, schema_from = request_schema(body)
        context = _context(body, self.samples.get(sample_id))
        if schema is None:
            reply: Any = {"reason": "no schema in the request"}
        else:
            reply = _Instance(schema, context).build(schema)
        content = compact(reply)
        step = _step(reply)
        chars = prompt_chars(body)
        prompt_tokens = estimate_tokens(chars)
        completion_tokens = estimate_tokens(len(content))
        response_format = body.get("response_format")
        with self.lock:
            self.log.append(
                Logged(
                    judge=judge,
                    sample=sample_id,
                    model=str(body.get("model")),
                    step=step,
                    schema_from=schema_from,
                    response_format=(
                        str(response_format.get("type"))
                        if isinstance(response_format, dict)
                        else None
                    ),
                    prompt_chars=chars,
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                )
            )
            number_ = len(self.log)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if schema_from == "tools" and body.get("tools"):
            name = body["tools"][0].get("function", {}).get("name", "tool")
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{number_}",
                        "type": "function",
                        "function": {"name": name, "arguments": content},
                    }
                ],
            }
        return {
            "id": f"chatcmpl-bench-{number_}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model")),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
                    "message": message,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def requests_of(self, judge: str, sample: str) -> list[Logged]:
        with self.lock:
            return [r for r in self.log if r.judge == judge and r.sample == sample]


# -- faithmon ---------------------------------------------------------------------------


@dataclass(slots=True)
class Row:
    """One judge on one sample: what the server counted and what the judge said."""

    sample: str
    calls: int
    prompt_tokens: int
    score: float | None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "sample": self.sample,
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "score": self.score,
            "error": self.error,
            **self.extra,
        }


def run_faithmon(server: CountingServer, base: str, samples: Sequence[Sample]) -> list[Row]:
    rows = []
    for sample in samples:
        judge = OpenAIJudge(
            OpenAIJudgeConfig(
                model=FAITHMON_MODEL, base_url=f"{base}/faithmon/{sample.id}/v1", api_key="x"
            )
        )
        judgement = judge.judge(sample.question, sample.chunks, sample.answer)
        logged = server.requests_of("faithmon", sample.id)
        rows.append(
            Row(
                sample=sample.id,
                calls=len(logged),
                prompt_tokens=sum(r.prompt_tokens for r in logged),
                score=judgement.faithfulness,
                error=judgement.error,
                extra={
                    "status": judgement.status,
                    "usage_calls": judgement.usage.calls,
                    "usage_prompt_tokens": judgement.usage.prompt_tokens,
                    "verdicts": [c.verdict for c in judgement.claims],
                    "flags": sorted({f for c in judgement.claims for f in c.flags}),
                },
            )
        )
    return rows


# -- the peers ---------------------------------------------------------------------------


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
    peers: Peers, judge: str, server: CountingServer, base: str, samples: Sequence[Sample]
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
        logged = server.requests_of(judge, sample.id)
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


# -- the table ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Summary:
    name: str
    rows: tuple[Row, ...]

    @property
    def calls_mean(self) -> float:
        return statistics.fmean(r.calls for r in self.rows)

    @property
    def calls_max(self) -> int:
        return max(r.calls for r in self.rows)

    @property
    def tokens_mean(self) -> float:
        return statistics.fmean(r.prompt_tokens for r in self.rows)

    @property
    def errors(self) -> int:
        return sum(r.error is not None for r in self.rows)


def table(summaries: Sequence[Summary], baseline: Summary | None, header: str) -> str:
    """Plain-text table in the style of ``common.render``."""
    titles = (
        "judge",
        "calls/trace mean",
        "max",
        "prompt ≈tok/trace mean",
        "vs RAGAS",
        f"≤{CALLS_GOAL} call",
        f"≤{TOKENS_GOAL}x RAGAS tok",
    )
    rows = []
    for s in summaries:
        relative_tokens = s.tokens_mean / baseline.tokens_mean if baseline else None
        is_faithmon = s.name.startswith("faithmon")
        calls_goal = ("met" if s.calls_max <= CALLS_GOAL else "missed") if is_faithmon else ""
        tokens_goal = ""
        if is_faithmon:
            tokens_goal = (
                "n/a (no RAGAS)"
                if relative_tokens is None
                else "met"
                if relative_tokens <= TOKENS_GOAL
                else "missed"
            )
        rows.append(
            (
                s.name,
                number(s.calls_mean),
                str(s.calls_max),
                number(s.tokens_mean),
                ratio(relative_tokens) if relative_tokens is not None else "n/a",
                calls_goal,
                tokens_goal,
            )
        )
    widths = [max(len(t), *(len(r[i]) for r in rows)) for i, t in enumerate(titles)]
    right = (False, True, True, True, True, False, False)

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)
        ).rstrip()

    out = [header, "", line(titles), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out)


def per_sample_table(samples: Sequence[Sample], summaries: Sequence[Summary]) -> str:
    titles = ("sample", "kind", *(f"{s.name.split()[0]} calls/tok" for s in summaries))
    by_judge = [{r.sample: r for r in s.rows} for s in summaries]
    rows = []
    for sample in samples:
        cells = [sample.id, sample.kind]
        for found in by_judge:
            row = found.get(sample.id)
            cells.append(f"{row.calls} / {row.prompt_tokens:,}" if row else "-")
        rows.append(tuple(cells))
    widths = [max(len(t), *(len(r[i]) for r in rows)) for i, t in enumerate(titles)]
    lines = ["  ".join(t.ljust(w) for t, w in zip(titles, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append(
            "  ".join(
                c.ljust(w) if i < 2 else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            ).rstrip()
        )
    return "\n".join(lines)


# -- main --------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help=f"only samples {QUICK_IDS}")
    parser.add_argument(
        "--peers-venv",
        type=Path,
        default=DEFAULT_VENV,
        help=f"the venv with ragas and deepeval (made if missing; default {DEFAULT_VENV})",
    )
    parser.add_argument("--no-peers", action="store_true", help="measure faithmon alone")
    args = parser.parse_args(argv)
    samples = [s for s in SAMPLES if not args.quick or s.id in QUICK_IDS]

    server = CountingServer({s.id: s for s in samples})
    base = server.start()
    notes: list[str] = []
    peer_rows: dict[str, list[Row]] = {}
    peers = Peers(python=None, problem="--no-peers given")
    try:
        faithmon_rows = run_faithmon(server, base, samples)
        if not args.no_peers:
            peers = setup_peers(args.peers_venv)
        if peers.problem is None:
            for judge in PEERS:
                rows, problem = run_peer(peers, judge, server, base, samples)
                if problem is None:
                    peer_rows[judge] = rows
                else:
                    notes.append(f"{judge} not measured: {problem}")
        else:
            notes.append(f"peers not measured: {peers.problem}")
    finally:
        server.stop()

    summaries = [Summary("faithmon", tuple(faithmon_rows))]
    for judge in PEERS:
        if judge in peer_rows:
            label = f"{judge} {peers.versions.get(judge) or ''}".strip()
            summaries.append(Summary(label, tuple(peer_rows[judge])))
    baseline = next((s for s in summaries if s.name.startswith("ragas")), None)

    header = (
        f"judge cost: {len(samples)} samples, one counting server on 127.0.0.1; "
        "≈tokens = ceil(characters / 4) over all message text + compact JSON of "
        "response_format/tools, the same estimator for every judge"
    )
    print(table(summaries, baseline, header))
    print()
    print(per_sample_table(samples, summaries))
    print()
    faithmon = summaries[0]
    called = [r for r in faithmon.rows if r.calls]
    mismatch = [
        r.sample
        for r in faithmon.rows
        if r.extra["usage_calls"] != r.calls or r.extra["usage_prompt_tokens"] != r.prompt_tokens
    ]
    zero = len(faithmon.rows) - len(called)
    note = (
        f"faithmon: {zero} of {len(faithmon.rows)} traces made no call (every sentence "
        "verbatim in a chunk or a non-claim)"
    )
    if called:
        called_mean = statistics.fmean(r.prompt_tokens for r in called)
        note += f"; the {len(called)} traces that called sent {number(called_mean)} ≈tok each"
        if baseline:
            note += f" = {ratio(called_mean / baseline.tokens_mean)} RAGAS's mean"
    notes.append(note)
    notes.append(
        "faithmon Judgement.usage agrees with the server log on every sample"
        if not mismatch
        else f"faithmon Judgement.usage disagrees with the server log on {mismatch}"
    )
    flagged = [r.sample for r in faithmon.rows if r.extra["flags"] or r.error]
    if flagged:
        notes.append(f"faithmon claims flagged or errors on {flagged}")
    for s in summaries:
        if s.errors:
            notes.append(f"{s.name}: {s.errors} samples raised (see the JSON)")
    if server.stray:
        notes.append(f"stray requests to the server: {server.stray[:5]}")
    notes += [f"peers: {n}" for n in peers.notes]
    notes.append(
        "the mock marks every claim supported: calls and prompt tokens are the cost of the "
        "judges' own protocols; completion tokens depend on a real model and are only logged"
    )
    for n in notes:
        print(f"- {n}")

    steps: dict[str, dict[str, list[int]]] = {}
    for r in server.log:
        steps.setdefault(r.judge, {}).setdefault(r.step, []).append(r.prompt_tokens)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": args.quick,
        "python": platform.python_version(),
        "estimator": "prompt tokens = ceil(chars/4) over all message text plus compact JSON "
        "of response_format and tools; completion tokens likewise over the mock's reply",
        "samples": [s.as_json() for s in samples],
        "peers": {
            "venv": str(args.peers_venv),
            "versions": peers.versions,
            "notes": peers.notes,
            "problem": peers.problem,
        },
        "judges": {
            s.name: {
                "calls_mean": s.calls_mean,
                "calls_max": s.calls_max,
                "prompt_tokens_mean": s.tokens_mean,
                "prompt_tokens_min": min(r.prompt_tokens for r in s.rows),
                "prompt_tokens_max": max(r.prompt_tokens for r in s.rows),
                "prompt_tokens_vs_ragas": (
                    s.tokens_mean / baseline.tokens_mean if baseline else None
                ),
                "rows": [r.as_json() for r in s.rows],
            }
            for s in summaries
        },
        "steps_mean_prompt_tokens": {
            judge: {step: statistics.fmean(v) for step, v in by_step.items()}
            for judge, by_step in steps.items()
        },
        "goals": {
            "faithmon_calls_max": faithmon.calls_max,
            "calls_met": faithmon.calls_max <= CALLS_GOAL,
            "tokens_ratio": faithmon.tokens_mean / baseline.tokens_mean if baseline else None,
            "tokens_met": (
                faithmon.tokens_mean / baseline.tokens_mean <= TOKENS_GOAL if baseline else None
            ),
        },
        "notes": notes,
        "requests": [r.as_json() for r in server.log],
        "stray": server.stray,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwritten to {relative(RESULTS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
