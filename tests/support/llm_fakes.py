"""A tiny scripted OpenAI-compatible endpoint for fault-injection tests (127.0.0.1, free port).

Actions per request: ``ok``, ``429``, ``500``, ``401`` (echoes the Authorization header back,
like some hosted APIs do), ``malformed``, ``empty``, ``drop`` (close the connection without
answering), ``hang`` (never answer). Every request, its headers and its action are recorded.
``text`` is the reply of an ``ok`` request, or a function of the request body that gives it.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Callable, Sequence

FAKE_USAGE = (11, 5)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class FaultyServer:
    """A scripted chat-completions endpoint. ``script(i)`` gives the action for request ``i``."""

    def __init__(self, script: Callable[[int], str], *, text: str | Callable[[dict], str] = "The answer is 42.") -> None:
        self.script = script
        self.text = text
        self.requests: list[dict] = []
        self.actions: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.base_events.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._hung: list[asyncio.StreamWriter] = []

    def start(self) -> FaultyServer:
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
        text = "" if action == "empty" else self.text(req) if callable(self.text) else self.text
        body = {
            "id": "x", "object": "chat.completion", "model": req.get("model", "fake"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": FAKE_USAGE[0], "completion_tokens": FAKE_USAGE[1] if text else 0,
                      "total_tokens": FAKE_USAGE[0] + (FAKE_USAGE[1] if text else 0)},
        }
        return "200 OK", json.dumps(body).encode(), ""


def scripted(*actions: str, then: str = "ok") -> Callable[[int], str]:
    """A script that plays ``actions`` in order, then ``then`` forever."""
    seq: Sequence[str] = actions
    return lambda i: seq[i] if i < len(seq) else then


