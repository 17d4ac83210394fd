"""``/sentinels`` (runs per judge fingerprint, and which configurations lost trust) and
``/judges`` (usage per day, the budget left, blocks): the API's own views as tables.
Both describe the judge, not any tenant's records: every reader sees them."""

from __future__ import annotations

from html import escape

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...model.standing import untrusted_since
from ...store import Sessions
from ..v1 import ReadOptions
from ..v1.judges import judges_view
from ..v1.sentinels import sentinel_page
from .shell import page

RUN_COLUMNS = ("ran", "judge", "set", "state", "accuracy", "false flags", "misses", "gap", "cases")

PRICE_HINT = "set FAITHMON_JUDGE_PRICE_INPUT/OUTPUT"
NO_COST = f'<span class="muted" title="{PRICE_HINT}">—</span>'


def _usd(cost: float | None) -> str:
    return NO_COST if cost is None else f"${cost:.4f}"


def _table(head: tuple[str, ...], rows: list[str], empty: str) -> str:
    if not rows:
        return f'<p class="muted">{empty}</p>'
    cells = "".join(f"<th>{h}</th>" for h in head)
    return (
        f'<div class="table-wrap card"><table><thead><tr>{cells}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def routes(sessions: Sessions, options: ReadOptions) -> list[Route]:
    async def sentinels(request: Request) -> Response:
        found = await run_in_threadpool(sentinel_page, sessions, None, 100, None)
        runs = [
            f"<tr><td>{r.ran_at:%Y-%m-%d %H:%M}</td><td><code>{escape(r.judge)}</code></td>"
            f"<td>{escape(r.set)} <code>{escape(r.version[:12])}</code></td>"
            f'<td><span class="badge {escape(r.state)}">{escape(r.state)}</span></td>'
            f"<td>{r.accuracy:.0%}</td><td>{r.false_flag_rate:.0%}</td><td>{r.miss_rate:.0%}</td>"
            f"<td>{r.score_gap:.2f}</td><td>{r.cases}</td></tr>"
            for r in found.items
        ]
        trust = [
            f"<tr><td><code>{escape(t.judge)}</code></td>"
            f"<td>{'trusted again' if t.trusted else 'untrusted'}</td>"
            f"<td>{untrusted_since(t.untrusted_since)}</td><td>{escape(t.reason)}</td></tr>"
            for t in found.trust
        ]
        body = (
            "<h1>Sentinels</h1>"
            '<p class="lede">Known supported and unsupported cases the judge is run on, per '
            "judge configuration: when it stops telling them apart, its production scores "
            "are held back.</p>"
            + _table(
                (
                    "ran",
                    "judge",
                    "set",
                    "state",
                    "accuracy",
                    "false flags",
                    "misses",
                    "gap",
                    "cases",
                ),
                runs,
                "No sentinel run yet (faithmon sentinel run).",
            )
            + "<h2>Trust</h2>"
            + _table(
                ("judge", "now", "untrusted", "reason"), trust, "Every configuration is trusted."
            )
        )
        return page(request, "Sentinels", body, here="/sentinels")

    async def judges(request: Request) -> Response:
        view = await run_in_threadpool(judges_view, sessions, options)
        budget = view.budget
        if not budget.known:
            left = "not known to this server"
        elif budget.daily_tokens is None:
            left = "no daily budget"
        else:
            left = f"{budget.left_today:,} of {budget.daily_tokens:,} tokens left today"
        price_in = view.prices.input_per_million_usd
        price_out = view.prices.output_per_million_usd
        priced = price_in is not None and price_out is not None
        rows = []
        for j in view.items:
            shown = j.usage[:7]
            usage = ", ".join(
                f"{d.day}: {d.calls} calls, {d.prompt_tokens + d.completion_tokens:,} tokens"
                + (f" (${d.cost_usd:.4f})" if d.cost_usd is not None else "")
                for d in shown
            )
            # The total of the days the row shows, so the cell adds up what is beside it.
            shown_cost = sum(d.cost_usd or 0.0 for d in shown) if priced else None
            state = "blocked: " + escape(j.blocked.reason) if j.blocked else "active"
            rows.append(
                f"<tr><td><code>{escape(j.judge)}</code>{' (configured)' if j.configured else ''}"
                f"</td><td>{state}</td><td>{'yes' if j.trusted else 'no'}</td>"
                f"<td>{j.tokens_today:,}</td><td>{escape(usage) or '—'}</td>"
                f"<td>{_usd(shown_cost)}</td></tr>"
            )
        costs = (
            f"Prices: ${price_in:g} per million prompt tokens, "
            f"${price_out:g} per million completion tokens."
            if priced
            else f"No cost shown: {PRICE_HINT} (US dollars per million tokens)."
        )
        body = (
            f'<h1>Judges</h1><p class="lede">Spent today: {budget.spent_today:,} tokens · '
            f'{escape(left)}.</p><p class="muted">{escape(costs)}</p>'
            + _table(
                ("judge", "state", "trusted", "tokens today", "last 7 days", "cost, 7 days"),
                rows,
                "No judge has scored anything yet.",
            )
        )
        return page(request, "Judges", body, here="/judges")

    return [
        Route("/sentinels", sentinels, methods=["GET"]),
        Route("/judges", judges, methods=["GET"]),
    ]
