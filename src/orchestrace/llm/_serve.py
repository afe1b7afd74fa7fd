"""Child-process launcher for the local llama.cpp server (used by :mod:`orchestrace.llm.local`).

``python -m orchestrace.llm._serve --model PATH [--threads 1] [--ctx N] [--parallel K]``
loads the GGUF model into xllamacpp's in-process HTTP server on 127.0.0.1 (port 0 = a free
port chosen by the OS), prints one line ``LISTENING <url>`` on stdout, then serves until its
stdin closes (the parent exited or called stop) or it receives SIGTERM/SIGINT. Running the
server in its own process means a test can always kill it, and a crashed parent takes the
server down with it (stdin reaches EOF).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, start the server, block until told to stop."""
    ap = argparse.ArgumentParser(prog="python -m orchestrace.llm._serve")
    ap.add_argument("--model", required=True)
    ap.add_argument("--alias", default="")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ctx", type=int, default=4096)
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--http-threads", type=int, default=8)
    args = ap.parse_args(argv)

    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = args.model
    if args.alias:
        p.model_alias = {args.alias}
    p.hostnames = [args.host]
    p.port = args.port
    p.n_ctx = args.ctx
    p.n_parallel = args.parallel
    p.cpuparams.n_threads = args.threads
    p.cpuparams_batch.n_threads = args.threads
    p.n_threads_http = args.http_threads
    p.warmup = False
    server = xllamacpp.Server(p)
    print(f"LISTENING {server.listening_address}", flush=True)

    done = threading.Event()

    def _stop(*_: object) -> None:
        done.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)

    def _watch_stdin() -> None:
        try:
            sys.stdin.read()
        finally:
            done.set()

    threading.Thread(target=_watch_stdin, daemon=True).start()
    while not done.wait(0.2):
        pass
    del server  # runs the server's destructor: stops the loop, frees the model
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
