#!/usr/bin/env python3
"""End to end in a Hugging Face model: a Llama-shaped model with random weights (the real
dimensions, no download) in BF16 against the same model after ``qgemm.torch.quantize_`` (and,
with --also, against further quantized variants, each of the BF16 model rebuilt: W8A8 FP8 is
``--also e4m3/channel/fp32@e4m3/token``).

Measures, per model variant:
  * decode tokens/s at each batch size: a prompt of --prompt tokens prefilled into a static KV
    cache, then one decode step (argmax fed back, position advanced) captured in a CUDA graph
    and replayed; the time is device events around --steps replays, the median of --repeats;
  * prefill time of --prefill tokens (batch 1, eager forward, median of --repeats);
  * the split of a quantized decode step's kernel time between the qgemm kernels and all the
    others (torch.profiler over eager steps);
and the accuracy of each quantized model: last-token logits on --accuracy-prompts random prompts
against the same model with the dequantized weights in BF16 (torch matmuls), as the cosine
similarity (min and mean) and the top-1 agreement (random weights give near-ties: reported,
not judged).

Writes JSON (and, with --plot, an SVG bar chart) for bench/results/<gpu>/. Needs torch,
transformers and the qgemm package; `--model tiny` runs a 2-layer model, also on the CPU
(--device cpu: eager only, no graphs, timings meaningless) to check the script itself.

    python bench/e2e_transformers.py --out bench/results/h200/e2e_llama3_8b.json \\
        --plot bench/results/h200/e2e_llama3_8b.svg
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import statistics
import sys
import time

import torch

MODELS = {
    # Llama-3-8B: hidden 4096, MLP 14336, 32 layers, 32 heads of which 8 KV heads, vocab 128256.
    "llama-3-8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                       num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
                       max_position_embeddings=8192, rope_theta=500000.0),
    "tiny": dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, vocab_size=1024,
                 max_position_embeddings=1024),
}


def decode_gqa_attention(module, query, key, value, attention_mask, **kwargs):
    """transformers' SDPA attention, except that a decode step (one query per sequence) of a
    grouped-query layer runs each KV head's group of query heads as that head's queries, so
    the KV cache is read once and never repeated to every query head. transformers' own SDPA
    path does the same from version 5.25 on; older versions copy K and V once per query head
    (repeat_kv) whenever the static cache's mask is present, which costs more than the
    attention itself at batch 16 and up."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    groups = getattr(module, "num_key_value_groups", 1)
    batch, heads, q_len, dim = query.shape
    mask_ok = attention_mask is None or (attention_mask.dim() == 4 and attention_mask.shape[1] == 1)
    if q_len != 1 or groups == 1 or not mask_ok or kwargs.get("output_attentions", False):
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
    kv_heads = key.shape[1]
    packed = query.reshape(batch, kv_heads, groups, dim)  # head h = kv_head * groups + g
    out = torch.nn.functional.scaled_dot_product_attention(
        packed, key, value, attn_mask=attention_mask, dropout_p=0.0,
        scale=kwargs.get("scaling"))
    return out.reshape(batch, heads, 1, dim).transpose(1, 2).contiguous(), None


ATTENTION = {
    # name: the transformers attention implementation the model runs
    "sdpa": "sdpa",
    "sdpa-decode-gqa": "qgemm_bench_decode_gqa",
}


def register_attention() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask
    AttentionInterface.register(ATTENTION["sdpa-decode-gqa"], decode_gqa_attention)
    ALL_MASK_ATTENTION_FUNCTIONS.register(ATTENTION["sdpa-decode-gqa"], sdpa_mask)


