"""Bounds for hostile input, in one place: capped reads of regular files, capped line streams
(plain or gzip), number bounds, secret scrubbing and printable names.

Every reader of a learning surface (corpus traces, manifests, ``.npz`` runs, gate files,
task files, chat transcripts) goes through these, so that no input under 1 GB on disk can
hang a command (a FIFO, ``/dev/zero``), take more than a bounded amount of memory (a sparse
file, a gzip bomb, one endless line) or smuggle a secret or a terminal escape into output.

===========================  ======================================================================
function                     contract
===========================  ======================================================================
:func:`regular_file`         ``stat`` (following symlinks) → a regular file under ``limit`` bytes,
                             else a located :class:`~orchestrace.errors.ConfigError` (FIFOs,
                             devices, folders, symlink loops are refused *before* ``open``)
:func:`read_capped`          the bytes of :func:`regular_file`, read with the cap enforced again
:func:`capped_lines`         ``(line_no, bytes)`` of a ``.jsonl`` / ``.jsonl.gz``; the decompressed
                             total and each line are capped; a torn gzip yields one ``OSError``
:func:`check_number`         a finite int/float within ``[lo, hi]``, else a message naming ``$.field``
:func:`scrub`                ``text`` with API keys, bearer tokens and configured patterns → ``***``
:func:`printable`            ``text`` with control characters escaped (``\\x1b`` …) for a terminal
:func:`redact_url`           a URL without user-info, query, fragment, or secret-looking path segments
===========================  ======================================================================

Limits (environment variables override them, read at use time):

- ``ORCHESTRACE_MAX_CORPUS_BYTES`` (default 128 MiB: a corpus at the cap loads in ~30 s within ~340 MB): one corpus stream, on disk and decompressed;
- ``MAX_LINE_BYTES`` (1 MiB): one JSONL record;
- ``MAX_SMALL_FILE_BYTES`` (16 MiB): a manifest, a gate file, a task file;
- ``ORCHESTRACE_SECRET_PATTERNS``: extra regular expressions to scrub, separated by newlines.

>>> scrub("Incorrect API key provided: sk-proj-abcdefghijklmnop1234")
'Incorrect API key provided: ***'
>>> printable("agent\\x1b[31mred")
'agent\\\\x1b[31mred'
>>> redact_url("https://u:p@api.example.com/v1/sk-abcdefghijklmnopqrstuvwx/chat?key=1")
'https://api.example.com/v1/***/chat'
"""

from __future__ import annotations

import gzip
import math
import os
import re
import stat
import zlib
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import ConfigError

__all__ = [
    "LOGPROB_MIN",
    "MAX_CORPUS_BYTES",
    "MAX_DIFFICULTY",
    "MAX_LINE_BYTES",
    "MAX_ROUNDS",
    "MAX_SMALL_FILE_BYTES",
    "MAX_TOKENS",
    "MAX_WIDTH",
    "capped_lines",
    "check_number",
    "corpus_bytes",
    "env_bytes",
    "open_input",
    "printable",
    "read_capped",
    "redact_url",
    "regular_file",
    "scrub",
]

#: One corpus stream, on disk and decompressed (``ORCHESTRACE_MAX_CORPUS_BYTES`` overrides).
MAX_CORPUS_BYTES = 128 * 1024**2
#: One JSONL record (a trace-stream line).
MAX_LINE_BYTES = 1024**2
#: A manifest, a gate/policy file, a task file.
MAX_SMALL_FILE_BYTES = 16 * 1024**2
#: Blank lines in one stream (a writer emits none; more is padding, never one object each).
MAX_BLANK_LINES = 10_000
#: Problems listed for one corpus: past it the reader stops (a file of junk is not read to its end).
MAX_PROBLEMS = 1_000
#: Tokens of one attempt (prompt or completion): a count at or above it is corrupt.
MAX_TOKENS = 2**20
#: The lowest mean token log-prob accepted (a mean below it is corrupt; 0 is the highest).
LOGPROB_MIN = -1000.0
#: Round limit and width of a logged vote/team loop.
MAX_ROUNDS, MAX_WIDTH = 32, 16  # vote corpora are 4 x 2-3, the team corpus 4 x 4: fitting scans every width
#: A task's difficulty (the generator's size knob).
MAX_DIFFICULTY = 10**6


