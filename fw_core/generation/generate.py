"""``generate``: continue prompts token by token with a causal LM and its KV cache, greedily or
by sampling, with HF transformers' arguments and semantics.

The model follows fw's causal-LM protocol: ``model.config`` (``vocab_size``,
``max_position_embeddings``, token ids), ``model.new_cache(batch, max_length)``, and
``model(ids, cache=, attention_mask=, position_ids=) -> (B, T, vocab)`` logits that advance
``cache.length`` by T. One prefill call takes the whole (left-padded) prompt, then one call per
new token. The sequences, the mask and the stopping state live on the host (each step reads
one token per row anyway); the scores stay on the model's device until a token is chosen.
"""

from __future__ import annotations

__all__ = ["generate"]

import numpy as np

from ..autograd import no_grad
from ..errors import ArgumentError, ArgumentTypeError, FwError, ShapeError
from ..ops.creation import tensor
from ..ops.reduction import argmax
from ..random import Generator, default_generator
from ..tensor import Tensor
from . import logits_process as lp
from .config import GenerationConfig, resolve
from .inputs import position_ids, prompt
from .stopping import RowStops, eos_list, token_id
from .streamers import as_streamer


def _check(config: GenerationConfig, prompt_length: int, max_positions) -> None:
    """ArgumentErrors for settings outside their range (the warpers check the rest)."""
    steps = config.max_new_tokens
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ArgumentError(f"max_new_tokens must be an int >= 1, got {steps!r}", op="generate",
                            hint="pass the number of tokens to add, e.g. max_new_tokens=50")
    if max_positions is not None and prompt_length + steps > max_positions:
        raise ArgumentError(
            f"the prompt ({prompt_length} tokens) plus max_new_tokens ({steps}) is "
            f"{prompt_length + steps} positions, beyond the model's max_position_embeddings "
            f"({max_positions})", op="generate",
            hint=f"pass max_new_tokens <= {max_positions - prompt_length}, or shorten the prompt")
    if not isinstance(config.do_sample, bool):
        raise ArgumentTypeError(f"do_sample must be True or False, got {config.do_sample!r}",
                                op="generate", hint="do_sample=True samples, False is greedy")


def _processors(config: GenerationConfig, custom) -> lp.LogitsProcessorList:
    """HF's order: the repetition penalty, the user's processors, then (when sampling) the
    warpers temperature, top-k, top-p, min-p."""
    if callable(custom) and not isinstance(custom, list):
        custom = [custom]
    if custom is not None and not (isinstance(custom, (list, tuple))
                                   and all(callable(p) for p in custom)):
        raise ArgumentTypeError(f"logits_processor must be a list of callables (input_ids, "
                                f"scores) -> scores, got {custom!r}", op="generate",
                                hint="pass fw.generation.LogitsProcessorList([...])")
    chain = lp.LogitsProcessorList()
    if config.repetition_penalty is not None and config.repetition_penalty != 1.0:
        chain.append(lp.RepetitionPenaltyLogitsProcessor(config.repetition_penalty))
    chain.extend(custom or ())
    # built even when not sampling, so that a bad value is reported rather than ignored
    warpers = []
    if config.temperature != 1.0 and (config.do_sample or config.temperature != 0):
        warpers.append(lp.TemperatureLogitsWarper(config.temperature))
    if config.top_k != 0:
        warpers.append(lp.TopKLogitsWarper(config.top_k))
    if config.top_p != 1.0:
        warpers.append(lp.TopPLogitsWarper(config.top_p))
    if config.min_p is not None:
        warpers.append(lp.MinPLogitsWarper(config.min_p))
    if config.do_sample:
        chain.extend(warpers)
    return chain


def _generator(seed) -> Generator:
    if seed is None:
        return default_generator
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ArgumentTypeError(f"seed must be an int, got {seed!r}", op="generate",
                                hint="pass seed=0 (any int) for reproducible sampling")
    return Generator(int(seed))


_BLOCK = 256  # tokens per block of the two-level inverse CDF


