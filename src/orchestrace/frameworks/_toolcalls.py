"""Forced tool calls for a llama.cpp server whose model has no tool-call template.

SmolLM2-135M-Instruct's chat template knows no tools, and the llama.cpp server then
answers ``tool_choice="required"`` with plain text. :class:`ToolCallTransport` is an
``httpx`` transport (sync and async) put under the framework's OpenAI client; on every
``POST …/chat/completions`` it

1. flattens the history for a tool-less template: an assistant turn that called tools
   becomes text (``called add({"a": 1})``), a ``tool`` message becomes a user message
   ``result of add: 3``, and a history that ends with an assistant turn gets a user
   ``Go on.`` (llama.cpp would *continue* that turn as a prefill, OpenAI answers it);
2. when the request forces a tool (``tool_choice`` ``"required"`` or naming a function),
   replaces ``tools`` by a ``response_format`` JSON schema ``{"name", "arguments"}``
   (llama.cpp turns it into a grammar), so the *model* writes the call, constrained to the
   tool's parameter schema;
3. turns that JSON answer back into an OpenAI ``tool_calls`` message
   (``finish_reason: "tool_calls"``), keeping the server's ``usage``.

With ``tool_choice`` ``"auto"`` / ``"none"`` the tools are dropped and the model answers
in text. Streaming requests pass through untouched. Nothing here is needed for a model
whose server does tool calls itself: pass no transport then.

>>> body = {"model": "m", "messages": [{"role": "user", "content": "2+3?"}], "tool_choice": "required",
...         "tools": [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]}
>>> out, forced = rewrite_request(body)
>>> forced, "tools" in out, out["response_format"]["json_schema"]["schema"]["properties"]["name"]
(True, False, {'const': 'add'})
>>> to_tool_calls({"choices": [{"message": {"role": "assistant", "content": '{"name": "add", "arguments": {"a": 1}}'},
...                              "finish_reason": "stop"}]}, 0)["choices"][0]["message"]["tool_calls"][0]["function"]
{'name': 'add', 'arguments': '{"a": 1}'}
"""

from __future__ import annotations

import itertools
import json
from typing import Any

__all__ = ["ToolCallTransport", "rewrite_request", "to_tool_calls"]

