"""Citation markers: each form, unresolved and hidden chunks, and the per-claim check."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace

import pytest

from faithmon.errors import ConfigError
from faithmon.judge import JudgeOptions, OfflineJudge, make_judge
from faithmon.judge.citations import Source, parse, styles_of
from faithmon.judge.contracts import Checked, Contracts, checked
from faithmon.judge.openai_config import OpenAIJudgeConfig
from faithmon.judge.openai_judge import OpenAIJudge
from faithmon.model import Chunk
from tests.openai_server import OpenAIServer, reply
from tests.servers import serve_in_thread

CHUNKS = [
    "Returns are accepted within 30 days of delivery.",
    "Refunds go back to the original card within 5 business days.",
    "Print the return label from the Orders page.",
]
SOURCES = [
    Source(CHUNKS[0], id="kb-returns", url="https://help.example/returns"),
    Source(CHUNKS[1], id="kb-refunds"),
    Source(CHUNKS[2], id="kb-labels"),
]
ALL = styles_of("all")


@pytest.mark.parametrize(
    ("answer", "cited"),
    [
        ("Refunds take 5 days [2].", (1,)),
        ("Refunds take 5 days [1, 3].", (0, 2)),
        ("Refunds take 5 days [1-2].", (0, 1)),
        ("Refunds take 5 days [doc-3].", (2,)),
        ("Refunds take 5 days [kb-refunds].", (1,)),
        ("Refunds take 5 days.[^2]", (1,)),
        ("Refunds take 5 days^3.", (2,)),
        ("Refunds take [5 days](https://help.example/returns/).", (0,)),
        ("Refunds take 5 days. [2]", (1,)),
    ],
)
def test_each_marker_form_resolves_to_its_chunk(answer: str, cited: tuple[int, ...]) -> None:
    marked = parse(answer, SOURCES, ALL)
    assert [s.cited for s in marked.sentences] == [cited]
    assert marked.unresolved == 0
    assert "[" not in marked.answer and "^" not in marked.answer  # the judge reads no marker


def test_text_in_brackets_that_names_no_chunk_is_not_a_marker() -> None:
    marked = parse("It is fine [sic]. See [the guide](https://elsewhere.example).", SOURCES, ALL)
    assert marked.unresolved == 0 and all(not s.has_markers for s in marked.sentences)
    assert "[sic]" in marked.answer and "(https://elsewhere.example)" in marked.answer


def test_markers_past_the_last_chunk_or_to_a_hidden_one_are_unresolved() -> None:
    # kb-hidden was retrieved but never passed to the generator: it is not in SOURCES.
    marked = parse("Returns take 30 days [7]. Refunds are quick [kb-hidden-9].", SOURCES, ALL)
    assert [(s.cited, s.unresolved) for s in marked.sentences] == [((), 1), ((), 1)]
    assert marked.unresolved == 2


def test_displayed_numbers_in_chunk_metadata_win_over_positions() -> None:
    shown = [Source(c, number=n) for c, n in zip(CHUNKS, (4, 5, 6), strict=True)]
    marked = parse("Refunds take 5 days [5]. Labels print [1].", shown, ALL)
    assert [(s.cited, s.unresolved) for s in marked.sentences] == [((1,), 0), ((), 1)]


def test_a_style_turned_off_is_left_as_text() -> None:
    marked = parse("Refunds take 5 days [2].", SOURCES, styles_of("footnote"))
    assert marked.unresolved == 0 and marked.answer == "Refunds take 5 days [2]."
    with pytest.raises(ValueError, match="unknown citation style 'apa'"):
        styles_of("numeric,apa")


def test_a_faithful_answer_with_a_misplaced_citation() -> None:
    """Every claim is supported, so faithfulness is 1.0; one cites a chunk that does not
    support it, so citation accuracy is 0.5."""
    answer = (
        "Returns are accepted within 30 days of delivery [1]. "
        "Refunds go back to the original card within 5 business days [3]."
    )
    judgement = checked(OfflineJudge()).judge("How do returns work?", CHUNKS, answer)
    assert judgement.faithfulness == 1.0
    assert judgement.citation_accuracy == 0.5
    assert [(c.citations, c.citation) for c in judgement.claims] == [
        ((0,), "correct"),
        ((2,), "wrong"),
    ]
    assert judgement.claims[1].chunk == 1  # its evidence is chunk 2, not the cited 3


def test_unresolved_markers_are_counted_and_uncited_claims_are_none() -> None:
    answer = "Returns are accepted within 30 days of delivery [7]. Print the return label."
    judgement = checked(OfflineJudge()).judge("q", CHUNKS, answer)
    assert judgement.unresolved_citations == 1
    assert [c.citation for c in judgement.claims] == ["unresolved", "none"]
    assert judgement.citation_accuracy == 0.0


def test_an_answer_without_markers_has_no_citation_accuracy() -> None:
    judgement = checked(OfflineJudge()).judge("q", CHUNKS, "Print the return label.")
    assert judgement.citation_accuracy is None
    assert [c.citation for c in judgement.claims] == ["none"]


def test_a_record_s_chunks_are_named_by_their_ids() -> None:
    chunks = [Chunk(i, s.text, s.id) for i, s in enumerate(SOURCES)]
    judgement = checked(OfflineJudge()).judge_chunks(
        "q", chunks, "Print the return label from the Orders page [kb-labels]."
    )
    assert [(c.citations, c.citation) for c in judgement.claims] == [((2,), "correct")]


def test_non_default_styles_are_another_judge_configuration() -> None:
    plain = make_judge("offline", JudgeOptions())
    assert plain.name == OfflineJudge().name
    numeric = make_judge("offline", JudgeOptions(citation_style="numeric"))
    assert numeric.name == f"{OfflineJudge().name} citations=numeric"
    with pytest.raises(ConfigError, match="FAITHMON_CITATION_STYLE"):
        Contracts.load(style="apa")


@pytest.fixture
def server() -> Iterator[tuple[OpenAIServer, str]]:
    scripted = OpenAIServer()
    with serve_in_thread(scripted.app) as url:
        yield scripted, url + "/v1"


def _llm(url: str, **changes: object) -> Checked:
    config = OpenAIJudgeConfig(model="m", base_url=url, api_key="k", backoff=0.01)
    return checked(OpenAIJudge(replace(config, **changes)))  # type: ignore[arg-type]


def _claim(sentence: int, chunk: int, verdict: str, cited: bool | None) -> dict[str, object]:
    return {
        "sentence": sentence,
        "claim": "c",
        "chunk": chunk,
        "quote": CHUNKS[chunk],
        "verdict": verdict,
        "reason": None,
        "cited": cited,
    }


LLM_ANSWER = "Returns are fine for a month [1]. Money returns to the card in 5 days [1]."


def test_the_llm_judge_checks_citations_in_the_request_that_judges_the_claims(
    server: tuple[OpenAIServer, str],
) -> None:
    """Sentence 0's quote lies in its cited chunk: correct. Sentence 1 is supported by
    chunk 2 but cites chunk 1, and the reply says chunk 1 alone does not support it."""
    scripted, url = server
    scripted.play(reply([_claim(0, 0, "supported", True), _claim(1, 1, "supported", False)]))
    judgement = _llm(url).judge("q", CHUNKS, LLM_ANSWER)
    assert judgement.faithfulness == 1.0
    assert [c.citation for c in judgement.claims] == ["correct", "wrong"]
    assert len(scripted.requests) == 1
    prompt = scripted.requests[0]["messages"][-1]["content"]
    assert "CITED:\nS0: C0\nS1: C0" in prompt and "[1]" not in prompt


def test_a_verbatim_sentence_citing_another_chunk_is_asked_for_its_citation_alone(
    server: tuple[OpenAIServer, str],
) -> None:
    scripted, url = server
    answer = f"{CHUNKS[1]} [3]"  # verbatim from chunk 2, citing chunk 3
    scripted.play(reply([_claim(0, 1, "unsupported", False)]))
    [claim] = _llm(url).judge("q", CHUNKS, answer).claims
    # The pre-checks' verdict stands; only the citation came from the reply.
    assert (claim.verdict, claim.chunk, claim.citation) == ("supported", 1, "wrong")
    assert "JUDGE: S0" in scripted.requests[0]["messages"][-1]["content"]


def test_without_an_answer_about_the_citation_the_cited_chunks_are_asked_alone(
    server: tuple[OpenAIServer, str],
) -> None:
    """Two-call mode, or a reply that leaves ``cited`` null: one more request, carrying the
    cited chunk and not the one that supports the claim."""
    scripted, url = server
    scripted.play(
        reply([_claim(0, 0, "supported", None), _claim(1, 1, "supported", None)]),
        reply([_claim(0, 0, "unsupported", None) | {"chunk": None, "quote": ""}]),
    )
    judgement = _llm(url).judge("q", CHUNKS, LLM_ANSWER)
    assert [c.citation for c in judgement.claims] == ["correct", "wrong"]
    assert len(scripted.requests) == 2
    second = json.dumps(scripted.requests[1])
    assert "Refunds go back" not in second and "Returns are accepted" in second


def test_a_sentence_that_only_points_at_sources_cites_for_the_one_before() -> None:
    answer = "Refunds go back to the original card within 5 business days. See [2]. Sources: [9]"
    judgement = checked(OfflineJudge()).judge("q", CHUNKS, answer)
    assert [(c.text, c.citations, c.citation) for c in judgement.claims] == [
        ("Refunds go back to the original card within 5 business days.", (1,), "correct")
    ]
    assert judgement.unresolved_citations == 1 and judgement.faithfulness == 1.0


def test_faithmon_score_lines_may_name_their_contexts() -> None:
    """A JSONL context given as an object is named by its id; a bad one is one line."""
    from faithmon.judge.jsonl import score_lines

    line = json.dumps(
        {
            "user_input": "q",
            "response": "Print the return label from the Orders page [kb-labels].",
            "retrieved_contexts": [
                {"text": CHUNKS[0], "id": "kb-returns"},
                {"text": CHUNKS[2], "id": "kb-labels"},
            ],
        }
    )
    bad = json.dumps({"response": "x", "retrieved_contexts": [{"id": 1}]})
    (item, error), (failed, problem) = list(score_lines(checked(OfflineJudge()), [line, bad]))
    assert error is None and item["citation_accuracy"] == 1.0
    assert [(c["citations"], c["citation"]) for c in item["claims"]] == [([1], "correct")]
    assert failed["status"] == "invalid_input" and problem is not None and "\n" not in problem
    assert "must be a string or an object with a string 'text'" in problem


def test_a_judge_name_too_long_for_the_store_ends_in_a_digest() -> None:
    from faithmon.judge.contracts import MAX_NAME, bounded

    long = "openai:" + "m" * 300
    assert bounded("offline/v5") == "offline/v5"
    cut = bounded(long)
    assert len(cut) == MAX_NAME and cut != bounded(long + "x") and cut == bounded(long)