def _pick(weights: np.ndarray, draw: float) -> int:
    """The index where the cumulative ``weights`` pass ``draw`` (in [0, 1)) of their total:
    block sums first, then a cumsum inside one block, so a step does not cumulate the whole
    vocabulary. An index of weight 0 is never picked."""
    starts = np.arange(0, weights.size, _BLOCK)
    sums = np.add.reduceat(weights, starts)
    bounds = np.cumsum(sums, dtype=np.float64)
    target = draw * bounds[-1]
    block = int(np.searchsorted(bounds, target, side="right"))
    if block == starts.size:  # the product rounded up to the total
        block = int(np.flatnonzero(sums)[-1])
    inside = weights[starts[block]:starts[block] + _BLOCK]
    before = bounds[block - 1] if block else 0.0
    index = int(np.searchsorted(np.cumsum(inside, dtype=np.float64), target - before,
                                side="right"))
    if index >= inside.size:  # the block's float32 sum rounded above its cumsum
        index = int(np.flatnonzero(inside)[-1])
    return int(starts[block]) + index


def _sample(scores: Tensor, rng: Generator) -> np.ndarray:
    """One token per row, drawn from softmax(scores): ``exp(scores - max)`` need not be
    normalised to be inverted."""
    host = scores.numpy()
    with np.errstate(invalid="ignore"):  # a row of -inf only: reported below
        weights = np.exp(host - host.max(axis=-1, keepdims=True))
    if not np.isfinite(weights).all():
        raise FwError("every token of a row was filtered out (its scores are all -inf or NaN), "
                      "so nothing can be sampled", op="generate",
                      hint="check the logits processors: keep at least one token per row")
    draws = rng.numpy.random(len(weights))
    return np.array([_pick(row, draw) for row, draw in zip(weights, draws)], dtype=np.int64)


def _next_scores(model, logits, batch: int) -> Tensor:
    """The float32 (B, vocab) scores of the next token from the model's output."""
    if not isinstance(logits, Tensor) or logits.ndim != 3 or logits.shape[0] != batch:
        shape = tuple(logits.shape) if isinstance(logits, Tensor) else type(logits).__name__
        raise ShapeError(f"the model must return (batch, length, vocab) logits, got {shape}",
                         op="generate", module=type(model).__name__,
                         hint="return the lm_head's output for every input position")
    scores = logits[:, -1, :]
    return scores if scores.dtype.name == "float32" else scores.float()


