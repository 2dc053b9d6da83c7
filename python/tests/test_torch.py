"""qgemm.torch: the custom op, its fake implementation under torch.compile, QuantizedLinear and
quantize_. Host layers run wherever torch is installed; GPU tests need CUDA. Skips without torch
(CI installs no torch: PyPI's wheel is the multi-GB CUDA build)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")
import qgemm  # noqa: E402
import qgemm.torch as qt  # noqa: E402

gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device for torch")


def expected(x, layer, bias=None):
    """x . W^T (+ bias) from the layer's exact weights, in float64."""
    a = qgemm.quantize_activations(x.float().numpy(), "bf16").dequantize().astype(np.float64)
    w = layer.weight_values.astype(np.float64)
    y = a @ w.T
    return y if bias is None else y + bias.detach().float().numpy()


def host_module(n=48, k=256, bias=True, seed=0):
    g = torch.Generator().manual_seed(seed)
    lin = torch.nn.Linear(k, n, bias=bias).to(torch.bfloat16)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(n, k, generator=g) * 0.05)
    ref = qgemm.quantize_weights(lin.weight.detach().float().numpy(), "int4/g128/bf16").dequantize()
    module = qt.QuantizedLinear.from_linear(lin, "int4/g128/bf16", max_tokens=64)
    module.weight_values = ref
    return lin, module


def test_host_module_matches_the_exact_weights():
    lin, module = host_module()
    x = torch.randn(3, 5, 256).to(torch.bfloat16)
    y = module(x)
    assert y.shape == (3, 5, 48) and y.dtype == torch.bfloat16
    want = expected(x.reshape(-1, 256), module, lin.bias).reshape(3, 5, 48)
    rel = np.linalg.norm(y.float().numpy() - want) / np.linalg.norm(want)
    assert rel < 5e-3


def test_fake_implementation_agrees_with_the_op():
    _, module = host_module(bias=False)
    x = torch.randn(7, 256).to(torch.bfloat16)
    torch.library.opcheck(torch.ops.qgemm.linear.default, (x, module.handle, None))


def test_compiles_without_graph_breaks():
    _, module = host_module(bias=True)
    x = torch.randn(4, 256).to(torch.bfloat16)
    compiled = torch.compile(module, fullgraph=True, backend="eager")
    torch.testing.assert_close(compiled(x), module(x), rtol=0, atol=0)


def test_quantize_swaps_linear_layers_and_skips():
    model = torch.nn.Sequential()
    model.add_module("up", torch.nn.Linear(256, 128, dtype=torch.bfloat16))
    model.add_module("lm_head", torch.nn.Linear(128, 64, dtype=torch.bfloat16))
    model.to("cpu")
    qt.quantize_(model, "int4/g128/bf16", skip=["lm_head"], max_tokens=16)
    assert isinstance(model.up, qt.QuantizedLinear)
    assert isinstance(model.lm_head, torch.nn.Linear)
    assert model(torch.randn(2, 256).to(torch.bfloat16)).shape == (2, 64)


class Attention(torch.nn.Module):
    """q/k/v projections of one input, as Hugging Face decoder layers have them."""

    def __init__(self, k=256, bias=False):
        super().__init__()
        self.q_proj = torch.nn.Linear(k, 128, bias=bias, dtype=torch.bfloat16)
        self.k_proj = torch.nn.Linear(k, 64, bias=bias, dtype=torch.bfloat16)
        self.v_proj = torch.nn.Linear(k, 64, bias=False, dtype=torch.bfloat16)
        self.o_proj = torch.nn.Linear(128, k, bias=False, dtype=torch.bfloat16)

    def forward(self, x):
        return self.o_proj(self.q_proj(x)) + self.k_proj(x).sum(-1, keepdim=True) \
            * self.v_proj(x).mean(-1, keepdim=True)


def test_quantize_fuses_projections_of_one_input():
    torch.manual_seed(3)
    fused, separate = Attention(bias=True), Attention(bias=True)
    separate.load_state_dict(fused.state_dict())
    qt.quantize_(fused, "int4/g128/bf16", max_tokens=16)
    qt.quantize_(separate, "int4/g128/bf16", max_tokens=16, fuse=())
    assert isinstance(fused.q_proj_k_proj_v_proj, qt.SharedInputLinear)
    assert isinstance(fused.k_proj, qt.ProjectionOf) and fused.k_proj.out_features == 64
    assert isinstance(fused.o_proj, qt.QuantizedLinear)
    assert isinstance(separate.q_proj, qt.QuantizedLinear)
    x = torch.randn(3, 256).to(torch.bfloat16)
    # Rows quantize independently and the host backend rounds each output alike: equal bits.
    assert torch.equal(fused(x), separate(x))
    # A projection called alone, on another input, computes it afresh.
    y = torch.randn(2, 256).to(torch.bfloat16)
    assert torch.equal(fused.v_proj(y), separate.v_proj(y))
    assert torch.equal(fused.q_proj(x), separate.q_proj(x))


