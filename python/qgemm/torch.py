"""qgemm.torch: qgemm layers as PyTorch ops and modules.

``torch.ops.qgemm.linear(x, handle, bias)`` is a custom op (``torch.library``) with a fake
implementation, so ``torch.compile`` traces it without a graph break and CUDA-graph capture
replays it (the layer's kernels are compiled before, in ``prepare``; the call itself neither
compiles nor allocates outside PyTorch's caching allocator). ``QuantizedLinear`` is the module,
``quantize_(model, "int4/g128/bf16")`` swaps a model's ``nn.Linear`` layers for it in place.

Layers live on the GPU of their weights (CUDA tensors: the jit backend) or on the host (CPU
tensors: the CPU reference backend). Custom ops take tensors and numbers, not Python objects, so
a layer is named by an integer handle into a registry that the module keeps alive.
"""

from __future__ import annotations

import fnmatch
import itertools
import weakref
from typing import Iterable, Optional

import numpy as np
import torch

from . import Linear, quantize_weights

__all__ = ["QuantizedLinear", "SharedInputLinear", "ProjectionOf", "quantize_", "linear"]

_OUT_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
_ACT_OF_DTYPE = {torch.bfloat16: "bf16", torch.float16: "fp16"}

_layers: dict[int, Linear] = {}
_next_handle = itertools.count(1)


def _register(layer: Linear) -> int:
    handle = next(_next_handle)
    _layers[handle] = layer
    return handle


def _layer(handle: int) -> Linear:
    try:
        return _layers[handle]
    except KeyError:
        raise ValueError(f"qgemm.torch: no layer with handle {handle} (its module was freed)")