def build_model(name: str, device: torch.device, seed: int, attention: str):
    from transformers import LlamaConfig, LlamaForCausalLM
    config = LlamaConfig(**MODELS[name], torch_dtype=torch.bfloat16)
    config._attn_implementation = ATTENTION[attention]
    torch.manual_seed(seed)
    with torch.device(device):
        model = LlamaForCausalLM(config).to(torch.bfloat16)
    # Random weights of a trained model's scale: N(0, 0.02), norms at one.
    with torch.no_grad():
        for name_, p in model.named_parameters():
            if name_.endswith("norm.weight"):
                p.fill_(1.0)
            else:
                p.normal_(0.0, 0.02)
    return model.eval()


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class DecodeStep:
    """One decode step of `model` over a static cache, captured in a CUDA graph where it can be
    (the argmax token and the next position are written in place, so replays run on)."""

    def __init__(self, model, batch: int, prompt: int, steps: int, device: torch.device,
                 use_graph: bool, seed: int):
        from transformers import StaticCache
        self.model, self.device = model, device
        self.cache = StaticCache(config=model.config, max_cache_len=prompt + steps + 8)
        g = torch.Generator(device="cpu").manual_seed(seed)
        ids = torch.randint(0, model.config.vocab_size, (batch, prompt), generator=g).to(device)
        with torch.no_grad():
            out = model(input_ids=ids, past_key_values=self.cache,
                        cache_position=torch.arange(prompt, device=device), use_cache=True)
        self.token = out.logits[:, -1:].argmax(-1)
        self.position = torch.tensor([prompt], device=device)
        self.graph = None
        if use_graph:
            stream = torch.cuda.Stream(device)
            stream.wait_stream(torch.cuda.current_stream(device))
            with torch.cuda.stream(stream):
                for _ in range(2):
                    self._step()  # warm-up, outside the graph
            torch.cuda.current_stream(device).wait_stream(stream)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self._step()

    def _step(self) -> None:
        with torch.no_grad():
            out = self.model(input_ids=self.token, past_key_values=self.cache,
                             cache_position=self.position, use_cache=True)
        self.token.copy_(out.logits[:, -1:].argmax(-1))
        self.position.add_(1)

    def run(self, steps: int) -> float:
        """Seconds for `steps` steps (device events on a GPU)."""
        if self.device.type != "cuda":
            t0 = time.perf_counter()
            for _ in range(steps):
                self._step()
            return time.perf_counter() - t0
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(steps):
            self.graph.replay() if self.graph is not None else self._step()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1000.0


def decode_tokens_per_s(model, batch: int, args, device: torch.device) -> dict:
    use_graph = device.type == "cuda" and not args.eager
    runs = []
    for r in range(args.repeats):
        # A fresh cache per repeat, so every repeat decodes the same positions.
        step = DecodeStep(model, batch, args.prompt, args.steps, device, use_graph, args.seed + r)
        runs.append(step.run(args.steps))
        del step
    seconds = statistics.median(runs)
    return {"batch": batch, "tokens_per_s": batch * args.steps / seconds,
            "step_ms": 1000.0 * seconds / args.steps, "graph": use_graph}


def prefill_ms(model, args, device: torch.device) -> float:
    g = torch.Generator(device="cpu").manual_seed(args.seed)
    ids = torch.randint(0, model.config.vocab_size, (1, args.prefill), generator=g).to(device)
    times = []
    with torch.no_grad():
        for _ in range(args.repeats + 1):
            sync(device)
            t0 = time.perf_counter()
            model(input_ids=ids, use_cache=False)
            sync(device)
            times.append(1000.0 * (time.perf_counter() - t0))
    return statistics.median(times[1:])  # the first call may compile or warm up


def quantized_references(model, weight_format: str, skip: list) -> dict:
    """name -> the BF16 weight [N, K] each linear layer quantize_ will swap holds after
    quantization (quantize_weights is deterministic, so these are the values the qgemm layers
    multiply), on the host."""
    from qgemm import quantize_weights
    refs = {}
    for name, m in model.named_modules():
        if isinstance(m, torch.nn.Linear) and name.split(".")[-1] not in skip:
            q = quantize_weights(m.weight.detach().float().cpu().numpy(), weight_format)
            refs[name] = torch.from_numpy(q.dequantize()).to(torch.bfloat16)
    return refs


def qgemm_layers(model):
    """The modules quantize_ put where nn.Linear layers were (layers and projections of fused
    ones), by name."""
    from qgemm.torch import ProjectionOf, QuantizedLinear
    return [(name, m) for name, m in model.named_modules()
            if isinstance(m, (QuantizedLinear, ProjectionOf))]


def decode_split(model, batch: int, args, device: torch.device) -> dict:
    """Kernel time of one eager decode step (torch.profiler, CUDA activity), the qgemm kernels
    (NVRTC-compiled, named qgemm::...) against all the others."""
    step = DecodeStep(model, batch, args.prompt, 8, device, False, args.seed)
    step._step()
    sync(device)
    steps = 4
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step._step()
        sync(device)
    gemm_us = other_us = 0.0
    others = []
    for e in prof.key_averages():
        us = e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
        if us <= 0:
            continue
        if "qgemm" in e.key:
            gemm_us += us
        else:
            other_us += us
            others.append((us, e.key))
    # The costliest of the others, per step: what bounds the ratio a faster GEMM can reach.
    top = [{"kernel": key[:120], "ms": us / steps / 1000.0}
           for us, key in sorted(others, reverse=True)[:8]]
    return {"batch": batch, "qgemm_kernels_ms": gemm_us / steps / 1000.0,
            "other_kernels_ms": other_us / steps / 1000.0, "top_other_kernels": top}


