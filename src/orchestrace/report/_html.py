"""Assemble one self-contained HTML file: inline CSS, inline JS, the JSON payload.

The page loads nothing: a Content-Security-Policy of ``default-src 'none'`` (scripts and
styles inline only) makes the browser refuse any request a future edit might add. The
assets are package data under ``orchestrace/data/report/``.

>>> html = render_html({"kind": "many", "meta": {"source": "x", "n_traces": 0}, "rows": []}, title="t")
>>> html.startswith("<!doctype html>"), "default-src 'none'" in html, "<script src" in html
(True, True, False)
"""

from __future__ import annotations

import html as _html
from functools import cache
from importlib import resources
from typing import Any

import msgspec

__all__ = ["render_html"]

#: JS files, concatenated in this order.
_JS = ("timeline.js", "views.js", "summary.js", "main.js")
_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; font-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'"
)


@cache
def _asset(name: str) -> str:
    return resources.files("orchestrace").joinpath("data").joinpath("report").joinpath(name).read_text(encoding="utf-8")


def _json_for_script(payload: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">`` (``<`` escaped)."""
    raw = msgspec.json.encode(payload)
    return raw.replace(b"<", b"\\u003c").decode("utf-8")


def render_html(payload: dict[str, Any], *, title: str) -> str:
    """The report page for a payload from :mod:`orchestrace.report._payload`."""
    from .. import __version__

    js = "\n".join(_asset(n).replace("</script", "<\\/script") for n in _JS)
    css = _asset("report.css")
    return (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_CSP}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<meta name=\"generator\" content=\"orchestrace {__version__}\">\n"
        f"<title>{_html.escape(title)}</title>\n<style>\n{css}</style>\n</head>\n<body>\n"
        "<div id=\"app\"></div>\n<div id=\"tip\"></div>\n"
        f"<footer>orchestrace {__version__} · self-contained report (no network access)</footer>\n"
        "<pre id=\"selfcheck\"></pre>\n"
        f"<script type=\"application/json\" id=\"payload\">{_json_for_script(payload)}</script>\n"
        f"<script>\n{js}\n</script>\n</body>\n</html>\n"
    )