@torch.library.custom_op("qgemm::linear", mutates_args=())
def linear(x: torch.Tensor, handle: int, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """y[..., N] = x[..., K] . W^T (+ bias) with the qgemm layer `handle`."""
    layer = _layer(handle)
    if x.shape[-1] != layer.k:
        raise ValueError(f"qgemm.linear: the input's last dimension is {x.shape[-1]}, "
                         f"the layer's K is {layer.k}")
    rows = x.reshape(-1, layer.k)
    m = rows.shape[0]
    out_dtype = _OUT_DTYPES[layer.out]
    if layer.device < 0:
        if x.device.type != "cpu":
            raise ValueError("qgemm.linear: a host layer takes CPU tensors")
        b = None if bias is None else bias.detach().float().numpy()
        y = torch.from_numpy(layer.run_host(rows.detach().float().numpy(), b))
        return y.to(out_dtype).reshape(*x.shape[:-1], layer.n)
    if x.device.type != "cuda" or x.device.index != layer.device:
        raise ValueError(f"qgemm.linear: the layer lives on cuda:{layer.device}, the input on "
                         f"{x.device}")
    # Quantized activations arrive as 16-bit values of the layer's input type; it quantizes them.
    takes = _OUT_DTYPES[layer.input] if layer.act.is_quantized else _OUT_DTYPES.get(layer.act.spec)
    if takes is not None and x.dtype != takes:
        what = f"{layer.input} input (quantized to {layer.act})" if layer.act.is_quantized else \
            f"{layer.act} activations"
        raise ValueError(f"qgemm.linear: the layer takes {what}, got {x.dtype}")
    rows = rows.contiguous()
    y = torch.empty((m, layer.n), dtype=out_dtype, device=x.device)
    workspace_bytes = layer.workspace_bytes(m)
    workspace = torch.empty(workspace_bytes, dtype=torch.uint8, device=x.device)
    bias_ptr = 0
    if bias is not None:
        bias = bias.to(dtype=out_dtype).contiguous()
        bias_ptr = bias.data_ptr()
    stream = torch.cuda.current_stream(x.device).cuda_stream
    layer.run(m, rows.data_ptr(), y.data_ptr(), bias=bias_ptr,
              workspace=workspace.data_ptr() if workspace_bytes else 0,
              workspace_bytes=workspace_bytes, stream=stream)
    return y.reshape(*x.shape[:-1], layer.n)


@linear.register_fake
def _linear_fake(x: torch.Tensor, handle: int, bias: Optional[torch.Tensor] = None):
    layer = _layer(handle)
    return x.new_empty((*x.shape[:-1], layer.n), dtype=_OUT_DTYPES[layer.out])


class QuantizedLinear(torch.nn.Module):
    """A linear layer whose weights qgemm holds, quantized.

    Build it with ``QuantizedLinear.from_linear(nn_linear, "int4/g128/bf16")`` or from a
    ``qgemm.QuantizedWeight``. ``max_tokens`` is the most rows a call may have: the kernels for
    all of them are compiled here, so calls (and graph captures) never compile.
    """

    def __init__(self, weight, *, act: str = "bf16", out: str = "bf16",
                 bias: Optional[torch.Tensor] = None, device: Optional[torch.device] = None,
                 max_tokens: int = 4096, backend: str = "auto",
                 k_order: Optional[torch.Tensor] = None, input: Optional[str] = None):
        super().__init__()
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        device = torch.device(device)
        if device.type == "cuda" and device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        ordinal = device.index if device.type == "cuda" else -1
        # Act-order layers store K permuted: the layer gathers the input's columns itself.
        if k_order is not None:
            k_order = np.ascontiguousarray(torch.as_tensor(k_order).cpu().numpy(), dtype=np.int32)
        # Quantized activations: the module takes 16-bit tensors (of `input`, by default the
        # output's type when that is 16-bit) and the layer quantizes them.
        if input is None:
            input = out if out in ("bf16", "fp16") else "bf16"
        self.layer = Linear(weight, act=act, out=out, backend=backend, device=ordinal,
                            k_order=k_order, input=input)
        self.layer.prepare(max_tokens)
        self.in_features, self.out_features = self.layer.k, self.layer.n
        self.max_tokens = max_tokens
        self.handle = _register(self.layer)
        weakref.finalize(self, _layers.pop, self.handle, None)
        if bias is not None:
            bias = bias.detach().to(device=device, dtype=_OUT_DTYPES[out])
        self.register_buffer("bias", bias)

    @classmethod
    def from_linear(cls, linear: torch.nn.Linear, weight_format: str, *, act: Optional[str] = None,
                    max_tokens: int = 4096, backend: str = "auto") -> "QuantizedLinear":
        """Quantizes an ``nn.Linear``; input and output keep its dtype (bf16 or fp16). ``act``:
        the activation format the layer multiplies, by default that dtype; a quantized one
        (``"e4m3/token"``: W8A8 FP8 with ``"e4m3/channel/fp32"`` weights, ``"int8/token"``, ...)
        is computed from the 16-bit input by the layer on every call."""
        w = linear.weight.detach()
        if w.dtype not in _ACT_OF_DTYPE and act not in _ACT_OF_DTYPE.values():
            raise ValueError(f"QuantizedLinear: weights of {w.dtype}; pass act= "
                             "('bf16' or 'fp16') for the activations")
        dtype = _ACT_OF_DTYPE.get(w.dtype, act)
        if act is None:
            act = dtype
        out = act if act in ("bf16", "fp16") else dtype
        q = quantize_weights(w.float().cpu().numpy(), weight_format)
        return cls(q, act=act, out=out, bias=linear.bias, device=w.device,
                   max_tokens=max_tokens, backend=backend, input=dtype)

    @classmethod
    def from_imported(cls, layer, *, act: str = "bf16", out: str = "bf16",
                      device: Optional[torch.device] = None, max_tokens: int = 4096,
                      backend: str = "auto") -> "QuantizedLinear":
        """A layer read by ``qgemm.load_checkpoint`` (an ImportedLayer), act-order included."""
        if layer.weight.experts != 1:
            raise ValueError("QuantizedLinear: an expert stack is not a linear layer")
        bias = None if layer.bias is None else torch.from_numpy(layer.bias)
        k_order = None if layer.k_order is None else torch.from_numpy(layer.k_order)
        return cls(layer.weight, act=act, out=out, bias=bias, device=device,
                   max_tokens=max_tokens, backend=backend, k_order=k_order)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.qgemm.linear(x, self.handle, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"backend={self.layer.backend}, act={self.layer.act}, out={self.layer.out}")


class SharedInputLinear(torch.nn.Module):
    """Projections of one input (q/k/v, gate/up) as one qgemm layer: their weights stacked along
    N, computed by the first projection called and sliced for each (``ProjectionOf``). A call
    with another input recomputes, so a model that calls them separately stays correct."""

    def __init__(self, fused: QuantizedLinear, widths: list[int]):
        super().__init__()
        self.fused = fused
        self.bounds = list(itertools.accumulate([0] + widths))
        self._x: Optional[torch.Tensor] = None
        self._y: Optional[torch.Tensor] = None
        self._left = 0

    def projection(self, index: int, x: torch.Tensor) -> torch.Tensor:
        if self._left == 0 or x is not self._x:
            self._x, self._y, self._left = x, self.fused(x), len(self.bounds) - 1
        y = self._y[..., self.bounds[index]:self.bounds[index + 1]]
        self._left -= 1
        if self._left == 0:
            self._x = self._y = None  # every projection has its slice: drop the references
        return y


class ProjectionOf(torch.nn.Module):
    """Projection ``index`` of a SharedInputLinear, where the nn.Linear it replaces was."""

    def __init__(self, shared: SharedInputLinear, index: int):
        super().__init__()
        # NOTE: a plain attribute, not a submodule: the shared layer is registered once, on the
        # parent, so its weights are not counted once per projection.
        object.__setattr__(self, "shared", shared)
        self.index = index
        self.in_features = shared.fused.in_features
        self.out_features = shared.bounds[index + 1] - shared.bounds[index]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.shared.projection(self.index, x)

    def extra_repr(self) -> str:
        return f"projection {self.index} of a shared-input qgemm layer, out={self.out_features}"


#: Sibling projections of one input in Hugging Face decoder layers (Llama, Mistral, Qwen, ...).
SHARED_INPUT_GROUPS = (("q_proj", "k_proj", "v_proj"), ("gate_proj", "up_proj"))


def _fused_linear(members: list[torch.nn.Linear], weight_format: str, act: Optional[str],
                  max_tokens: int, backend: str) -> QuantizedLinear:
    """One QuantizedLinear over the members' weights stacked along N (and their biases)."""
    weight = torch.cat([m.weight.detach() for m in members])
    biases = [m.bias for m in members]
    bias = None
    if any(b is not None for b in biases):
        bias = torch.cat([b.detach() if b is not None else
                          torch.zeros(m.out_features, dtype=weight.dtype, device=weight.device)
                          for b, m in zip(biases, members)])
    stacked = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None,
                              device="meta")
    stacked.weight = torch.nn.Parameter(weight, requires_grad=False)
    if bias is not None:
        stacked.bias = torch.nn.Parameter(bias, requires_grad=False)
    return QuantizedLinear.from_linear(stacked, weight_format, act=act, max_tokens=max_tokens,
                                       backend=backend)


