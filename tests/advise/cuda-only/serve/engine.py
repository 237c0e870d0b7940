"""Builds a TensorRT engine and serves it with TensorRT-LLM."""

import tensorrt as trt
from tensorrt_llm import LLM


def build(onnx_path: str) -> bytes:
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network()
    parser = trt.OnnxParser(network, logger)
    with open(onnx_path, "rb") as fh:
        parser.parse(fh.read())
    return builder.build_serialized_network(network, builder.create_builder_config())


def serve(model: str) -> LLM:
    return LLM(model=model)