def env_bytes(name: str, default: int) -> int:
    """A byte count from the environment variable ``name`` (``default`` when unset).

    A value that is not a positive whole number is a :class:`~orchestrace.errors.ConfigError`
    naming the variable (read at use time, so a typo never breaks ``import orchestrace``).

    >>> env_bytes("ORCHESTRACE_SURELY_UNSET_XYZ", 7)
    7
    """
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip().replace("_", ""))
    except ValueError:
        value = 0
    if value <= 0:
        raise ConfigError(f"{name} must be a positive whole number of bytes, got {raw[:40]!r}; "
                          f"unset it for the default ({default})")
    return value


def corpus_bytes() -> int:
    """The corpus cap: ``ORCHESTRACE_MAX_CORPUS_BYTES`` or :data:`MAX_CORPUS_BYTES`.

    >>> corpus_bytes() > 0
    True
    """
    return env_bytes("ORCHESTRACE_MAX_CORPUS_BYTES", MAX_CORPUS_BYTES)


# ----------------------------------------------------------------------------- files
def regular_file(path: str | os.PathLike[str], *, limit: int, what: str = "file") -> int:
    """The size of ``path`` if it is a regular file (symlinks followed) of at most ``limit`` bytes.

    Checked with ``stat`` before anything opens it, so a FIFO never blocks and a 1 GiB
    sparse file is refused without a read. Raises :class:`~orchestrace.errors.ConfigError`
    naming the path and what it is instead.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "f"); _ = open(p, "w").write("{}")
    >>> regular_file(p, limit=10)
    2
    >>> os.mkfifo(os.path.join(d, "q"))
    >>> try:
    ...     regular_file(os.path.join(d, "q"), limit=10, what="gate file")
    ... except ConfigError as e:
    ...     print(str(e).split(": ", 1)[1])
    not a regular file (a FIFO); a gate file must be a regular file
    """
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such {what}") from None
    except OSError as exc:  # ELOOP (a symlink loop), EACCES, ENAMETOOLONG …
        raise ConfigError(f"{p}: cannot read the {what} ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        kind = ("a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
                else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a file")
        raise ConfigError(f"{p}: not a regular file ({kind}); a {what} must be a regular file")
    if st.st_size > limit:
        raise ConfigError(f"{p}: the {what} is {st.st_size} bytes, over the {limit}-byte limit for it")
    return int(st.st_size)


def read_capped(path: str | os.PathLike[str], *, limit: int = MAX_SMALL_FILE_BYTES, what: str = "file") -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (:func:`regular_file`; the cap holds
    while reading too, should the file grow).

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "f"); _ = open(p, "w").write("x" * 20)
    >>> try:
    ...     read_capped(p, limit=10, what="manifest")
    ... except ConfigError as e:
    ...     print(str(e).split(": ", 1)[1])
    the manifest is 20 bytes, over the 10-byte limit for it
    """
    regular_file(path, limit=limit, what=what)
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise ConfigError(f"{path}: the {what} grew over the {limit}-byte limit while being read")
    return data


def open_input(path: str | os.PathLike[str]) -> Any:
    """``open(path, "rb")`` that never blocks on a FIFO without a writer: a FIFO is opened
    non-blocking, then switched back to blocking reads (with no writer a read gives EOF at
    once, so the caller sees an empty input; a pipe that has a writer, such as bash's
    ``<(…)``, is read as usual).

    >>> import tempfile, os
    >>> q = os.path.join(tempfile.mkdtemp(), "q"); os.mkfifo(q)
    >>> with open_input(q) as fh:
    ...     fh.read()
    b''
    """
    try:
        fifo = stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        fifo = False
    if not fifo:
        return open(path, "rb")  # noqa: SIM115 (the caller closes it)
    import fcntl

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return os.fdopen(fd, "rb")


def capped_lines(path: str | os.PathLike[str], *, limit: int | None = None,
                 line_limit: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes | OSError | ValueError]]:
    """``(line_no, line)`` of a ``.jsonl`` or ``.jsonl.gz`` stream, 1-based, newline kept.

    The file must be a regular file under ``limit`` bytes (default :func:`corpus_bytes`);
    the decompressed total is capped at ``limit`` too and each line at ``line_limit``
    (a longer one is yielded as a ``ValueError`` saying so, its bytes skipped). Unreadable data (a torn gzip, the cap) ends the stream with one
    ``(line_no, OSError)``: the lines before it were yielded. Blank lines are skipped (their
    numbers counted); more than :data:`MAX_BLANK_LINES` of them end the stream the same way.

    >>> import tempfile, os, gzip
    >>> p = os.path.join(tempfile.mkdtemp(), "t.jsonl.gz")
    >>> with gzip.open(p, "wb") as fh:
    ...     _ = fh.write(b"a\\n" + b"0" * 100)
    >>> [(n, x if isinstance(x, bytes) else "error") for n, x in capped_lines(p, limit=50)]
    [(1, b'a\\n'), (2, 'error')]
    """
    cap = corpus_bytes() if limit is None else limit
    regular_file(path, limit=cap, what="corpus stream")
    ln = 0
    total = 0
    blank = 0
    try:
        with open(path, "rb") as raw:
            fh: Any = gzip.GzipFile(fileobj=raw, mode="rb") if str(path).endswith(".gz") else raw
            readline = fh.readline
            while True:
                line = readline(line_limit + 1)
                if not line:
                    return
                total += len(line)
                if total > cap:
                    raise OSError(f"more than {cap} bytes (decompressed) — a compression bomb? (raise "
                                  "ORCHESTRACE_MAX_CORPUS_BYTES for a larger corpus)")
                ln += 1
                if not line.strip():  # a blank line is skipped, never an object; padding is capped
                    blank += 1
                    if blank > MAX_BLANK_LINES:
                        raise OSError(f"more than {MAX_BLANK_LINES} blank lines — padding, or a compression bomb?")
                    continue
                if len(line) > line_limit:
                    yield ln, ValueError(f"the line is longer than {line_limit} bytes")
                    while line and not line.endswith(b"\n"):  # skip the rest, still capped
                        line = readline(line_limit)
                        total += len(line)
                        if total > cap:
                            raise OSError(f"more than {cap} bytes (decompressed) — a compression bomb? (raise "
                                          "ORCHESTRACE_MAX_CORPUS_BYTES for a larger corpus)")
                    continue
                yield ln, line
    except (OSError, EOFError, zlib.error) as exc:
        yield ln + 1, exc if isinstance(exc, OSError) else OSError(str(exc) or type(exc).__name__)


# ----------------------------------------------------------------------------- numbers
def check_number(x: Any, field: str, *, lo: float = -math.inf, hi: float = math.inf,
                 integer: bool = False) -> str | None:
    """None when ``x`` is a finite number in ``[lo, hi]`` (an int when ``integer``), else what is wrong.

    >>> check_number(-0.5, "$.attrs.logprob_mean", hi=0.0) is None
    True
    >>> check_number(3.0, "$.tokens_out", lo=0, integer=True)
    '$.tokens_out: expected an integer, got 3.0'
    >>> check_number(2**31, "$.tokens_out", lo=0, hi=MAX_TOKENS - 1, integer=True)
    '$.tokens_out: 2147483648 is out of range [0, 1048575]'
    """
    if isinstance(x, bool) or not isinstance(x, (int, float)) or (integer and not isinstance(x, int)):
        want = "an integer" if integer else "a number"
        return f"{field}: expected {want}, got {_short(x)}"
    if isinstance(x, float) and not math.isfinite(x):
        return f"{field}: {x} is not finite"
    if not lo <= x <= hi:
        return f"{field}: {_short(x)} is out of range [{_fmt(lo)}, {_fmt(hi)}]"
    return None


def _fmt(v: float) -> str:
    return str(int(v)) if isinstance(v, int) or (math.isfinite(v) and v == int(v)) else str(v)


def _short(x: Any) -> str:
    s = repr(x)
    return s if len(s) <= 40 else f"{s[:20]}…({len(s)} characters)"


# ----------------------------------------------------------------------------- secrets and names
_SECRET_PATTERNS = (
    r"\bsk-[A-Za-z0-9_\-]{12,}",  # OpenAI / Anthropic style keys (sk-…, sk-proj-…, sk-ant-…)
    r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{8,}=*",  # Authorization: Bearer …
    r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}",  # GitHub tokens
    r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",  # Slack
    r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key id
    r"\bAIza[0-9A-Za-z_\-]{35}",  # Google API key
    r"\bhf_[A-Za-z0-9]{20,}",  # Hugging Face
    r"(?i)\b(?:api[_ -]?key|access[_-]?token|secret|password|passwd)\b[\"']?\s*[=:]\s*[\"']?[^\s\"',;]{6,}[\"']?",
)


@lru_cache(maxsize=8)
def _secret_re(extra: str, keys: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    parts = list(_SECRET_PATTERNS)
    for line in extra.splitlines():
        if line.strip():
            try:
                re.compile(line.strip())
            except re.error as exc:
                raise ConfigError(f"ORCHESTRACE_SECRET_PATTERNS: {line.strip()!r} is not a regular expression "
                                  f"({exc})") from None
            parts.append(line.strip())
    parts += [re.escape(k) for k in keys if len(k) >= 6]
    return tuple(re.compile(p) for p in parts)


def _env_keys() -> tuple[str, ...]:
    names = ("ORCHESTRACE_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN")
    return tuple(sorted({os.environ[n] for n in names if os.environ.get(n)}))


def scrub(text: str, *, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with every secret replaced by ``***``: API keys and bearer tokens (common
    formats), the values of the usual API-key environment variables, ``secrets`` and the
    patterns in ``ORCHESTRACE_SECRET_PATTERNS`` (one regular expression a line).

    >>> scrub("Authorization: Bearer abc.def-123456 ok")
    'Authorization: *** ok'
    >>> scrub("password=hunter22 and api_key: 'xyzzy123'")
    '*** and ***'
    >>> scrub("the answer is 42"), scrub("tok ABC123456", secrets=("ABC123456",))
    ('the answer is 42', 'tok ***')
    """
    if not isinstance(text, str) or not text:
        return text
    for pat in _secret_re(os.environ.get("ORCHESTRACE_SECRET_PATTERNS", ""),
                          tuple(sorted(set(secrets) | set(_env_keys())))):
        text = pat.sub("***", text)
    return text


