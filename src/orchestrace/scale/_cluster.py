"""Connecting to Ray and running pure tasks over shards, in order, with retries.

Ray is imported only here and only when a cluster is asked for (``orchestrace[ray]``).
:func:`connect` joins an existing cluster (``address``, checked with a short TCP probe so that
a dead address fails in seconds, not minutes), reuses one that this process already started
(``ray.is_initialized()`` — the tests start their own), or starts a local one on loopback.

:meth:`Cluster.map` runs ``fn(item)`` for every item as Ray tasks, at most ``workers`` at a
time, and returns the results **in item order**. A task whose worker process dies is retried
by Ray (``max_retries``); because every task is a pure function of its item, a retried task
returns the same bytes, and since results are placed by index nothing is lost or duplicated.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from ..errors import ConfigError, require

__all__ = ["RAY_START_S", "RAY_TASK_S", "Cluster", "break_even_s", "check_request", "connect", "ray_running",
           "should_distribute"]

T = TypeVar("T")
R = TypeVar("R")

#: Measured by ``benchmarks/scale.py`` on the reference 2-core machine under load (six runs:
#: 9.6–17.8 s and 1.8–2.2 ms): starting a local Ray runtime (``ray.init``), and the
#: round trip of one empty task once it runs. An idle machine starts Ray faster; the rule then
#: errs towards one process, which is the safe side.
RAY_START_S = 12.0
RAY_TASK_S = 0.002


def break_even_s(workers: int, *, started: bool, tasks: int | None = None) -> float:
    """Single-process work (seconds) above which ``workers`` Ray workers finish sooner.

    One process takes W; ``workers`` take W / workers + O, O the fixed cost (starting Ray when
    it is not running, plus the per-task round trips). Ray wins iff W > O · n / (n − 1);
    with one worker it never does (returns ``inf``).

    >>> break_even_s(1, started=True)
    inf
    >>> round(break_even_s(2, started=True, tasks=8), 3)
    0.032
    >>> round(break_even_s(2, started=False, tasks=8), 1)
    24.0
    """
    if workers < 2:
        return float("inf")
    n_tasks = tasks if tasks is not None else 4 * workers
    overhead = (0.0 if started else RAY_START_S) + RAY_TASK_S * n_tasks
    return overhead * workers / (workers - 1)


def should_distribute(work_s: float, workers: int, *, started: bool, min_work_s: float | None = None,
                      tasks: int | None = None) -> bool:
    """Whether ``work_s`` seconds of single-process work should go to Ray.

    ``min_work_s`` overrides the computed break-even (0 forces Ray, as the tests do).

    >>> should_distribute(0.01, 2, started=False), should_distribute(60.0, 2, started=False)
    (False, True)
    >>> should_distribute(0.0, 1, started=True, min_work_s=0)
    True
    """
    limit = break_even_s(workers, started=started, tasks=tasks) if min_work_s is None else min_work_s
    return work_s >= limit


def ray_decision(work_s: float, workers: int, *, address_given: bool = False, min_work_s: float | None = None,
                 tasks: int | None = None) -> tuple[bool, str]:
    """The one Ray break-even rule of every ``--ray`` command: ``(use Ray?, why not, in words)``.

    Ray counts as started when this process is connected or an address was given.

    >>> ray_decision(60.0, 2)
    (True, '')
    >>> ray_decision(0.01, 2, tasks=8)[1][:56]
    '--ray: the remaining work is about 0.01 s in one process'
    """
    started = ray_running() or address_given
    limit = break_even_s(workers, started=started, tasks=tasks) if min_work_s is None else min_work_s
    if work_s >= limit:
        return True, ""
    return False, (f"--ray: the remaining work is about {work_s:.2g} s in one process, below the break-even of "
                   f"{limit:.2g} s for {workers} workers; running in one process (--ray-min-work 0 forces Ray)")


def ray_running() -> bool:
    """True when this process is already connected to a Ray cluster (without importing Ray otherwise)."""
    import sys

    ray = sys.modules.get("ray")
    return bool(ray is not None and ray.is_initialized())


def _probe(address: str, timeout_s: float) -> None:
    """Fail fast when nothing listens at ``address`` (``host:port``, ``ray://host:port``)."""
    if address == "auto":
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"--ray-address {address!r}: expected host:port (e.g. 10.0.0.5:6379) or "
                          "ray://host:10001")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            pass
    except OSError as exc:
        raise ConfigError(f"--ray-address {address!r}: no Ray cluster answers there within {timeout_s:g} s "
                          f"({exc.strerror or exc}); start one with `ray start --head` or check the address") from None


