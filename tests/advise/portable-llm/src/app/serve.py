"""A tiny vLLM service: portable, PyTorch's ROCm build keeps torch.cuda."""

import torch
from vllm import LLM, SamplingParams


def generate(prompt: str) -> str:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    llm = LLM(model="facebook/opt-125m", device=device)
    out = llm.generate([prompt], SamplingParams(max_tokens=16))
    return out[0].outputs[0].text
