"""Whether a reviewer's labels settle an item: a label for every claim the judge found
(the claim's own, its split parts', or a merge's). Labelling closes the item for that
reviewer, so a claim left out then could never be labelled; the CLI, the API and the
review page all refuse such labels."""

from __future__ import annotations

from collections.abc import Sequence

from ..model.review import ClaimLabel


def unlabelled(labels: Sequence[ClaimLabel], claims: int) -> str | None:
    """What ``labels`` leave out of an item of ``claims`` claims (claims 0 to claims - 1),
    or None when every claim has a label."""
    labelled = {one.index for one in labels}
    missing = [str(i) for i in range(claims) if i not in labelled]
    if not missing:
        return None
    which = f"claim {missing[0]} has" if len(missing) == 1 else f"claims {', '.join(missing)} have"
    return f"{which} no label: label every claim of the item ({claims}), as it closes once labelled"