def scrub_obj(obj: Any, *, secrets: tuple[str, ...] = ()) -> Any:
    """:func:`scrub` applied to every string (keys included) of a JSON-like value.

    >>> scrub_obj({"detail": ["Bearer abcdefgh12345"], "n": 1})
    {'detail': ['***'], 'n': 1}
    """
    if isinstance(obj, str):
        return scrub(obj, secrets=secrets)
    if isinstance(obj, dict):
        return {scrub_obj(k, secrets=secrets): scrub_obj(v, secrets=secrets) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(scrub_obj(v, secrets=secrets) for v in obj)
    return obj


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: Any, *, lines: bool = False) -> str:
    r"""``str(text)`` safe for a terminal: control characters (C0, DEL, C1, bidi overrides)
    are written as Python escapes, so an agent name cannot move the cursor or recolour output.
    ``lines=True`` keeps newlines and tabs (a multi-line message).

    >>> printable("a\tb\x07c\u202e")
    'a\\tb\\x07c\\u202e'
    >>> printable("a\nb\x1b", lines=True)
    'a\nb\\x1b'
    """
    s = str(text)
    return _CONTROL.sub(lambda m: m.group() if lines and m.group() in "\n\t" else
                        m.group().encode("unicode_escape").decode("ascii"), s)


_SECRETISH_SEGMENT = re.compile(r"^(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9_\-.~+=]{24,}$")


def redact_url(url: str) -> str:
    """``url`` without user-info, query string and fragment, and with every path segment that
    looks like a secret (a known key format, or 24+ characters mixing letters and digits) as ``***``.

    >>> redact_url("http://localhost:8080/v1")
    'http://localhost:8080/v1'
    >>> redact_url("https://gw.example.com/key/AbCdEf0123456789AbCdEf01/v1")
    'https://gw.example.com/key/***/v1'
    """
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(str(url))
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
    except ValueError:  # a bad port, an unbalanced bracket: show nothing of it but the scheme
        return "<an unparsable URL>"
    segs = [("***" if _SECRETISH_SEGMENT.match(urllib.parse.unquote(s)) or scrub(urllib.parse.unquote(s)) !=
             urllib.parse.unquote(s) else s) for s in parts.path.split("/")]
    return printable(urllib.parse.urlunsplit((parts.scheme, host, "/".join(segs), "", "")))
