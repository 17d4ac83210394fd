"""The report's stylesheet, inlined into the page: system fonts only, nothing to fetch."""

CSS = """
:root {
  --ink: #1f2933; --muted: #616e7c; --line: #e1e5ea; --page: #f5f7fa; --card: #fff;
  --firing: #c62828; --pending: #b45309; --resolved: #2e7d32; --ok: #52606d;
  --rate: #243b53; --base: #2f6fb0;
}
* { box-sizing: border-box; }
body {
  margin: 0; background: var(--page); color: var(--ink);
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
    "Liberation Sans", "DejaVu Sans", sans-serif;
}
main { max-width: 1120px; margin: 0 auto; padding: 28px 24px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 36px 0 6px; }
.card > h2:first-child { margin-top: 0; }
h3 { font-size: 16px; margin: 0 0 4px; display: flex; gap: 10px; align-items: center;
  flex-wrap: wrap; }
h4 { font-size: 14px; margin: 0 0 2px; }
h5 { font-size: 12px; margin: 14px 0 6px; text-transform: uppercase; letter-spacing: .04em;
  color: var(--muted); }
a { color: var(--base); }
code { font: 12px/1.4 ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace;
  background: #eef1f5; padding: 1px 4px; border-radius: 4px; overflow-wrap: anywhere; }
/* A trace id is read and copied whole: it never breaks inside. */
code.trace-id, a[href^="/traces/"] > code, a[href^="/review/"] > code {
  white-space: nowrap; overflow-wrap: normal; }
.muted, .meta, .lede { color: var(--muted); }
.meta { font-size: 12px; margin: 0 0 10px; }
.standing { font-weight: 600; margin: 0 0 10px; }
.standing.unproven, .standing.drifting, .standing.blocked { color: #b42318; }
.lede { margin: 0 0 18px; max-width: 760px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 16px 18px; margin: 14px 0; box-shadow: 0 1px 2px rgba(16, 24, 40, .04); }
.summary { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr));
  gap: 12px; margin: 18px 0 0; }
.summary .card { margin: 0; padding: 12px 14px; }
.summary .figure { font-size: 24px; font-weight: 650; display: block; }
.summary .label { color: var(--muted); font-size: 12px; }
.figure.firing { color: var(--firing); } .figure.pending { color: var(--pending); }
.figure.resolved { color: var(--resolved); }
.badge { display: inline-block; padding: 1px 9px; border-radius: 999px; font-size: 12px;
  font-weight: 600; color: #fff; background: var(--ok); }
.badge.firing { background: var(--firing); } .badge.pending { background: var(--pending); }
.badge.resolved { background: var(--resolved); }
.badge.explained { background: #6a5a9e; } .badge.folded { background: #9aa5b1; }
.alert-card { border-left: 5px solid var(--ok); }
.alert-card.firing { border-left-color: var(--firing); }
.alert-card.pending { border-left-color: var(--pending); }
.alert-card.resolved { border-left-color: var(--resolved); }
.legend { display: flex; flex-wrap: wrap; gap: 6px 18px; font-size: 12px; color: var(--muted);
  margin: 0 0 4px; padding: 0; list-style: none; }
.legend svg { vertical-align: middle; margin-right: 5px; }
.chart { width: 100%; height: auto; display: block; margin-top: 6px; }
.chart text { font-family: inherit; }
.chart .grid { stroke: #edf0f3; }
.chart .axis, .chart .tickmark { stroke: #9aa5b1; }
.chart .tick { font-size: 11px; fill: var(--muted); }
.chart .axis-title { font-size: 12px; fill: #3e4c59; }
.chart .band { fill: var(--base); opacity: .13; }
.chart .baseline { stroke: var(--base); stroke-width: 1.5; stroke-dasharray: 6 4; }
.chart .rate { fill: none; stroke: var(--rate); stroke-width: 2; stroke-linejoin: round; }
.chart .dot { fill: var(--rate); stroke: #fff; stroke-width: 1; }
.chart .dot.few { fill: #fff; stroke: var(--rate); stroke-width: 1.5; }
.chart .ci.few { opacity: .45; }
.chart .ci { stroke: #9fb3c8; stroke-width: 1.5; }
.chart .marker line { stroke-width: 2; }
.chart .marker text { font-size: 11px; font-weight: 650; paint-order: stroke;
  stroke: #fff; stroke-width: 3px; }
.marker.firing line { stroke: var(--firing); } .marker.firing text { fill: var(--firing); }
.marker.pending line { stroke: var(--pending); } .marker.pending text { fill: var(--pending); }
.marker.resolved line { stroke: var(--resolved); }
.marker.resolved text { fill: var(--resolved); }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 7px 8px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { font-size: 12px; color: var(--muted); font-weight: 600; }
td { font-variant-numeric: tabular-nums; }
.table-wrap { overflow-x: auto; padding: 6px 10px; }
.time, .val, .interval, .segment { white-space: nowrap; }
table.alerts .severity { display: block; font-size: 12px; color: var(--muted); }
table.alerts th, table.alerts td { padding: 7px 6px; }
.acked { font-size: 13px; color: var(--resolved); margin: 2px 0 6px; }
table .interval { display: block; font-size: 12px; color: var(--muted); }
table .time { display: inline-block; white-space: normal; min-width: 82px; }
.alert-link { text-decoration: none; color: var(--muted); font-size: 13px; font-weight: 500; }
.chart .gap { stroke: var(--rate); stroke-width: 1.5; stroke-dasharray: 3 4; opacity: .7; }
.example.ref { padding-top: 10px; }
.example.ref p { margin: 4px 0 0; }
.facts { display: grid; grid-template-columns: repeat(auto-fit, minmax(190px, 1fr));
  gap: 8px 18px; margin: 12px 0 4px; }
.facts div { min-width: 0; }
.facts dt { font-size: 12px; color: var(--muted); }
.facts dd { margin: 0; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.example { border-top: 1px solid var(--line); padding-top: 14px; margin-top: 16px; }
.qa { display: grid; grid-template-columns: 90px 1fr; gap: 6px 12px; margin: 8px 0; }
.qa dt { color: var(--muted); font-size: 12px; padding-top: 2px; }
.qa dd { margin: 0; overflow-wrap: anywhere; }
.claims, .chunks { margin: 0; padding-left: 22px; }
.claims li { margin: 3px 0; }
.chunks li { margin: 0 0 8px; }
.chunk-head { font-size: 12px; color: var(--muted); }
.chunk-text { margin: 2px 0 0; padding: 8px 10px; background: #f8fafc;
  border: 1px solid var(--line); border-radius: 6px; overflow-wrap: anywhere; }
.verdict { font-size: 11px; font-weight: 650; text-transform: uppercase; padding: 0 6px;
  border-radius: 4px; background: #e8f5e9; color: var(--resolved); }
.verdict.unsupported { background: #fff4d6; color: #8a5a00; }
.verdict.contradicted { background: #fde2e2; color: var(--firing); }
.flag { font-size: 11px; color: var(--muted); border: 1px solid var(--line); border-radius: 4px;
  padding: 0 5px; }
mark { border-radius: 3px; padding: 0 2px; color: inherit; }
mark.unsupported { background: #ffe08a; }
mark.contradicted { background: #ffb4b4; }
mark.evidence { background: #c9efd2; }
mark.against { background: #ffd9d9; }
.verdict.partial { background: #ffedd5; color: #9a3412; }
mark.partial { background: #fed7aa; }
mark.citation-wrong { text-decoration: underline wavy var(--firing); text-underline-offset: 3px; }
.cite-note, .citation, .cited-wrong, .missing { font-size: 11px; }
.cite-note, .cited-wrong, .citation.wrong, .citations .unresolved { color: var(--firing); }
.citation.correct { color: var(--resolved); }
.citation.unresolved { color: var(--pending); }
.flag.critical, .flag.policy { border-color: #f3b4b4; color: var(--firing); }
.missing { color: #9a3412; }
.citations { font-size: 12px; color: var(--muted); margin: 8px 0 0; }
.policy { margin: 0; padding-left: 22px; }
.chunks li:target .chunk-text { outline: 2px solid var(--firing); outline-offset: 1px; }
footer { margin-top: 40px; font-size: 12px; color: var(--muted); }
@media print { body { background: #fff; } .card { box-shadow: none; break-inside: avoid; } }
"""
