"""A scripted, loopback-only fake of an OpenAI-compatible chat-completions endpoint, for tests and benchmarks.

The one fake the test suite and the benchmarks share (they must not import each other): it binds
``127.0.0.1`` on a free port, in a daemon thread, with the standard library only. ``script(i)`` gives
the action for request ``i``:

``ok``         a well-formed completion whose content is ``text`` (or ``text(request_body)``) — or,
               with ``raw``, the bytes ``raw(path, headers)`` exactly as given (hostile replies: huge
               integers, ``NaN``, deep nesting, a key echoed into any field; :func:`completion_bytes`
               builds the usual shape with any raw numbers);
``429``, ``500``  an error status (``429`` with ``Retry-After: 0``);
``401``        echoes the Authorization header back in the error, as some hosted APIs do;
``malformed``  truncated JSON; ``empty`` an empty content;
``drop``       closes the connection without answering; ``hang`` never answers.

Every request's body, headers, path and action are recorded (``requests``, ``headers``, ``paths``,
``actions``).

>>> import json, urllib.request
>>> with FakeEndpoint(scripted("500", then="ok"), text="The answer is 4.") as srv:
...     def post():
...         req = urllib.request.Request(srv.base_url + "/chat/completions", data=b'{"model": "m"}',
...                                      headers={"content-type": "application/json"})
...         try:
...             return json.load(urllib.request.urlopen(req, timeout=5))["choices"][0]["message"]["content"]
...         except urllib.error.HTTPError as e:
...             return e.code
...     post(), post(), srv.actions, srv.paths[0]
(500, 'The answer is 4.', ['500', 'ok'], '/v1/chat/completions')
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Callable, Sequence
from types import TracebackType

__all__ = ["FAKE_USAGE", "FakeEndpoint", "completion_bytes", "free_port", "scripted"]

#: The usage an ``ok`` reply reports: (prompt tokens, completion tokens; 0 for an empty content).
FAKE_USAGE = (11, 5)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scripted(*actions: str, then: str = "ok") -> Callable[[int], str]:
    """A script that plays ``actions`` in order, then ``then`` forever.

    >>> s = scripted("429", "drop"); [s(i) for i in range(4)]
    ['429', 'drop', 'ok', 'ok']
    """
    seq: Sequence[str] = actions
    return lambda i: seq[i] if i < len(seq) else then


def completion_bytes(content: str = "The answer is 2.", *, logprob: str = "-0.5", finish: str = '"stop"',
                     model: str = '"m"', prompt_tokens: str = "1", completion_tokens: str = "1") -> bytes:
    """A chat completion with one token's log-probs, its numbers and JSON values written **as given** (raw text:
    ``"NaN"``, ``"-1e999"``, a 400-digit integer), so that a reply can be anything a server might send.

    >>> json.loads(completion_bytes(logprob="-0.25"))["choices"][0]["logprobs"]["content"][0]["logprob"]
    -0.25
    >>> completion_bytes(logprob="NaN").count(b"NaN")
    2
    """
    lp = f'{{"logprob": {logprob}, "top_logprobs": [{{"logprob": {logprob}}}, {{"logprob": -1.0}}]}}'
    return (f'{{"model": {model}, "choices": [{{"message": {{"content": {json.dumps(content)}}}, '
            f'"finish_reason": {finish}, "logprobs": {{"content": [{lp}]}}}}], '
            f'"usage": {{"prompt_tokens": {prompt_tokens}, "completion_tokens": {completion_tokens}}}}}').encode()


class FakeEndpoint:
    """A scripted chat-completions endpoint on 127.0.0.1 (module docstring); :meth:`start` / :meth:`stop`, or
    ``with``. ``base_url`` ends in ``/v1``."""

    def __init__(self, script: Callable[[int], str] = lambda i: "ok", *,
                 text: str | Callable[[dict], str] = "The answer is 42.",
                 raw: Callable[[str, dict[str, str]], bytes] | None = None) -> None:
        self.script, self.text, self.raw = script, text, raw
        self.requests: list[dict] = []
        self.actions: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.base_events.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._hung: list[asyncio.StreamWriter] = []

    def start(self) -> FakeEndpoint:
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(asyncio.start_server(self._handle, "127.0.0.1", 0), self._loop)
        self._server = fut.result(5)
        self.port = self._server.sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        return self

    def stop(self) -> None:
        async def _close() -> None:
            assert self._server is not None
            self._server.close()
            for w in self._hung:
                w.close()
        asyncio.run_coroutine_threadsafe(_close(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def __enter__(self) -> FakeEndpoint:
        return self.start()

    def __exit__(self, typ: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                i = len(self.requests)
                self.requests.append(json.loads(body) if body else {})
                self.headers.append(headers)
                self.paths.append(lines[0].split(" ")[1] if " " in lines[0] else "")
                action = self.script(i)
                self.actions.append(action)
                if action == "drop":
                    writer.transport.abort()
                    return
                if action == "hang":
                    self._hung.append(writer)
                    await asyncio.sleep(3600)
                    return
                status, payload, extra = self._respond(action, self.requests[-1])
                head_out = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n{extra}\r\n"
                writer.write(head_out.encode() + payload)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    def _respond(self, action: str, req: dict) -> tuple[str, bytes, str]:
        if action == "429":
            return "429 Too Many Requests", b'{"error": {"message": "slow down"}}', "Retry-After: 0\r\n"
        if action == "500":
            return "500 Internal Server Error", b'{"error": {"message": "boom"}}', ""
        if action == "401":
            # Like some hosted APIs, echo the key back in the error (it must be scrubbed).
            auth = self.headers[-1].get("authorization", "")
            return "401 Unauthorized", json.dumps({"error": {"message": f"Incorrect API key provided: {auth}"}}).encode(), ""
        if action == "malformed":
            return "200 OK", b'{"choices": [{"message": {"content": "4', ""
        if self.raw is not None and action == "ok":
            return "200 OK", self.raw(self.paths[-1], self.headers[-1]), ""
        text = "" if action == "empty" else self.text(req) if callable(self.text) else self.text
        body = {
            "id": "x", "object": "chat.completion", "model": req.get("model", "fake"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": FAKE_USAGE[0], "completion_tokens": FAKE_USAGE[1] if text else 0,
                      "total_tokens": FAKE_USAGE[0] + (FAKE_USAGE[1] if text else 0)},
        }
        return "200 OK", json.dumps(body).encode(), ""
