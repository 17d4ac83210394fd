"""Context and answer relevance beside faithfulness, and why an answer is unfaithful.

Lexical, no model, from the question, the chunks and the answer:

- **context relevance**: the share of the question's terms (content-word stems, numbers
  and codes; a name or number weighs ``ENTITY_WEIGHT`` words, since it pins down what
  is asked) that the chunks hold anywhere (``support.Evidence``: stems, compounds,
  acronyms, number words).
- **answer relevance**: the share of the answer's terms that the question names or that
  the chunk sentences about the question hold (a sentence sharing a question term, with
  its neighbours: the answer to "what city?" stands beside the question's words, not in
  them). A faithful copy of a chunk the question does not touch scores low.
- **cause** of an answer with a claim not supported: ``retrieval`` when the context
  relevance is below ``model.RETRIEVAL_BAR`` (the chunks miss what the question asks, so the
  answer filled a gap), ``generation`` when it is not (the chunks bear on the question
  and the answer strayed from them).
- **abstention**, for an answer that declines and states no fact: ``correct`` below the
  same bar, ``missed`` at or above it.

What it cannot see: whether the chunks *answer* the question rather than only name its
terms (a passage about the Oberoi Group that lacks the head office still scores high),
synonyms beyond shared stems, and an answer that is on topic in other words. Without a
question nothing is measured (None).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..model import Claim, Judgement
from ..model.judgement import Relevance, answer_unsupported, retrieval_missed
from . import support as s
from . import text as t

# A name or number says which thing is asked about; a common word only how.
ENTITY_WEIGHT = 2.0

# A chunk sentence bears on the question when it holds at least this share of the best
# sentence's question terms (and at least one).
ABOUT_SHARE = 0.5

_Terms = dict[str, float]


def _terms(text: str) -> _Terms:
    """Weighted terms of ``text``: stems at 1, names, numbers and codes at ENTITY_WEIGHT."""
    found = s.tokens(text)
    weights: _Terms = {w: 1.0 for w in found.words if not w.startswith("#")}
    for name in found.names:
        weights[name] = ENTITY_WEIGHT
    for number in (*found.numbers, *found.number_words):
        weights["#" + number] = ENTITY_WEIGHT
    return weights


def _share(terms: _Terms, known: Iterable[str] | set[str]) -> float:
    total = sum(terms.values())
    held = known if isinstance(known, set) else set(known)
    return sum(w for term, w in terms.items() if term in held) / total if total else 0.0


def _known(evidence: s.Evidence) -> set[str]:
    """Everything the context holds, in ``_terms`` keys."""
    return evidence.words | {"#" + n for n in evidence.numbers}


def context_relevance(question: _Terms, evidence: s.Evidence) -> float:
    return _share(question, _known(evidence))


def _about(question: _Terms, evidence: s.Evidence) -> set[str]:
    """The terms of the chunk sentences that bear on the question, with their neighbours."""
    sentences = evidence.sentences
    scores = [
        sum(w for term, w in question.items() if term in words or term[1:] in numbers)
        for _, _, words, numbers in sentences
    ]
    best = max(scores, default=0.0)
    held: set[str] = set()
    if best <= 0:
        return held
    for i, score in enumerate(scores):
        if score <= 0 or score < ABOUT_SHARE * best:
            continue
        for j in (i - 1, i, i + 1):
            if 0 <= j < len(sentences) and sentences[j][0] == sentences[i][0]:
                _, sentence, words, numbers = sentences[j]
                held |= words | {"#" + n for n in numbers} | s.compounds(sentence)
    return held


def answer_relevance(question: _Terms, answer: _Terms, evidence: s.Evidence) -> float | None:
    if not answer:
        return None
    return _share(answer, set(question) | _about(question, evidence))


def declines(answer: str, claims: Sequence[Claim]) -> bool:
    """An answer that declines: an abstention and no claim of fact beside it."""
    return not claims and t.abstains(answer)


def measure(
    question: str,
    chunks: Sequence[str],
    answer: str,
    judgement: Judgement,
    evidence: s.Evidence | None = None,
) -> Relevance | None:
    """The relevance of ``judgement``'s answer; ``evidence``: the chunks, when already
    indexed (the offline judge's own index, so nothing is read twice). None without a
    question."""
    asked = _terms(question)
    if not asked:
        return None
    index = evidence if evidence is not None else s.Evidence(chunks)
    context = round(context_relevance(asked, index), 4)
    gap = retrieval_missed(context)
    unfaithful = answer_unsupported(judgement.faithfulness)
    return Relevance(
        context_relevance=context,
        answer_relevance=_rounded(answer_relevance(asked, _terms(answer), index)),
        cause=("retrieval" if gap else "generation") if unfaithful else None,
        abstention=("correct" if gap else "missed") if declines(answer, judgement.claims) else None,
    )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