class Cluster:
    """A Ray connection and the number of workers to use on it; a context manager that shuts
    down only a runtime it started itself."""

    def __init__(self, ray: Any, workers: int, *, owns: bool) -> None:
        self.ray, self.workers, self.owns = ray, workers, owns
        self._remote: dict[Callable[..., Any], Any] = {}

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()

    def shutdown(self) -> None:
        """Disconnect, if this object started the runtime."""
        if self.owns and self.ray.is_initialized():
            self.ray.shutdown()
        self.owns = False

    def remote(self, fn: Callable[..., Any], *, retries: int = 3) -> Any:
        """``fn`` as a Ray remote function (one CPU, ``retries`` retries when its worker dies)."""
        if fn not in self._remote:
            self._remote[fn] = self.ray.remote(num_cpus=1, max_retries=retries)(fn)
        return self._remote[fn]

    def imap(self, fn: Callable[..., R], items: Sequence[Any], *, retries: int = 3) -> Iterator[R]:
        """Yield ``fn(item)`` for every item, in item order, with at most ``workers`` tasks in flight."""
        ray = self.ray
        task = self.remote(fn, retries=retries)
        pending: dict[Any, int] = {}
        done: dict[int, Any] = {}
        nxt, emit = 0, 0
        while emit < len(items):
            while nxt < len(items) and len(pending) < self.workers:
                pending[task.remote(items[nxt])] = nxt
                nxt += 1
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                done[pending.pop(ref)] = ref
            while emit in done:
                yield ray.get(done.pop(emit))
                emit += 1

    def map(self, fn: Callable[..., R], items: Sequence[Any], *, retries: int = 3) -> list[R]:
        """``[fn(item) for item in items]`` on the cluster (see :meth:`imap`)."""
        return list(self.imap(fn, items, retries=retries))


def check_request(workers: int | None, address: str | None, *, timeout_s: float = 5.0) -> None:
    """Refuse a request that cannot work before any work starts: Ray missing (with the install
    command), ``workers`` < 1 or above this machine's CPUs (local runtime), or an ``address``
    where nothing answers within ``timeout_s``. Raises ConfigError / MissingExtraError.

    >>> check_request(0, None)
    Traceback (most recent call last):
    ...
    orchestrace.errors.ConfigError: --ray 0: the number of workers must be ≥ 1
    """
    if workers is not None and workers < 1:
        raise ConfigError(f"--ray {workers}: the number of workers must be ≥ 1")
    require("ray", extra="ray")
    if address is not None:
        _probe(address, timeout_s)
    elif workers is not None and ray_running():
        import ray

        have = int(ray.cluster_resources().get("CPU", 0))
        if workers > have:
            raise ConfigError(f"--ray {workers}: the Ray cluster has {have} CPU(s); use --ray {max(1, have)} or fewer")
    elif workers is not None:
        cpus = os.cpu_count() or 1
        if workers > cpus:
            raise ConfigError(f"--ray {workers}: this machine has {cpus} CPU(s); use --ray {cpus} or fewer, or "
                              "--ray-address for a cluster with more")


def connect(workers: int | None = None, address: str | None = None, *, timeout_s: float = 5.0) -> Cluster:
    """Connect to Ray: an existing cluster at ``address``, the runtime this process already
    runs, or a new local one with ``workers`` CPUs (loopback only, no dashboard).

    ``workers`` (default: every CPU of the cluster) must not exceed the cluster's CPUs: asking
    for more raises :class:`~orchestrace.errors.ConfigError` (more processes than cores only
    slows a CPU-bound job down). Ray missing → :class:`~orchestrace.errors.MissingExtraError`
    with the install command.
    """
    check_request(workers, address, timeout_s=timeout_s)
    # Ray's C++ client prints a warning a second while it retries an address that answers but is
    # not a Ray cluster; our one-line error says it instead (GLOG_minloglevel=0 restores them).
    os.environ.setdefault("GLOG_minloglevel", "2")
    ray = require("ray", extra="ray")
    owns = False
    if not ray.is_initialized():
        cpus = os.cpu_count() or 1
        kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        if address is not None:
            kw["address"] = address
        else:
            kw.update(address="local", num_cpus=workers or cpus)  # a new runtime, never a stray one
        try:
            ray.init(**kw)
        except (ConnectionError, TimeoutError, RuntimeError) as exc:
            raise ConfigError(f"cannot connect to Ray{' at ' + address if address else ''}: {exc}") from None
        owns = True
    have = int(ray.cluster_resources().get("CPU", 0))
    n = workers if workers is not None else max(1, have)
    if n > have:
        if owns:
            ray.shutdown()
        raise ConfigError(f"--ray {n}: the Ray cluster has {have} CPU(s); use --ray {max(1, have)} or fewer")
    return Cluster(ray, n, owns=owns)