def swap_in_linears(model, weights: dict, device: torch.device) -> None:
    """Replaces each module quantize_ put in a linear layer's place by an nn.Linear holding
    `weights[name]` (biases stay zero: the model has none)."""
    for name, layer in qgemm_layers(model):
        if name not in weights:
            continue  # a fused layer inside a SharedInputLinear: its projections are replaced
        linear = torch.nn.Linear(layer.in_features, layer.out_features, bias=False,
                                 device=device, dtype=torch.bfloat16)
        with torch.no_grad():
            linear.weight.copy_(weights[name])
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        setattr(parent, child, linear)


def last_logits(model, prompts: torch.Tensor, batch: int) -> torch.Tensor:
    rows = []
    with torch.no_grad():
        for i in range(0, prompts.shape[0], batch):
            rows.append(model(input_ids=prompts[i:i + batch], use_cache=False).logits[:, -1]
                        .float().cpu())
    return torch.cat(rows)


def write_plot(path: str, report: dict) -> None:
    """Decode tokens/s per batch, BF16 against qgemm, as grouped bars."""
    variants = [v["name"] for v in report["variants"]]
    batches = [d["batch"] for d in report["variants"][0]["decode"]]
    best = max(d["tokens_per_s"] for v in report["variants"] for d in v["decode"])
    width, height, left, bottom = 640, 360, 70, 50
    colors = ["#4c78a8", "#f58518", "#54a24b", "#e45756"]
    group = (width - left - 20) / len(batches)
    bar = group * 0.8 / len(variants)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             'font-family="sans-serif" font-size="12">',
             f'<text x="{width / 2}" y="18" text-anchor="middle">{report["title"]}</text>']
    for bi, b in enumerate(batches):
        x0 = left + bi * group + group * 0.1
        parts.append(f'<text x="{x0 + group * 0.4}" y="{height - bottom + 18}" '
                     f'text-anchor="middle">batch {b}</text>')
        for vi, v in enumerate(report["variants"]):
            tps = v["decode"][bi]["tokens_per_s"]
            h = (height - bottom - 40) * tps / best
            x = x0 + vi * bar
            parts.append(f'<rect x="{x:.1f}" y="{height - bottom - h:.1f}" width="{bar:.1f}" '
                         f'height="{h:.1f}" fill="{colors[vi % len(colors)]}"/>')
            parts.append(f'<text x="{x + bar / 2:.1f}" y="{height - bottom - h - 4:.1f}" '
                         f'text-anchor="middle" font-size="10">{tps:.0f}</text>')
    for vi, name in enumerate(variants):
        parts.append(f'<rect x="{left + vi * 160}" y="{height - 18}" width="10" height="10" '
                     f'fill="{colors[vi % len(colors)]}"/><text x="{left + vi * 160 + 14}" '
                     f'y="{height - 9}">{name} (tokens/s)</text>')
    parts.append("</svg>\n")
    with open(path, "w") as f:
        f.write("\n".join(parts))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="llama-3-8b")
    parser.add_argument("--weights", default="int4/g128/bf16", help="qgemm weight format")
    parser.add_argument("--also", action="append", default=[], metavar="WEIGHTS[@ACT]",
                        help="a further quantized variant, measured on the same BF16 model "
                             "rebuilt: e.g. e4m3/channel/fp32@e4m3/token (W8A8 FP8, the layers "
                             "quantize their bf16 input per token)")
    parser.add_argument("--batches", default="1,16,64")
    parser.add_argument("--prompt", type=int, default=512)
    parser.add_argument("--steps", type=int, default=64, help="decode steps timed per repeat")
    parser.add_argument("--prefill", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--accuracy-prompts", type=int, default=64)
    parser.add_argument("--accuracy-length", type=int, default=128)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--eager", action="store_true", help="no CUDA graph for the decode step")
    parser.add_argument("--attention", choices=sorted(ATTENTION), default="sdpa-decode-gqa",
                        help="attention of both models: transformers' SDPA, or SDPA with a "
                             "decode step's query heads grouped by KV head (no repeated KV cache)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", help="JSON report")
    parser.add_argument("--plot", help="SVG of decode tokens/s")
    args = parser.parse_args()

    import qgemm
    import transformers
    from qgemm.torch import quantize_

    device = torch.device(args.device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    batches = [int(b) for b in args.batches.split(",")]
    start = time.perf_counter()
    progress = lambda what: print(f"e2e [{time.perf_counter() - start:6.1f} s]: {what}",  # noqa: E731
                                  file=sys.stderr, flush=True)

    progress(f"building {args.model} in BF16 on {device}")
    register_attention()
    model = build_model(args.model, device, args.seed, args.attention)
    report = {"schema": "qgemm-e2e/1", "command": " ".join(sys.argv),
              "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
              "torch": torch.__version__, "transformers": transformers.__version__,
              "qgemm": qgemm.__version__, "model": args.model, "attention": args.attention,
              "config": MODELS[args.model], "prompt": args.prompt, "steps": args.steps,
              "repeats": args.repeats, "title": f"{args.model}: decode tokens/s", "variants": []}

    def measure(name: str) -> dict:
        v = {"name": name, "decode": [], "prefill_tokens": args.prefill}
        for b in batches:
            progress(f"{name}: decode at batch {b}")
            v["decode"].append(decode_tokens_per_s(model, b, args, device))
        progress(f"{name}: prefill of {args.prefill} tokens")
        v["prefill_ms"] = prefill_ms(model, args, device)
        return v

    g = torch.Generator(device="cpu").manual_seed(args.seed + 100)
    prompts = torch.randint(0, model.config.vocab_size,
                            (args.accuracy_prompts, args.accuracy_length), generator=g).to(device)
    report["variants"].append(measure("bf16"))

    skip = ["lm_head"]
    # The most rows a layer sees: the decode prompts' prefill, the long prefill, the accuracy
    # batches.
    max_tokens = max(args.prefill, max(batches) * args.prompt, 16 * args.accuracy_length)
    for index, variant in enumerate([args.weights] + args.also):
        weights, _, act = variant.partition("@")
        if index > 0:
            progress(f"rebuilding {args.model} in BF16 (the same weights)")
            del model
            gc.collect()
            if device.type == "cuda":
                torch.cuda.empty_cache()
            model = build_model(args.model, device, args.seed, args.attention)
        progress(f"reference weights for {weights}: each layer quantized and dequantized on the "
                 "host")
        references = quantized_references(model, weights, skip)
        name = f"qgemm {weights}" + (f" x {act}" if act else "")
        progress(f"quantize_ to {name}")
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
            before = torch.cuda.memory_allocated(device)
        t0 = time.perf_counter()
        quantize_(model, weights, skip=skip, max_tokens=max_tokens, act=act or None)
        quantize_s = time.perf_counter() - t0
        quantized = measure(name)
        quantized["quantize_s"] = quantize_s
        if device.type == "cuda":
            quantized["quantize_peak_gb"] = torch.cuda.max_memory_allocated(device) / 1e9
            quantized["bf16_model_gb"] = before / 1e9
            try:
                quantized["decode_split"] = [decode_split(model, b, args, device) for b in batches]
            except Exception as e:  # the profiler is a diagnostic: report, do not fail the run
                quantized["decode_split"] = f"not measured: {e}"
        progress(f"accuracy: {name} against its dequantized weights in BF16")
        got = last_logits(model, prompts, batch=16)
        swap_in_linears(model, references, device)
        want = last_logits(model, prompts, batch=16)
        cos = torch.nn.functional.cosine_similarity(got, want, dim=-1)
        quantized["accuracy"] = {
            "prompts": args.accuracy_prompts, "length": args.accuracy_length,
            "cosine_min": cos.min().item(), "cosine_mean": cos.mean().item(),
            "top1_agreement": (got.argmax(-1) == want.argmax(-1)).float().mean().item()}
        report["variants"].append(quantized)
    # The first quantized variant's, where readers of qgemm-e2e/1 look.
    report["accuracy"] = report["variants"][1]["accuracy"]

    base = {d["batch"]: d["tokens_per_s"] for d in report["variants"][0]["decode"]}
    for v in report["variants"][1:]:
        for d in v["decode"]:
            d["vs_bf16"] = d["tokens_per_s"] / base[d["batch"]]
        v["prefill_vs_bf16"] = v["prefill_ms"] / report["variants"][0]["prefill_ms"]
    for v in report["variants"]:
        cells = ", ".join(f"b{d['batch']} {d['tokens_per_s']:.0f} tok/s" for d in v["decode"])
        print(f"{v['name']:24s} decode {cells}; prefill {v['prefill_ms']:.1f} ms")
        if "accuracy" in v:
            a = v["accuracy"]
            print(f"{'':24s} accuracy: cosine min {a['cosine_min']:.5f} mean "
                  f"{a['cosine_mean']:.5f}, top-1 agreement {a['top1_agreement']:.3f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    if args.plot:
        write_plot(args.plot, report)
    return 0 if all(math.isfinite(v["accuracy"]["cosine_min"]) for v in report["variants"][1:]) \
        else 1


if __name__ == "__main__":
    sys.exit(main())