def quantize_(model: torch.nn.Module, weight_format: str, *, skip: Iterable[str] = ("lm_head",),
              max_tokens: int = 4096, backend: str = "auto",
              fuse: Iterable[Iterable[str]] = SHARED_INPUT_GROUPS,
              act: Optional[str] = None) -> torch.nn.Module:
    """Replaces every ``nn.Linear`` of ``model`` whose qualified name matches none of the
    ``skip`` patterns (fnmatch, e.g. ``"*.mlp.down_proj"``) with a ``QuantizedLinear``, in
    place, one layer at a time: each original weight is released as soon as its layer is
    built, so peak memory stays near the model plus one layer. Sibling projections of one input
    named as a ``fuse`` group (by default q/k/v and gate/up) become one layer of their stacked
    weights (a ``SharedInputLinear``, each projection a ``ProjectionOf`` slice of it), when
    all of them are linear layers of one input width, the same dtype and device, not skipped.
    The stacked weight quantizes as the separate ones do for group and channel scales (rows
    are independent); a per-tensor or global scale covers the stack. ``fuse=()`` keeps every
    layer separate. ``act`` is every layer's activation format (``QuantizedLinear.from_linear``:
    by default the model's dtype; ``"e4m3/token"`` with ``"e4m3/channel/fp32"`` weights is
    W8A8 FP8). Returns the model."""
    skip = list(skip)
    groups = [tuple(g) for g in fuse]

    def skipped(name: str) -> bool:
        return any(fnmatch.fnmatch(name, p) or name.split(".")[-1] == p for p in skip)

    names = [name for name, module in model.named_modules()
             if isinstance(module, torch.nn.Linear) and not skipped(name)]
    done = set()
    for name in names:
        if name in done:
            continue
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        group = next((g for g in groups if child in g), None)
        if group is not None:
            members = [getattr(parent, c, None) for c in group]
            member_names = [f"{parent_name}.{c}" if parent_name else c for c in group]
            if (all(isinstance(m, torch.nn.Linear) for m in members)
                    and not any(skipped(n) for n in member_names)
                    and len({(m.in_features, m.weight.dtype, m.weight.device)
                             for m in members}) == 1):
                shared = SharedInputLinear(
                    _fused_linear(members, weight_format, act, max_tokens, backend),
                    [m.out_features for m in members])
                parent.add_module("_".join(group), shared)
                for index, c in enumerate(group):
                    setattr(parent, c, ProjectionOf(shared, index))
                done.update(member_names)
                del members
                continue
        original = getattr(parent, child)
        setattr(parent, child, QuantizedLinear.from_linear(original, weight_format, act=act,
                                                           max_tokens=max_tokens,
                                                           backend=backend))
        del original
    return model
