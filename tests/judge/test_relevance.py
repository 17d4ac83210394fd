"""Context and answer relevance, and the cause of unfaithful answers, offline."""

from __future__ import annotations

from faithmon.judge import OfflineJudge
from faithmon.model.judgement import Relevance

QUESTION = "Which city is the head office of the Oberoi Group in?"
ON_TOPIC = "The Oberoi Group is a hotel company with its head office in Delhi."
OFF_TOPIC = "Arthur's Magazine was an American literary periodical published in Philadelphia."


def relevance(chunks: list[str], answer: str, question: str = QUESTION) -> Relevance:
    found = OfflineJudge().judge(question, chunks, answer).relevance
    assert found is not None
    return found


def test_off_topic_chunks_are_a_retrieval_miss() -> None:
    """Chunks that hold none of the question's terms: low context relevance, and the
    answer they cannot support is blamed on retrieval."""
    found = relevance([OFF_TOPIC], "The Oberoi Group has its head office in Delhi.")
    assert found.context_relevance is not None and found.context_relevance < 0.3
    assert found.cause == "retrieval"


def test_faithful_copy_of_unrelated_chunk_is_not_relevant() -> None:
    """An answer copying a chunk the question does not touch is faithful but off topic."""
    found = relevance([ON_TOPIC, OFF_TOPIC], OFF_TOPIC)
    assert found.answer_relevance is not None and found.answer_relevance < 0.3
    assert found.cause is None


def test_fact_added_to_on_topic_chunk_is_a_generation_error() -> None:
    """The chunk bears on the question and the answer says more than it: generation."""
    found = relevance([ON_TOPIC], "The Oberoi Group has its head office in Mumbai.")
    assert found.context_relevance is not None and found.context_relevance >= 0.8
    assert found.cause == "generation"


def test_faithful_answer_has_no_cause() -> None:
    """A supported answer to the question: relevant, and no cause."""
    found = relevance([ON_TOPIC], "The Oberoi Group has its head office in Delhi.")
    assert found.cause is None and found.abstention is None
    assert found.answer_relevance == 1.0


def test_abstention_over_chunks_lacking_the_answer_is_correct() -> None:
    """Declining when the chunks do not bear on the question is right."""
    found = relevance([OFF_TOPIC], "I could not find where the head office is.")
    assert found.abstention == "correct"
    assert found.cause is None


def test_abstention_over_chunks_holding_the_answer_is_missed() -> None:
    """Declining when the chunks hold the answer is a completeness failure."""
    found = relevance([ON_TOPIC], "The passages do not mention the head office.")
    assert found.abstention == "missed"


def test_no_question_measures_nothing() -> None:
    """A summary has no question to be relevant to: relevance is not measured."""
    assert OfflineJudge().judge("", [ON_TOPIC], ON_TOPIC).relevance is None
