#!/usr/bin/env python3
"""Writes a random GPTQ checkpoint of a Llama-shaped model, to time and test the importers at
full size without downloading one:

    scripts/make_checkpoint.py OUT_DIR [--model llama-3-8b] [--layers N] [--group 128]
                               [--desc-act] [--shard-gb 2] [--seed 0]

OUT_DIR gets config.json (quant_method gptq, 4 bits) and model-0000i-of-0000n.safetensors shards
with model.safetensors.index.json, in GPTQ's layout (qweight int32 [K/8, N], qzeros int32
[groups, N/8] storing zero - 1, fp16 scales [groups, N], g_idx int32 [K] with --desc-act). Only
the transformer blocks' linear layers are written (no embeddings or norms): what the importers
read. Needs NumPy only.
"""

import argparse
import json
import os
import struct
import sys

import numpy as np

MODELS = {
    # hidden, intermediate, layers, query heads, key/value heads
    "llama-3-8b": (4096, 14336, 32, 32, 8),
    "llama-3-70b": (8192, 28672, 80, 64, 8),
}


def layer_shapes(hidden, intermediate, heads, kv_heads):
    """(name, N, K) of one transformer block's linear layers."""
    head_dim = hidden // heads
    return [
        ("self_attn.q_proj", hidden, hidden),
        ("self_attn.k_proj", kv_heads * head_dim, hidden),
        ("self_attn.v_proj", kv_heads * head_dim, hidden),
        ("self_attn.o_proj", hidden, hidden),
        ("mlp.gate_proj", intermediate, hidden),
        ("mlp.up_proj", intermediate, hidden),
        ("mlp.down_proj", hidden, intermediate),
    ]


def gptq_tensors(prefix, n, k, group, desc_act, rng):
    """A random symmetric-looking 4-bit GPTQ layer (zero points near 8), as name -> array."""
    groups = k // group
    qweight = rng.integers(0, 2**32, size=(k // 8, n), dtype=np.uint32).view(np.int32)
    zeros = rng.integers(6, 11, size=(groups, n), dtype=np.uint32) - 1  # stored as zero - 1
    shifts = (4 * np.arange(8, dtype=np.uint32))[None, None, :]
    qzeros = np.bitwise_or.reduce(zeros.reshape(groups, n // 8, 8) << shifts, axis=2)
    scales = (rng.random((groups, n), dtype=np.float32) * 0.01 + 0.001).astype(np.float16)
    out = {f"{prefix}.qweight": qweight, f"{prefix}.qzeros": qzeros.astype(np.uint32).view(np.int32),
           f"{prefix}.scales": scales}
    if desc_act:
        g_idx = np.repeat(np.arange(groups, dtype=np.int32), group)
        rng.shuffle(g_idx)
        out[f"{prefix}.g_idx"] = g_idx
    return out


DTYPES = {np.dtype(np.int32): "I32", np.dtype(np.float16): "F16"}


def write_safetensors(path, tensors):
    header, offset = {}, 0
    for name, array in tensors.items():
        header[name] = {"dtype": DTYPES[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for array in tensors.values():
            f.write(np.ascontiguousarray(array).tobytes())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--model", choices=sorted(MODELS), default="llama-3-8b")
    p.add_argument("--layers", type=int, help="transformer blocks to write (default: all)")
    p.add_argument("--group", type=int, default=128)
    p.add_argument("--desc-act", action="store_true", help="act-order: shuffled g_idx")
    p.add_argument("--shard-gb", type=float, default=2.0)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    hidden, intermediate, blocks, heads, kv_heads = MODELS[a.model]
    blocks = min(blocks, a.layers) if a.layers else blocks
    if hidden % a.group or intermediate % a.group:
        sys.exit(f"make_checkpoint: group {a.group} does not divide {hidden} and {intermediate}")
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(a.seed)

    # Shards of whole layers, each up to --shard-gb.
    shards, current, size = [], {}, 0
    for b in range(blocks):
        for name, n, k in layer_shapes(hidden, intermediate, heads, kv_heads):
            layer = gptq_tensors(f"model.layers.{b}.{name}", n, k, a.group, a.desc_act, rng)
            bytes_ = sum(t.nbytes for t in layer.values())
            if current and size + bytes_ > a.shard_gb * 2**30:
                shards.append(current)
                current, size = {}, 0
            current.update(layer)
            size += bytes_
        print(f"\rblock {b + 1}/{blocks}", end="", file=sys.stderr, flush=True)
    shards.append(current)
    print(file=sys.stderr)

    weight_map = {}
    for i, tensors in enumerate(shards):
        file = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        write_safetensors(os.path.join(a.out, file), tensors)
        weight_map.update({name: file for name in tensors})
    total = sum(t.nbytes for s in shards for t in s.values())
    with open(os.path.join(a.out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": hidden,
        "intermediate_size": intermediate, "num_hidden_layers": blocks,
        "num_attention_heads": heads, "num_key_value_heads": kv_heads,
        "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": a.group,
                                "desc_act": a.desc_act, "sym": False,
                                "checkpoint_format": "gptq"},
    }
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    print(f"{a.out}: {blocks} blocks, {7 * blocks} layers, {total / 2**30:.2f} GiB in "
          f"{len(shards)} shard(s)")


if __name__ == "__main__":
    main()