def test_quantize_keeps_a_group_with_a_skipped_member_separate():
    model = Attention()
    qt.quantize_(model, "int4/g128/bf16", skip=["lm_head", "v_proj"], max_tokens=16)
    assert isinstance(model.q_proj, qt.QuantizedLinear)
    assert isinstance(model.v_proj, torch.nn.Linear)


def test_wrong_width_names_both_sizes():
    _, module = host_module()
    with pytest.raises(ValueError, match="128.*256"):
        module(torch.randn(2, 128).to(torch.bfloat16))


def fp8_module(seed=3):
    """W8A8 FP8: e4m3 weights per channel, the bf16 input quantized per token by the layer."""
    g = torch.Generator().manual_seed(seed)
    lin = torch.nn.Linear(256, 48, bias=False).to(torch.bfloat16)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(48, 256, generator=g) * 0.05)
    module = qt.QuantizedLinear.from_linear(lin, "e4m3/channel/fp32", act="e4m3/token",
                                            max_tokens=16)
    return lin, module


def expected_fp8(x, lin):
    a = qgemm.quantize_activations(x.float().numpy(), "e4m3/token").dequantize()
    w = qgemm.quantize_weights(lin.weight.detach().float().cpu().numpy(), "e4m3/channel/fp32")
    return a.astype(np.float64) @ w.dequantize().astype(np.float64).T


def test_host_module_with_fp8_activations_quantizes_its_bf16_input():
    lin, module = fp8_module()
    assert module.layer.act.is_quantized and module.layer.input == "bf16"
    assert module.layer.out == "bf16"
    x = torch.randn(5, 256).to(torch.bfloat16)
    y = module(x)
    assert y.shape == (5, 48) and y.dtype == torch.bfloat16
    want = expected_fp8(x, lin)
    assert np.linalg.norm(y.float().numpy() - want) / np.linalg.norm(want) < 5e-3


def test_quantize_with_fp8_activations_fuses_and_runs():
    torch.manual_seed(4)
    model = Attention()
    x = torch.randn(3, 256).to(torch.bfloat16)
    qt.quantize_(model, "e4m3/channel/fp32", act="e4m3/token", max_tokens=16)
    assert isinstance(model.q_proj, qt.ProjectionOf)
    assert model.q_proj_k_proj_v_proj.fused.layer.act.is_quantized
    assert model.o_proj.layer.act.is_quantized and model.o_proj.layer.input == "bf16"
    y = model(x)
    assert y.shape == (3, 256) and bool(torch.isfinite(y.float()).all())


@gpu
def test_gpu_fp8_module_matches_the_host_rule_and_checks_its_input_type():
    lin, _ = fp8_module()
    cuda = qt.QuantizedLinear.from_linear(lin.cuda(), "e4m3/channel/fp32", act="e4m3/token",
                                          max_tokens=16)
    x = torch.randn(9, 256).to(torch.bfloat16)
    got = cuda(x.cuda()).cpu().float().numpy()
    want = expected_fp8(x, lin)
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 5e-3
    with pytest.raises(ValueError, match="bf16 input"):
        cuda(x.cuda().to(torch.float16))


@gpu
def test_gpu_module_matches_the_host_module():
    lin, host = host_module()
    cuda = qt.QuantizedLinear.from_linear(lin.cuda(), "int4/g128/bf16", max_tokens=64)
    x = torch.randn(9, 256).to(torch.bfloat16)
    got = cuda(x.cuda()).cpu().float().numpy()
    want = expected(x, host, lin.bias.cpu())
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 5e-3


@gpu
def test_gpu_module_replays_in_a_cuda_graph():
    lin, _ = host_module()
    module = qt.QuantizedLinear.from_linear(lin.cuda(), "int4/g128/bf16", max_tokens=64)
    x = torch.randn(16, 256, device="cuda").to(torch.bfloat16)
    eager = module(x)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = module(x)
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(captured, eager, rtol=0, atol=0)


def test_act_order_checkpoint_layer_gathers_its_input(tmp_path):
    from test_qgemm import gptq_checkpoint
    layer = qgemm.load_checkpoint(gptq_checkpoint(tmp_path))["l"]
    module = qt.QuantizedLinear.from_imported(layer, out="fp32", device="cpu", max_tokens=8)
    x = torch.randn(4, 32).to(torch.bfloat16)
    w = np.empty((8, 32))
    w[:, layer.k_order] = layer.weight.dequantize()
    want = x.double().numpy() @ w.T + layer.bias
    np.testing.assert_allclose(module(x).double().numpy(), want, rtol=1e-5, atol=1e-5)
