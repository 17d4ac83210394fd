"""``GET /docs``: the API reference, rendered on the server from the app's own OpenAPI spec
(paths, parameters, responses, schemas) as one HTML page with no script and no asset from
anywhere (FastAPI's own /docs loads its scripts from a CDN)."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping
from html import escape
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

METHODS = ("get", "post", "put", "patch", "delete")

STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto;
  padding: 0 1rem; color: #1f2328; }
code, .type { font-family: ui-monospace, monospace; font-size: 13px; }
h2 { border-bottom: 1px solid #d0d7de; padding-bottom: .3rem; margin-top: 2.5rem; }
h3 { margin-top: 2rem; }
.method { display: inline-block; min-width: 3.5rem; font-weight: 600; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
th, td { text-align: left; vertical-align: top; border-top: 1px solid #d0d7de;
  padding: .3rem .5rem; }
th { background: #f6f8fa; }
p.lead { color: #59636e; }
"""

# The page allows its own style block, by hash, and nothing else.
_STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
CSP = (
    f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)


def _anchor(name: str) -> str:
    return "schema-" + _slug(name)


def type_of(schema: Mapping[str, Any]) -> str:
    """A schema as short HTML: ``array of <a>TraceItem</a>``, ``string (date-time) or null``."""
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return f'<a href="#{_anchor(name)}">{escape(name)}</a>'
    for combiner in ("anyOf", "oneOf", "allOf"):
        if combiner in schema:
            glue = " and " if combiner == "allOf" else " or "
            return glue.join(type_of(s) for s in schema[combiner])
    if "const" in schema:
        return f"<code>{escape(repr(schema['const']))}</code>"
    if "enum" in schema:
        return "one of " + ", ".join(f"<code>{escape(str(v))}</code>" for v in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(type_of({**schema, "type": k}) for k in kind)
    if kind == "array":
        return "array of " + type_of(schema.get("items", {}))
    if kind == "object" and isinstance(schema.get("additionalProperties"), Mapping):
        return "map of " + type_of(schema["additionalProperties"])
    text = escape(str(kind or "any"))
    if "format" in schema:
        text += f" ({escape(str(schema['format']))})"
    limits = [
        f"{sign} {schema[key]}"
        for key, sign in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"))
        if key in schema
    ]
    limits += [f"< {schema['exclusiveMaximum']}"] if "exclusiveMaximum" in schema else []
    if "maxLength" in schema:
        limits.append(f"at most {schema['maxLength']} characters")
    return text + (f", {escape(', '.join(limits))}" if limits else "")


def _text(text: str) -> str:
    """Escaped text, with its `code` spans (the spec's descriptions use them) as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text))


def _paragraphs(text: str) -> str:
    return "".join(f"<p>{_text(p.strip())}</p>" for p in text.split("\n\n") if p.strip())


def _operation(path: str, method: str, op: Mapping[str, Any]) -> str:
    anchor = f"op-{method}-{_slug(path)}"
    parts = [
        f'<h3 id="{anchor}"><span class="method">{method.upper()}</span>'
        f"<code>{escape(path)}</code></h3>",
        f'<p class="lead">{escape(op.get("summary", ""))}</p>',
        _paragraphs(op.get("description", "")),
    ]
    parameters = op.get("parameters", [])
    if parameters:
        rows = "".join(
            "<tr>"
            f"<td><code>{escape(p['name'])}</code></td><td>{escape(p.get('in', ''))}</td>"
            f'<td class="type">{type_of(p.get("schema", {}))}</td>'
            f"<td>{'yes' if p.get('required') else 'no'}</td>"
            f"<td>{_default(p.get('schema', {}))}{_text(_description(p))}</td>"
            "</tr>"
            for p in parameters
        )
        parts.append(
            "<table><tr><th>parameter</th><th>in</th><th>type</th><th>required</th>"
            f"<th>description</th></tr>{rows}</table>"
        )
    rows = ""
    for status, response in op.get("responses", {}).items():
        media: Mapping[str, Any] = response.get("content", {})
        content: Mapping[str, Any] = media.get("application/json") or next(iter(media.values()), {})
        schema = content.get("schema")
        shown = type_of(schema) if schema else ""
        rows += (
            f"<tr><td><code>{escape(str(status))}</code></td>"
            f"<td>{_text(response.get('description', ''))}</td>"
            f'<td class="type">{shown}</td></tr>'
        )
    parts.append(f"<table><tr><th>status</th><th>meaning</th><th>body</th></tr>{rows}</table>")
    return "".join(parts)


def _description(item: Mapping[str, Any]) -> str:
    return str(item.get("description") or item.get("schema", {}).get("description") or "")


def _default(schema: Mapping[str, Any]) -> str:
    if "default" not in schema or schema["default"] is None:
        return ""
    return f"default <code>{escape(str(schema['default']))}</code>. "


def _schema(name: str, schema: Mapping[str, Any]) -> str:
    parts = [f'<h3 id="{_anchor(name)}"><code>{escape(name)}</code></h3>']
    parts.append(_paragraphs(schema.get("description", "")))
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    if properties:
        rows = "".join(
            f"<tr><td><code>{escape(field)}</code></td>"
            f'<td class="type">{type_of(spec)}</td>'
            f"<td>{'yes' if field in required else 'no'}</td>"
            f"<td>{_default(spec)}{_text(str(spec.get('description', '')))}</td></tr>"
            for field, spec in properties.items()
        )
        parts.append(
            "<table><tr><th>field</th><th>type</th><th>required</th><th>description</th></tr>"
            f"{rows}</table>"
        )
    elif schema:
        parts.append(f'<p class="type">{type_of(schema)}</p>')
    return "".join(parts)


def render(spec: Mapping[str, Any]) -> str:
    """The whole reference page for an OpenAPI document; every value in it is escaped."""
    info = spec.get("info", {})
    title = f"{info.get('title', 'API')} {info.get('version', '')}".strip()
    operations = [
        (path, method, item[method])
        for path, item in spec.get("paths", {}).items()
        for method in METHODS
        if method in item
    ]
    contents = "".join(
        f'<li><a href="#op-{m}-{_slug(p)}"><span class="method">{m.upper()}</span>'
        f"<code>{escape(p)}</code></a> {escape(op.get('summary', ''))}</li>"
        for p, m, op in operations
    )
    schemas = spec.get("components", {}).get("schemas", {})
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)} API reference</title><style>{STYLE}</style></head><body>"
        f"<h1>{escape(title)} API reference</h1>"
        f"{_paragraphs(info.get('description', ''))}"
        '<p>The same document as JSON: <a href="/openapi.json">/openapi.json</a>.</p>'
        f"<h2>Operations</h2><ul>{contents}</ul>"
        + "".join(_operation(p, m, op) for p, m, op in operations)
        + "<h2>Schemas</h2>"
        + "".join(_schema(name, schemas[name]) for name in sorted(schemas))
        + "</body></html>"
    )


def route() -> Route:
    async def docs(request: Request) -> Response:
        spec = request.app.openapi()
        return HTMLResponse(render(spec), headers={"Content-Security-Policy": CSP})

    return Route("/docs", docs, methods=["GET"])