def generate(model, input_ids: Tensor, attention_mask: Tensor | None = None, *,
             max_new_tokens: int | None = None, do_sample: bool | None = None,
             temperature: float | None = None, top_k: int | None = None,
             top_p: float | None = None, min_p: float | None = None,
             repetition_penalty: float | None = None, eos_token_id=None,
             pad_token_id: int | None = None, stop=None, seed: int | None = None,
             streamer=None, logits_processor=None, tokenizer=None) -> Tensor:
    """Continue each prompt row of ``input_ids`` by up to ``max_new_tokens`` tokens.

    Arguments left as None come from ``model.generation_config``, then ``model.config``, then
    HF's defaults (see :class:`GenerationConfig`).

    Args:
        model: a causal LM following fw's protocol (see the module docstring).
        input_ids: (B, T) int64 prompts; batched prompts are padded on the **left**.
        attention_mask: (B, T), 1 for tokens, 0 for padding; inferred from ``pad_token_id``
            when absent (as HF).
        max_new_tokens: how many tokens to add at most (20).
        do_sample: sample from the processed distribution instead of taking the argmax.
        temperature, top_k, top_p, min_p: the sampling warpers (1.0, 50, 1.0, None; ``top_k=0``
            disables top-k); ignored when ``do_sample`` is False, as in HF.
        repetition_penalty: CTRL's penalty on tokens already in the row (1.0: none).
        eos_token_id: an id or a list; a row that generates one stops.
        pad_token_id: what finished rows get (default: the first eos id).
        stop: a string or list of strings that stop a row once generated (needs a tokenizer).
        seed: makes sampling reproducible with a private generator; without it sampling
            draws from ``fw.random.default_generator`` (``fw.manual_seed`` seeds it).
        streamer: an object with ``put(ids)``/``end()`` (:class:`TextStreamer`), or a function
            called with each step's (B,) new tokens.
        logits_processor: extra processors, applied after the repetition penalty and before
            the sampling warpers.
        tokenizer: decodes tokens for ``stop`` (default: ``model.tokenizer``).

    Returns:
        (B, T + n) int64: the prompts followed by n <= max_new_tokens generated tokens (fewer
        when every row stopped early; finished rows are filled with ``pad_token_id``).

    Raises:
        ArgumentError: a setting out of range (temperature < 0, top_p outside (0, 1], a length
            beyond ``max_position_embeddings``, right padding, ...). ArgumentTypeError,
            ShapeError, DTypeError: arguments of the wrong kind.
    """
    config = resolve(model, {
        "max_new_tokens": max_new_tokens, "do_sample": do_sample, "temperature": temperature,
        "top_k": top_k, "top_p": top_p, "min_p": min_p, "repetition_penalty": repetition_penalty,
        "eos_token_id": eos_token_id, "pad_token_id": pad_token_id})
    eos = eos_list(config.eos_token_id)
    if config.pad_token_id is not None:
        token_id("pad_token_id", config.pad_token_id)
    pad = config.pad_token_id if config.pad_token_id is not None else (eos[0] if eos else None)
    model_config = model.config
    start = prompt(input_ids, attention_mask, config.pad_token_id, eos, model_config.vocab_size)
    batch, length = start.ids.shape
    _check(config, length, getattr(model_config, "max_position_embeddings", None))
    processors = _processors(config, logits_processor)
    stops = RowStops(eos, stop, tokenizer if tokenizer is not None
                     else getattr(model, "tokenizer", None))
    if pad is None and stops.can_stop and batch > 1:
        raise ArgumentError("rows of a batch can stop early but there is no pad_token_id to "
                            "fill them with", op="generate",
                            hint="pass pad_token_id= (e.g. the eos id)")
    rng = _generator(seed) if config.do_sample else None
    streamer = as_streamer(streamer)
    with no_grad():
        return _decode(model, start, config.max_new_tokens, processors, stops, pad, rng,
                       streamer)


def _decode(model, start, steps: int, processors, stops: RowStops, pad, rng, streamer) -> Tensor:
    """The prefill and decode loop; returns the (B, T + n) sequences."""
    device = start.device
    batch, length = start.ids.shape
    total = length + steps
    ids = np.full((batch, total), pad if pad is not None else 0, dtype=np.int64)
    ids[:, :length] = start.ids
    mask = np.ones((batch, total), dtype=np.int64)
    mask[:, :length] = start.mask
    positions = position_ids(mask)
    unfinished = np.ones(batch, dtype=bool)
    if streamer is not None:
        streamer.put(tensor(start.ids))
    cache = model.new_cache(batch, total)
    logits = model(tensor(start.ids, device=device), cache=cache,
                   attention_mask=tensor(start.mask, device=device),
                   position_ids=tensor(positions[:, :length], device=device))
    while True:
        scores = _next_scores(model, logits, batch)
        if processors:
            scores = processors(tensor(ids[:, :length], device=device), scores)
        chosen = argmax(scores, dim=-1).numpy() if rng is None else _sample(scores, rng)
        ids[:, length] = np.where(unfinished, chosen, ids[:, length])
        length += 1
        if streamer is not None:
            streamer.put(tensor(ids[:, length - 1]))
        unfinished &= ~stops(ids, length)
        if length == total or not unfinished.any():
            break
        logits = model(tensor(ids[:, length - 1:length], device=device), cache=cache,
                       attention_mask=tensor(mask[:, :length], device=device),
                       position_ids=tensor(positions[:, length - 1:length], device=device))
    if streamer is not None:
        streamer.end()
    return tensor(ids[:, :length], device=device)

