"""qgemm: quantized GEMMs for LLM inference on NVIDIA GPUs.

Formats are specs (``WeightFormat("int4/g128/bf16")``, ``ActFormat("e4m3/token")``); weights are
quantized on the host (``quantize_weights``) into the canonical layout; a ``Linear`` layer runs
them on a GPU (device arrays: ``qgemm.torch``, or any object with ``__cuda_array_interface__``)
or on the host (NumPy arrays, ``device=-1``); ``MoE`` is a fused mixture-of-experts layer over two expert stacks.
``reference_gemm`` is the exact CPU reference.

Errors are Python exceptions carrying the library's message: ``ValueError`` for bad arguments,
``qgemm.UnsupportedError`` (a ``NotImplementedError``) for valid requests no backend runs,
``qgemm.OutOfMemoryError`` (a ``MemoryError``) and ``qgemm.Error`` (a ``RuntimeError``).
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as _np

from ._qgemm import (
    ActFormat,
    Error,
    OutOfMemoryError,
    QuantizedActivations,
    QuantizedWeight,
    UnsupportedError,
    WeightFormat,
    __version__,
    device_count,
    no_gpu_reason,
    reference_gemm as _reference_gemm,
)
from ._qgemm import Linear as _Linear
from ._qgemm import MoE as _MoE
from ._qgemm import _Checkpoint
from ._qgemm import quantize_activations as _quantize_activations
from ._qgemm import quantize_weights as _quantize_weights

__all__ = [
    "ActFormat",
    "Checkpoint",
    "Error",
    "ImportedLayer",
    "Linear",
    "MoE",
    "OutOfMemoryError",
    "QuantizedActivations",
    "QuantizedWeight",
    "UnsupportedError",
    "WeightFormat",
    "__version__",
    "device_count",
    "load_checkpoint",
    "no_gpu_reason",
    "quantize_activations",
    "quantize_weights",
    "reference_gemm",
]


def _floats(array, what: str) -> _np.ndarray:
    a = _np.asarray(array)
    if not _np.issubdtype(a.dtype, _np.floating):
        raise ValueError(f"{what}: expected floating-point values, got dtype {a.dtype}")
    return _np.ascontiguousarray(a, dtype=_np.float32)


def _weight_format(spec) -> WeightFormat:
    return spec if isinstance(spec, WeightFormat) else WeightFormat(str(spec))


def _act_format(spec) -> ActFormat:
    return spec if isinstance(spec, ActFormat) else ActFormat(str(spec))


def quantize_weights(weights, format) -> QuantizedWeight:
    """Quantizes weights [N, K] (or an expert stack [E, N, K]) into ``format`` (a spec or a
    WeightFormat). Any floating-point array-like; the values are read as float32."""
    return _quantize_weights(_floats(weights, "quantize_weights"), _weight_format(format))


def quantize_activations(activations, format) -> QuantizedActivations:
    """Quantizes activations [M, K] into ``format`` (fp16/bf16 formats just round)."""
    return _quantize_activations(_floats(activations, "quantize_activations"), _act_format(format))


def reference_gemm(a: QuantizedActivations, w: QuantizedWeight, bias=None) -> _np.ndarray:
    """The CPU reference, float64 [M, N] = a . w^T (+ bias), from the exact quantized operands."""
    return _reference_gemm(a, w, None if bias is None else _floats(bias, "reference_gemm bias"))


class ImportedLayer(NamedTuple):
    """A checkpoint layer as read: ``weight`` (QuantizedWeight), ``bias`` (float32 [N] or
    [experts, N], or None), ``k_order`` (int32 [K] or None) and ``interleaved_gate_up``.

    An act-order layer stores K in ``k_order``'s order: stored column c is input feature
    ``k_order[c]``, so it runs on ``x[:, k_order]``, or on ``x`` given ``Linear(...,
    k_order=k_order)``. ``interleaved_gate_up``: the rows alternate
    gate (even) and up (odd) projections, as gpt-oss stores its experts."""

    weight: QuantizedWeight
    bias: Optional[_np.ndarray]
    k_order: Optional[_np.ndarray]
    interleaved_gate_up: bool


class Checkpoint:
    """A quantized checkpoint directory (config.json and safetensors files), read layer by
    layer: ``kind``, ``layers`` (names), ``checkpoint[name]`` -> ImportedLayer."""

    def __init__(self, path):
        self._c = _Checkpoint.open(str(path))

    @property
    def kind(self) -> str:
        return self._c.kind

    @property
    def layers(self) -> list:
        return list(self._c.layers)

    def __len__(self) -> int:
        return len(self._c.layers)

    def __iter__(self):
        return iter(self._c.layers)

    def __getitem__(self, name: str) -> ImportedLayer:
        if name not in self._c.layers:
            raise KeyError(f"the checkpoint has no quantized layer '{name}'")
        return ImportedLayer(*self._c.import_layer(name))

    def __repr__(self) -> str:
        return f"qgemm.Checkpoint({self.kind}, {len(self)} layers)"


def load_checkpoint(path) -> Checkpoint:
    """Opens a quantized checkpoint (GPTQ, AWQ, FP8, compressed-tensors pack- and
    float-quantized, ModelOpt NVFP4, gpt-oss MXFP4 experts). Layers are read when indexed, one
    at a time, so host memory stays near one layer."""
    return Checkpoint(path)


class MoE(_MoE):
    """A fused mixture-of-experts layer over expert stacks ``w13`` [E, 2 I, H] (gate and up
    projections) and ``w2`` [E, H, I]: top-k routing, the two grouped GEMMs, the gated
    activation and the weighted sum back to token order.

    ``MoE(w13, w2, top_k=2, act="bf16", backend="auto", device=None, scoring="softmax",
    renormalize=True, groups=1, top_groups=1, routed_scale=1.0, activation="silu",
    interleaved_gate_up=False, swiglu_alpha=1.702, swiglu_limit=7.0)``: ``scoring`` softmax or
    sigmoid (DeepSeek-V3, with ``groups``/``top_groups`` for grouped top-k and a correction bias
    at call time); ``activation`` silu, gelu or swiglu_clamp (gpt-oss). With ``device=None`` the
    layer goes to GPU 0 when there is one and the backend is not "cpu", else to the host.

    Call ``prepare(max_tokens)`` once, then call the layer on the host with tokens [T, H] and
    router logits [T, E] (or ``topk_ids``/``topk_weights`` [T, top_k]); the result is float32
    [T, H]. On a GPU, ``run()`` takes integer device pointers on a stream.
    """

    def __init__(self, w13: QuantizedWeight, w2: QuantizedWeight, top_k=2, act="bf16",
                 backend="auto", device=None, scoring="softmax", renormalize=True, groups=1,
                 top_groups=1, routed_scale=1.0, activation="silu", interleaved_gate_up=False,
                 swiglu_alpha=1.702, swiglu_limit=7.0):
        if device is None:
            device = 0 if backend != "cpu" and device_count() > 0 else -1
        super().__init__(w13, w2, int(top_k), str(act), str(backend), int(device), str(scoring),
                         bool(renormalize), int(groups), int(top_groups), float(routed_scale),
                         str(activation), bool(interleaved_gate_up), float(swiglu_alpha),
                         float(swiglu_limit))

    def __call__(self, x, router_logits=None, correction_bias=None, topk_ids=None,
                 topk_weights=None):
        if self.device >= 0:
            raise ValueError("MoE on a GPU: call run() with device pointers (this layer lives "
                             f"on GPU {self.device}); build it with device=-1 for NumPy arrays")
        ids = None if topk_ids is None else _np.ascontiguousarray(topk_ids, dtype=_np.int32)
        return self.run_host(
            _floats(x, "MoE"),
            None if router_logits is None else _floats(router_logits, "MoE router_logits"),
            None if correction_bias is None else _floats(correction_bias, "MoE correction_bias"),
            ids,
            None if topk_weights is None else _floats(topk_weights, "MoE topk_weights"))

    def __repr__(self) -> str:
        return (f"qgemm.MoE(E={self.experts}, H={self.hidden}, I={self.intermediate}, "
                f"top_k={self.top_k}, backend={self.backend}, device={self.device})")


class Linear(_Linear):
    """A quantized linear layer, ``C = A . W^T (+ bias)``.

    ``Linear(weight, act="bf16", out="bf16", backend="auto", device=None, k_order=None,
    input="bf16")``: ``weight`` is a QuantizedWeight; ``act`` the activation format the layer
    multiplies; ``out`` bf16, fp16 or fp32; ``backend`` auto, jit, qdq or cpu; ``device`` a GPU
    ordinal, or -1 for host memory. With ``device=None`` the layer goes to GPU 0 when there is
    one and the backend is not "cpu", else to the host. ``k_order`` (an act-order checkpoint
    layer's): the layer takes activations in the model's order and gathers their columns into
    the weight's order itself. With quantized ``act`` (``e4m3/token``, ``int8/token``, ...) a
    call without scales takes 16-bit activations of type ``input`` (bf16 or fp16) and the layer
    quantizes them itself.

    Call ``prepare(max_tokens)`` once (it compiles the kernels), then call the layer:
    on the host with a float32-convertible array [M, K] (the result is float32 [M, N]); on a GPU
    with device arrays that expose ``__cuda_array_interface__`` (``qgemm.torch`` wraps torch
    tensors), or through ``run()`` with integer pointers.
    """

    def __init__(self, weight: QuantizedWeight, act="bf16", out="bf16", backend="auto",
                 device=None, tuning_table="", k_order=None, input="bf16"):
        if device is None:
            device = 0 if backend != "cpu" and device_count() > 0 else -1
        if k_order is not None:
            k_order = _np.ascontiguousarray(k_order, dtype=_np.int32)
        super().__init__(weight, str(act), str(out), str(backend), int(device), str(tuning_table),
                         k_order, str(input))

    def __call__(self, a, bias=None, out=None, stream=0):
        if self.device < 0:
            return self.run_host(_floats(a, "Linear"),
                                 None if bias is None else _floats(bias, "Linear bias"))
        return self._run_cuda_arrays(a, bias, out, stream)

    def __repr__(self) -> str:
        return (f"qgemm.Linear(N={self.n}, K={self.k}, act={self.act}, out={self.out}, "
                f"backend={self.backend}, device={self.device})")

    def _run_cuda_arrays(self, a, bias, out, stream):
        """A GPU call on arrays that expose __cuda_array_interface__ (C-contiguous). `out` must
        be given: [M, N] in the layer's output type."""
        a_ptr, a_shape = _device_array(a, "a")
        if out is None:
            raise ValueError("Linear on a GPU: pass out=, a device array [M, N] of the output "
                             "type (qgemm.torch allocates it for torch tensors)")
        c_ptr, c_shape = _device_array(out, "out")
        if len(a_shape) != 2 or a_shape[1] != self.k:
            raise ValueError(f"Linear: activations must be [M, K={self.k}], got {a_shape}")
        if tuple(c_shape) != (a_shape[0], self.n):
            raise ValueError(f"Linear: out must be [{a_shape[0]}, {self.n}], got {c_shape}")
        bias_ptr = _device_array(bias, "bias")[0] if bias is not None else 0
        m = a_shape[0]
        if self.workspace_bytes(m) > 0:
            raise ValueError("Linear: this call needs a workspace; use qgemm.torch, which "
                             "allocates it, or run() with a workspace pointer")
        self.run(m, a_ptr, c_ptr, bias=bias_ptr, stream=stream)
        return out


def _device_array(array, what: str):
    iface = getattr(array, "__cuda_array_interface__", None)
    if iface is None:
        raise ValueError(f"Linear on a GPU: '{what}' must be a device array "
                         "(__cuda_array_interface__)")
    if iface.get("strides") not in (None, ()):
        raise ValueError(f"Linear: '{what}' must be C-contiguous")
    return int(iface["data"][0]), tuple(iface["shape"])