def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # typed content parts
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def _flatten(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for m in messages:
        role = m.get("role", "user")
        if role == "developer":
            role = "system"
        if role == "assistant" and m.get("tool_calls"):
            parts = [_text(m.get("content"))] if m.get("content") else []
            for tc in m["tool_calls"]:
                fn = tc.get("function", {})
                names[str(tc.get("id"))] = str(fn.get("name"))
                parts.append(f"called {fn.get('name')}({fn.get('arguments', '')})")
            out.append({"role": "assistant", "content": "\n".join(parts)})
        elif role in ("tool", "function"):
            name = m.get("name") or names.get(str(m.get("tool_call_id")), "tool")
            out.append({"role": "user", "content": f"result of {name}: {_text(m.get('content'))}"})
        else:
            out.append({"role": role, "content": _text(m.get("content"))})
    if out and out[-1]["role"] == "assistant":  # llama.cpp would continue it (prefill); OpenAI answers it
        out.append({"role": "user", "content": "Go on."})
    return out


def rewrite_request(body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The request to send, and whether it forces a tool call (see the module docstring)."""
    body = dict(body)
    body["messages"] = _flatten(list(body.get("messages") or []))
    tools = [t["function"] for t in body.pop("tools", None) or [] if isinstance(t, dict) and "function" in t]
    choice = body.pop("tool_choice", None)
    body.pop("parallel_tool_calls", None)
    if isinstance(choice, dict):
        want = (choice.get("function") or {}).get("name")
        tools = [t for t in tools if t.get("name") == want]
    elif choice != "required":
        tools = []
    if not tools or body.get("stream"):
        return body, False
    options = [{"type": "object", "required": ["name", "arguments"],
                "properties": {"name": {"const": t["name"]},
                               "arguments": t.get("parameters") or {"type": "object"}}} for t in tools]
    schema = options[0] if len(options) == 1 else {"anyOf": options}
    listing = "\n".join(f"- {t['name']}: {t.get('description') or ''}" for t in tools)
    body["messages"] = [{"role": "system", "content": f"Call one of these tools, as JSON {{name, arguments}}:\n{listing}"},
                        *body["messages"]]
    body["response_format"] = {"type": "json_schema", "json_schema": {"name": "tool_call", "schema": schema}}
    return body, True


def to_tool_calls(doc: dict[str, Any], n: int) -> dict[str, Any]:
    """Turn a forced answer (JSON ``{name, arguments}`` text) into an OpenAI ``tool_calls`` message."""
    for ch in doc.get("choices") or []:
        msg = ch.get("message") or {}
        try:
            call = json.loads(msg.get("content") or "")
            name, args = call["name"], call["arguments"]
        except (ValueError, TypeError, KeyError):
            continue  # cut by max_tokens: leave the text as it is
        msg["content"] = None
        msg["tool_calls"] = [{"id": f"call_{n}", "type": "function",
                              "function": {"name": str(name), "arguments": json.dumps(args)}}]
        ch["message"] = msg
        ch["finish_reason"] = "tool_calls"
    return doc


def _is_chat(request: Any) -> bool:
    return bool(request.method == "POST" and request.url.path.endswith("/chat/completions"))


class ToolCallTransport:
    """An ``httpx`` transport (sync and async) that forces tool calls on a tool-less llama.cpp model.

    Its only state besides the connection pools is its own call-id counter (``call_1``,
    ``call_2`` … per transport, not per process), so two captures never share ids by accident.

    >>> import httpx
    >>> with httpx.Client(transport=ToolCallTransport()) as client:
    ...     client.is_closed
    False
    """

    def __init__(self) -> None:
        import httpx

        self._sync = httpx.HTTPTransport()
        self._async = httpx.AsyncHTTPTransport()
        self._ids = itertools.count(1)  # ids of the tool calls this transport makes up

    def _prepare(self, request: Any) -> tuple[Any, bool]:
        import httpx

        body, forced = rewrite_request(json.loads(request.content or b"{}"))
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("content-length", "content-encoding")}
        return httpx.Request(request.method, request.url, headers=headers, content=json.dumps(body).encode(),
                             extensions=request.extensions), forced

    def _finish(self, response: Any, content: bytes, forced: bool) -> Any:
        import httpx

        if forced and response.status_code == 200:
            content = json.dumps(to_tool_calls(json.loads(content), next(self._ids))).encode()
        headers = {k: v for k, v in response.headers.items()
                   if k.lower() not in ("content-length", "content-encoding", "transfer-encoding")}
        return httpx.Response(response.status_code, headers=headers, content=content)

    def handle_request(self, request: Any) -> Any:
        """Sync path (``httpx.Client``)."""
        if not _is_chat(request):
            return self._sync.handle_request(request)
        req, forced = self._prepare(request)
        if json.loads(req.content).get("stream"):
            return self._sync.handle_request(req)
        resp = self._sync.handle_request(req)
        content = resp.read()
        resp.close()
        return self._finish(resp, content, forced)

    async def handle_async_request(self, request: Any) -> Any:
        """Async path (``httpx.AsyncClient``)."""
        if not _is_chat(request):
            return await self._async.handle_async_request(request)
        await request.aread()
        req, forced = self._prepare(request)
        if json.loads(req.content).get("stream"):
            return await self._async.handle_async_request(req)
        resp = await self._async.handle_async_request(req)
        content = await resp.aread()
        await resp.aclose()
        return self._finish(resp, content, forced)

    def close(self) -> None:
        """Close the sync pool."""
        self._sync.close()

    async def aclose(self) -> None:
        """Close the async pool."""
        await self._async.aclose()

    def __enter__(self) -> ToolCallTransport:  # httpx.Client enters and exits its transport
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> ToolCallTransport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
