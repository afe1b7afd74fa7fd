"""Per-member prices charged by every valuation: token counts become **billed tokens**.

A team corpus whose manifest lists its members with prices (``config.members[i].price_in`` and
``price_out``, US dollars per million tokens; :mod:`orchestrace.llm.mixed_team`) is read with its
token arrays in billed tokens at the cheapest member's input price::

    billed prompt tokens     = prompt tokens     × price_in(member)  / price_in(cheapest)
    billed completion tokens = completion tokens × price_out(member) / price_in(cheapest)

so an attempt's billed tokens are its cost in dollars divided by one token at the cheapest input
price. Everything downstream that charges tokens (``token_scale``, the rule family, the fitted joint
policy, the oracle) then charges the prices, with no second code path. ``meta["billing"]`` says
that this was done, with the prices and the logged (unbilled) token totals. A corpus without prices
(every earlier one) is returned unchanged.

>>> import numpy as np
>>> from orchestrace.logged.team_synth import make_synthetic_team
>>> runs = make_synthetic_team(3, 1, seed=0)
>>> cfg = {"members": [{"name": m, "price_in": p, "price_out": 4 * p} for m, p in
...        zip(runs.members, (0.15, 0.15, 2.5, 0.15))]}
>>> billed = charge_prices(runs, cfg)
>>> int(billed.prompt_tokens[0, 0, 2]) == round(runs.prompt_tokens[0, 0, 2] * 2.5 / 0.15)
True
>>> charge_prices(runs, {"members": [{"name": m} for m in runs.members]}) is runs
True
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ..errors import ConfigError

LoggedRuns = Any  # offline._logged.LoggedRuns: its reader calls charge_prices, so no import back (no circle)

__all__ = ["billed_prices", "charge_prices", "member_prices"]

_MAX_RATIO = 1e4  # a price ratio beyond this is a typo (and would overflow int32 billed tokens)


def member_prices(cfg: dict[str, Any], members: tuple[str, ...], where: str = "manifest") -> dict[str, tuple[float, float]]:
    """``{member: (price_in, price_out)}`` from a manifest's ``config``; {} when no member has a price.

    A price on some members but not others, or one that is negative, not finite or not a number, is a
    located ConfigError (a corpus is never valued with a price silently missing).
    """
    listed = cfg.get("members") if isinstance(cfg, dict) else None
    if not isinstance(listed, list) or not any(isinstance(m, dict) and ("price_in" in m or "price_out" in m)
                                               for m in listed):
        return {}
    out: dict[str, tuple[float, float]] = {}
    for i, m in enumerate(listed):
        at = f"{where} $.config.members[{i}]"
        if not isinstance(m, dict) or not isinstance(m.get("name"), str):
            raise ConfigError(f"{at}: expected an object with a name and prices")
        vals = []
        for k in ("price_in", "price_out"):
            v = m.get(k)
            if v is None:
                raise ConfigError(f"{at}.{k}: missing; the other members are priced, so every member needs "
                                  "price_in and price_out (US dollars per million tokens)")
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise ConfigError(f"{at}.{k}: {v!r} is not a finite price >= 0 (US dollars per million tokens)")
            vals.append(float(v))
        out[m["name"]] = (vals[0], vals[1])
    if members and set(out) != set(members):
        raise ConfigError(f"{where} $.config.members: priced members {sorted(out)} differ from the corpus's "
                          f"{sorted(members)}")
    return out


def charge_prices(runs: LoggedRuns, cfg: dict[str, Any], where: str = "manifest") -> LoggedRuns:
    """``runs`` with its token arrays in billed tokens (module docstring); unchanged without prices."""
    prices = member_prices(cfg, runs.members, where)
    if not prices:
        return runs
    if not runs.members:
        raise ConfigError(f"{where}: prices are given per member, but the corpus has no member columns")
    pin = np.array([prices[m][0] for m in runs.members])
    pout = np.array([prices[m][1] for m in runs.members])
    ref = float(pin[pin > 0].min()) if (pin > 0).any() else float(pout[pout > 0].min()) if (pout > 0).any() else 0.0
    if ref == 0.0:
        raise ConfigError(f"{where} $.config.members: every price is 0; give the members their prices or none")
    if max(pin.max(), pout.max()) / ref > _MAX_RATIO:
        raise ConfigError(f"{where} $.config.members: prices differ by more than {_MAX_RATIO:g}x "
                          f"({pin.tolist()} in, {pout.tolist()} out); check the units (dollars per million tokens)")
    pt = np.rint(runs.prompt_tokens * (pin / ref)[None, None, :]).astype(np.int32)
    ct = np.rint(runs.completion_tokens * (pout / ref)[None, None, :]).astype(np.int32)
    meta = dict(runs.meta)
    meta["billing"] = {"unit": f"tokens at ${ref:g} per million (the cheapest input price)", "ref_price": ref,
                       "prices": {m: list(p) for m, p in prices.items()},
                       "logged_prompt_tokens": int(runs.prompt_tokens.sum()),
                       "logged_completion_tokens": int(runs.completion_tokens.sum())}
    return dataclasses.replace(runs, prompt_tokens=pt, completion_tokens=ct, meta=meta)


def billed_prices(meta: dict[str, Any]) -> dict[str, tuple[float, float]] | None:
    """``{member: (price_in, price_out)}`` a corpus was billed at (``meta["billing"]``), None when unpriced.

    >>> billed_prices({"billing": {"prices": {"a": [0.15, 0.6]}}}), billed_prices({})
    ({'a': (0.15, 0.6)}, None)
    """
    bill = meta.get("billing")
    prices = bill.get("prices") if isinstance(bill, dict) else None
    if not isinstance(prices, dict):
        return None
    return {str(m): (float(p[0]), float(p[1])) for m, p in prices.items()}
