"""Reading a chat-completion body: the reply's text, finish reason, usage and token log-probs, or why not.

What :class:`~orchestrace.llm.client.ChatClient` gets back from an OpenAI-compatible server is
untrusted JSON. :func:`_parse_completion` turns it into a :class:`_Reply` or a
:class:`_Failure` (cause ``malformed_json``, with the JSON path that was wrong) — never an
exception; log-probs are kept only when finite and ≤ 0, token counts only when plausible.

>>> _parse_completion({"choices": [{"message": {"content": "7"}, "finish_reason": "stop"}],
...                    "usage": {"prompt_tokens": 3, "completion_tokens": 1}}).usage
(3, 1)
>>> _parse_completion({"choices": []}).detail
'expected $.choices[0] to be an object'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class _Reply:
    text: str
    finish_reason: str | None
    usage: tuple[int, int] | None
    model: str | None
    raw_usage: Mapping[str, Any]
    mean_logprob: float | None = None
    token_logprobs: tuple[float, ...] = ()
    top_logprobs: tuple[tuple[float, ...], ...] = ()


@dataclass(frozen=True)
class _Failure:
    cause: str
    detail: str
    retry_after: float | None = None
    usage: tuple[int, int] | None = None


def _parse_completion(data: Any) -> _Reply | _Failure:
    """Pick text, finish reason and usage out of a decoded chat-completion body."""
    if not isinstance(data, dict):
        return _Failure("malformed_json", f"expected a JSON object, got {type(data).__name__}")
    usage = _usage(data.get("usage"))
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return _Failure("malformed_json", "expected $.choices[0] to be an object", usage=usage)
    msg = choices[0].get("message")
    text = msg.get("content") if isinstance(msg, dict) else choices[0].get("text")
    if text is None:
        text = ""
    if not isinstance(text, str):
        return _Failure("malformed_json", "expected $.choices[0].message.content to be a string", usage=usage)
    finish = choices[0].get("finish_reason")
    raw_u = data.get("usage")
    raw: dict[str, Any] = raw_u if isinstance(raw_u, dict) else {}
    model = data.get("model") if isinstance(data.get("model"), str) else None
    toks, tops = _token_logprobs(choices[0])
    return _Reply(text, finish if isinstance(finish, str) else None, usage, model, raw, _mean_logprob(choices[0]),
                  toks, tops)


def _token_logprobs(choice: dict[str, Any]) -> tuple[tuple[float, ...], tuple[tuple[float, ...], ...]]:
    """Per token of ``choice.logprobs.content``: its log-prob and its ``top_logprobs`` (finite, ≤ 0 only).

    >>> _token_logprobs({"logprobs": {"content": [{"logprob": -0.5, "top_logprobs": [{"logprob": -0.5},
    ...     {"logprob": -1.5}]}, {"logprob": "x"}]}})
    ((-0.5,), ((-0.5, -1.5),))
    """
    lp = choice.get("logprobs")
    content = lp.get("content") if isinstance(lp, dict) else None
    if not isinstance(content, list):
        return (), ()

    def ok(v: Any) -> bool:  # compared before any float(): a 400-digit integer is out of range, not an error
        # ≥ -1e6: the confidence built from them (−mean of a token's top log-probs) stays in what readers accept
        return isinstance(v, (int, float)) and not isinstance(v, bool) and -1e6 <= v <= 0

    toks: list[float] = []
    tops: list[tuple[float, ...]] = []
    for t in content[:4096]:
        if not isinstance(t, dict) or not ok(t.get("logprob")):
            continue
        toks.append(float(t["logprob"]))
        top = t.get("top_logprobs")
        tops.append(tuple(float(x["logprob"]) for x in top[:64] if isinstance(x, dict) and ok(x.get("logprob")))
                    if isinstance(top, list) else ())
    return tuple(toks), tuple(tops) if any(tops) else ()


def _mean_logprob(choice: dict[str, Any]) -> float | None:
    """Mean of ``choice.logprobs.content[*].logprob`` (finite values only), or None."""
    lp = choice.get("logprobs")
    content = lp.get("content") if isinstance(lp, dict) else None
    if not isinstance(content, list):
        return None
    vals = [  # a log-prob is <= 0; finite values beyond the loader's bound are corrupt and not averaged
        float(t["logprob"]) for t in content
        if isinstance(t, dict) and isinstance(t.get("logprob"), (int, float)) and not isinstance(t["logprob"], bool)
        and -1000.0 <= t["logprob"] <= 0.0  # NaN and ±inf fail the comparison; a huge int is never float()-ed
    ]
    return sum(vals) / len(vals) if vals else None


#: Token counts beyond this are corrupt (not reported), never stored: the corpus reader refuses them too.
_MAX_USAGE = 1 << 31


def _usage(u: Any) -> tuple[int, int] | None:
    if not isinstance(u, dict):
        return None
    p, c = u.get("prompt_tokens"), u.get("completion_tokens")
    if isinstance(p, int) and isinstance(c, int) and 0 <= p < _MAX_USAGE and 0 <= c < _MAX_USAGE:
        return (p, c)
    return None
