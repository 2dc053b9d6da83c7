#!/usr/bin/env python3
"""Writes tiny compressed-tensors checkpoints with the producer's own code, for the importer tests.

Each case under OUT (default tests/fixtures/compressed_tensors) is a checkpoint directory:
config.json (quantization_config as compressed-tensors writes it), model.safetensors (one layer,
compressed by compressed-tensors' compressor for its format), and expected.safetensors: the
layer's weight as compressed-tensors itself decompresses it, in the dtype it returns. The C++
test (tests/unit/producer_fixture_test.cpp) imports each checkpoint and requires our dequantized
weight, rounded to that dtype, to equal the producer's bit for bit.

Needs torch and compressed-tensors (pip install torch compressed-tensors); the fixtures are
committed, so CI needs neither. Run from the repository root:

    python scripts/make_ct_fixtures.py [OUT]
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys

import torch
from safetensors.torch import save_file

import compressed_tensors
from compressed_tensors.compressors import BaseCompressor
from compressed_tensors.quantization import QuantizationArgs, QuantizationScheme
from compressed_tensors.quantization.utils import calculate_qparams, generate_gparam

PREFIX = "model.layers.0.mlp.down_proj"

# name: (format, weight args, N, K, weight dtype)
CASES = {
    "int4_g32_sym": ("pack-quantized",
                     dict(num_bits=4, type="int", symmetric=True, strategy="group", group_size=32),
                     48, 256, torch.bfloat16),
    "int4_g64_asym": ("pack-quantized",
                      dict(num_bits=4, type="int", symmetric=False, strategy="group",
                           group_size=64),
                      40, 192, torch.float16),
    "int8_channel_sym": ("pack-quantized",
                         dict(num_bits=8, type="int", symmetric=True, strategy="channel"),
                         32, 160, torch.bfloat16),
    "int3_g32_sym": ("pack-quantized",
                     dict(num_bits=3, type="int", symmetric=True, strategy="group", group_size=32),
                     24, 128, torch.bfloat16),
    "int2_channel_asym": ("pack-quantized",
                          dict(num_bits=2, type="int", symmetric=False, strategy="channel"),
                          36, 96, torch.float32),
    "fp8_channel": ("float-quantized",
                    dict(num_bits=8, type="float", symmetric=True, strategy="channel"),
                    48, 192, torch.bfloat16),
    "fp8_tensor": ("float-quantized",
                   dict(num_bits=8, type="float", symmetric=True, strategy="tensor"),
                   32, 128, torch.bfloat16),
    "nvfp4": ("nvfp4-pack-quantized",
              dict(num_bits=4, type="float", symmetric=True, strategy="tensor_group",
                   group_size=16, scale_dtype=torch.float8_e4m3fn),
              48, 256, torch.bfloat16),
    "fp8_block": ("float-quantized",
                  dict(num_bits=8, type="float", symmetric=True, strategy="block",
                       block_structure=[128, 128]),
                  200, 320, torch.bfloat16),
}


def qparams(weight: torch.Tensor, args: QuantizationArgs):
    """Scales and zero points of `weight` for `args`, from its min and max per scale block."""
    n, k = weight.shape
    w = weight.float()
    if args.strategy in ("group", "tensor_group"):
        blocks = w.reshape(n, k // args.group_size, args.group_size)
        lo, hi = blocks.amin(dim=-1), blocks.amax(dim=-1)
    elif args.strategy == "channel":
        lo, hi = w.amin(dim=1, keepdim=True), w.amax(dim=1, keepdim=True)
    elif args.strategy == "tensor":
        lo, hi = w.amin().reshape(1), w.amax().reshape(1)
    else:  # block
        bn, bk = args.block_structure
        rows, cols = math.ceil(n / bn), math.ceil(k / bk)
        padded = torch.zeros(rows * bn, cols * bk)
        padded[:n, :k] = w
        blocks = padded.reshape(rows, bn, cols, bk).permute(0, 2, 1, 3).reshape(rows, cols, -1)
        lo, hi = blocks.amin(dim=-1), blocks.amax(dim=-1)
    # NVFP4 (tensor_group): a global scale from the whole tensor divides the group scales.
    global_scale = generate_gparam(w.amin(), w.amax()) if args.strategy == "tensor_group" else None
    scale, zero = calculate_qparams(lo.to(weight.dtype), hi.to(weight.dtype), args,
                                    global_scale=global_scale)
    return scale, zero, global_scale


def write_case(out: str, name: str, fmt: str, weight_args: dict, n: int, k: int, dtype,
               seed: int) -> None:
    torch.manual_seed(seed)
    weight = (torch.randn(n, k) * 0.05).to(dtype)
    args = QuantizationArgs(**weight_args)
    scheme = QuantizationScheme(targets=["Linear"], weights=args)
    scale, zero, global_scale = qparams(weight, args)
    state = {"weight": weight, "weight_scale": scale.to(dtype)}
    if global_scale is not None:
        state["weight_global_scale"] = global_scale
    if not args.symmetric:
        state["weight_zero_point"] = zero
    compressor = BaseCompressor.get_value_from_registry(fmt)
    compressed = compressor.compress(state, scheme)
    expected = compressor.decompress(dict(compressed), scheme)["weight"]

    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    save_file({f"{PREFIX}.{key}": value.contiguous() for key, value in compressed.items()},
              os.path.join(folder, "model.safetensors"))
    save_file({f"{PREFIX}.weight": expected.contiguous()},
              os.path.join(folder, "expected.safetensors"))
    group = {"targets": ["Linear"], "weights": args.model_dump(exclude_none=True),
             "input_activations": None, "output_activations": None, "format": fmt}
    config = {"architectures": ["LlamaForCausalLM"],
              "quantization_config": {"quant_method": "compressed-tensors", "format": fmt,
                                      "quantization_status": "compressed",
                                      "version": compressed_tensors.__version__,
                                      "config_groups": {"group_0": group}, "ignore": ["lm_head"]}}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{name}: {fmt} {args.strategy} {n} x {k} {dtype} -> {sorted(compressed)}, "
          f"expected {expected.dtype}")


def main() -> int:
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join("tests", "fixtures",
                                                             "compressed_tensors")
    if os.path.isdir(out):
        shutil.rmtree(out)
    for seed, (name, (fmt, weight_args, n, k, dtype)) in enumerate(sorted(CASES.items())):
        write_case(out, name, fmt, weight_args, n, k, dtype, seed + 1)
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("Written by scripts/make_ct_fixtures.py with compressed-tensors "
                f"{compressed_tensors.__version__} and torch {torch.__version__}; "
                "tests/unit/producer_fixture_test.cpp reads them.\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
