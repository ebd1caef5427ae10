"""The byte-level BPE tokenizer of a GGUF file (``tokenizer.ggml.model == "gpt2"``), rebuilt
with the ``tokenizers`` package, and the file's chat template rendered with Jinja.

The vocabulary and merges are the file's (``tokenizer.ggml.tokens``/``merges``); tokens of type
3 (control: ``<|im_start|>``, ``<|endoftext|>`` ...) are special tokens, matched whole in the
text. Pre-tokenization is what llama.cpp's ``smollm``/``starcoder`` pre-tokenizer and Hugging
Face's ``tokenizer.json`` for SmolLM2 do: every digit on its own, then GPT-2's byte-level split.
The chat template runs in Jinja's immutable sandbox, as ``transformers`` runs it, so a template
shipped in a file can read its arguments but change nothing.
"""

from __future__ import annotations

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

from fw_core.errors import InvalidArgumentError, UnsupportedError

CONTROL = 3  # llama.cpp's token type of special (control) tokens
#: the pre-tokenizer types (``tokenizer.ggml.pre``) whose split is digits, then GPT-2's
DIGIT_SPLIT_PRE = ("smollm", "starcoder", "refact", "codeshell")


class LlamaTokenizer:
    """``encode(text) -> list[int]``, ``decode(ids) -> str`` and ``apply_chat_template``.

    Attributes:
        bos_token_id, eos_token_id, pad_token_id: from the file (None where it has none).
        special_tokens: the control tokens by text.
        chat_template: the file's Jinja template (None where it has none).
    """

    def __init__(self, metadata: dict):
        model = metadata.get("tokenizer.ggml.model")
        pre = metadata.get("tokenizer.ggml.pre", "default")
        if model != "gpt2" or pre not in DIGIT_SPLIT_PRE:
            raise UnsupportedError(f"the GGUF tokenizer is {model!r} with pre-tokenizer {pre!r}",
                                   hint="fw_zoo rebuilds byte-level BPE tokenizers that split "
                                   f"digits ({', '.join(DIGIT_SPLIT_PRE)})")
        tokens = metadata["tokenizer.ggml.tokens"]
        kinds = metadata["tokenizer.ggml.token_type"]
        merges = [tuple(m.split(" ", 1)) for m in metadata["tokenizer.ggml.merges"]]
        bpe = models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges,
                         fuse_unk=False)
        self._tokenizer = Tokenizer(bpe)
        self._tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
        self._tokenizer.decoder = decoders.ByteLevel()
        self.special_tokens = {t: i for i, (t, k) in enumerate(zip(tokens, kinds))
                               if k == CONTROL}
        self._tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False)
                                            for t in self.special_tokens])
        self.bos_token_id = metadata.get("tokenizer.ggml.bos_token_id")
        self.eos_token_id = metadata.get("tokenizer.ggml.eos_token_id")
        self.pad_token_id = metadata.get("tokenizer.ggml.padding_token_id")
        self.add_bos_token = bool(metadata.get("tokenizer.ggml.add_bos_token", False))
        self.chat_template = metadata.get("tokenizer.chat_template")
        self._tokens = tokens

    @property
    def vocab_size(self) -> int:
        return len(self._tokens)

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text`` (special tokens in it become their ids; a BOS id first
        only when the file asks for one: SmolLM2's does not)."""
        ids = self._tokenizer.encode(text, add_special_tokens=False).ids
        return [self.bos_token_id, *ids] if self.add_bos_token else ids

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        """The text of ``ids`` (a list of ints, or an int tensor's values)."""
        values = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        return self._tokenizer.decode(values, skip_special_tokens=skip_special_tokens)

    def apply_chat_template(self, messages: list[dict], add_generation_prompt: bool = True,
                            tokenize: bool = False):
        """The conversation ``messages`` ([{"role": ..., "content": ...}, ...]) rendered by the
        file's chat template (text, or its ids with ``tokenize=True``);
        ``add_generation_prompt`` ends it with the opening of the assistant's turn.

        Raises:
            InvalidArgumentError: the file has no chat template.
        """
        if not self.chat_template:
            raise InvalidArgumentError("this tokenizer has no chat template",
                                       hint="format the prompt yourself and call encode()")
        text = _template(self.chat_template).render(
            messages=messages, add_generation_prompt=add_generation_prompt,
            bos_token=self._text_of(self.bos_token_id), eos_token=self._text_of(self.eos_token_id))
        return self.encode(text) if tokenize else text

    def _text_of(self, token_id) -> str:
        return "" if token_id is None else self._tokens[token_id]


def _template(source: str):
    """``source`` compiled in Jinja's immutable sandbox with the settings ``transformers``
    renders chat templates with (blocks trimmed, loop controls, ``raise_exception``)."""
    from jinja2 import TemplateError
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.globals["raise_exception"] = raise_exception
    return env.from_string(source)
