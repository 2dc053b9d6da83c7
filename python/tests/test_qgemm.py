"""The Python package on the CPU: formats, quantization round trips, the reference and host
layers against NumPy, errors. GPU and torch tests skip with a message where those are missing."""

import numpy as np
import pytest

import qgemm


def random(shape, seed, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def bf16_round(x):
    """Rounds float32 values to bf16 (nearest even), kept as float32."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


def test_version_is_the_projects():
    import pathlib
    import re
    cmake = (pathlib.Path(__file__).resolve().parents[2] / "CMakeLists.txt").read_text()
    assert qgemm.__version__ == re.search(r"project\(qgemm VERSION ([0-9.]+)", cmake).group(1)


@pytest.mark.parametrize("spec, canonical, bits", [
    ("int4/g128", "int4/g128/fp16", 4),
    ("int4/g128/bf16", "int4/g128/bf16", 4),
    ("nvfp4", "e2m1/g16/e4m3/global", 4),
    ("int8/channel", "int8/channel/fp16", 8),
    ("e4m3/b128x128/fp32", "e4m3/b128x128/fp32", 8),
])
def test_weight_format_specs(spec, canonical, bits):
    f = qgemm.WeightFormat(spec)
    assert str(f) == canonical and f.spec == canonical
    assert f.bits == bits
    assert qgemm.WeightFormat(canonical) == f
    assert hash(qgemm.WeightFormat(canonical)) == hash(f)
    assert repr(f) == f"WeightFormat('{canonical}')"


def test_weight_format_alias():
    assert qgemm.WeightFormat("e2m1/g16/e4m3/global").alias == "nvfp4"


def test_activation_format_specs():
    assert not qgemm.ActFormat("bf16").is_quantized
    token = qgemm.ActFormat("e4m3/token")
    assert token.is_quantized and str(token) == "e4m3/token"


@pytest.mark.parametrize("spec, named", [
    ("int4/g127x", "'g127x'"), ("int9/g128/bf16", "'int9'"), ("", "empty weight spec"),
    ("nvfp4/zp", "'nvfp4/zp'"),
])
def test_bad_weight_spec_is_a_value_error_naming_it(spec, named):
    with pytest.raises(ValueError) as e:
        qgemm.WeightFormat(spec)
    # The library's message: the bad part, then what specs look like.
    assert named in str(e.value) and "weight specs look like" in str(e.value)


def test_bad_activation_spec_names_the_value():
    with pytest.raises(ValueError, match="e9m9"):
        qgemm.ActFormat("e9m9/token")


@pytest.mark.parametrize("spec, tolerance", [
    ("int8/channel/bf16", 0.01), ("int4/g128/bf16", 0.15), ("nvfp4", 0.2),
    ("uint4/g64/fp16/zp", 0.15), ("e4m3/b128x128/fp32", 0.07),
])
def test_weight_round_trip(spec, tolerance):
    w = random((96, 256), 1, 0.05)
    q = qgemm.quantize_weights(w, spec)
    assert (q.n, q.k, q.experts) == (96, 256, 1)
    back = q.dequantize()
    assert back.shape == w.shape and back.dtype == np.float32
    rel = np.linalg.norm(back - w) / np.linalg.norm(w)
    assert rel < tolerance, f"{spec}: relative error {rel}"
    if not q.format.has_zero_points:
        # Symmetric formats keep each group's largest value, and with it the scale: quantizing
        # what they dequantized to gives the same weights back exactly.
        again = qgemm.quantize_weights(back, spec).dequantize()
        np.testing.assert_array_equal(again, back)


def test_weight_arrays_rebuild_the_same_weight():
    q = qgemm.quantize_weights(random((64, 256), 2, 0.05), "uint4/g128/bf16/zp")
    assert q.codes.shape == (1, 64, 128) and q.codes.dtype == np.uint8
    assert q.scales.shape == (1, 64, 2) and q.zeros.shape == (1, 64, 2)
    assert q.global_scales is None
    r = qgemm.QuantizedWeight.from_arrays(q.format, q.n, q.k, q.codes, q.scales, zeros=q.zeros)
    np.testing.assert_array_equal(r.dequantize(), q.dequantize())


def test_torn_weight_arrays_are_rejected():
    q = qgemm.quantize_weights(random((64, 256), 3, 0.05), "int4/g128/bf16")
    with pytest.raises(ValueError):
        qgemm.QuantizedWeight.from_arrays(q.format, q.n, q.k, q.codes[:, :32], q.scales)


def test_expert_stack_round_trip():
    w = random((3, 32, 128), 4, 0.05)
    q = qgemm.quantize_weights(w, "mxfp4")
    assert q.experts == 3 and q.dequantize().shape == (3, 32, 128)


def test_activation_round_trip_per_token_fp8():
    a = random((5, 256), 5)
    q = qgemm.quantize_activations(a, "e4m3/token")
    assert q.scales.shape == (5,)
    rel = np.linalg.norm(q.dequantize() - a) / np.linalg.norm(a)
    assert rel < 0.05


def test_bf16_activations_round_like_numpy():
    a = random((4, 64), 6)
    np.testing.assert_array_equal(qgemm.quantize_activations(a, "bf16").dequantize(), bf16_round(a))


def test_non_finite_weights_are_rejected():
    w = random((16, 128), 7)
    w[3, 5] = np.nan
    with pytest.raises(ValueError):
        qgemm.quantize_weights(w, "int4/g128/bf16")


def test_integer_arrays_are_rejected_with_their_dtype():
    with pytest.raises(ValueError, match="int64"):
        qgemm.quantize_weights(np.ones((16, 128), dtype=np.int64), "int4/g128/bf16")


def test_reference_matches_numpy_on_the_exact_operands():
    a = qgemm.quantize_activations(random((7, 384), 8), "bf16")
    w = qgemm.quantize_weights(random((40, 384), 9, 0.05), "int4/g128/bf16")
    bias = random((40,), 10)
    expected = a.dequantize().astype(np.float64) @ w.dequantize().astype(np.float64).T + bias
    np.testing.assert_allclose(qgemm.reference_gemm(a, w, bias), expected, rtol=1e-6, atol=1e-6)


def test_reference_rejects_mismatched_k():
    a = qgemm.quantize_activations(random((2, 256), 11), "bf16")
    w = qgemm.quantize_weights(random((8, 384), 12, 0.05), "int4/g128/bf16")
    with pytest.raises(ValueError, match="K"):
        qgemm.reference_gemm(a, w)


@pytest.mark.parametrize("weight, act, out", [
    ("int4/g128/bf16", "bf16", "bf16"),
    ("uint4/g128/fp16/zp", "fp16", "fp32"),
    ("nvfp4", "bf16", "bf16"),
    ("int8/channel/fp32", "e4m3/token", "bf16"),
    ("int4/g128/bf16", "nvfp4", "bf16"),
])
def test_host_linear_matches_numpy(weight, act, out):
    m, n, k = 9, 48, 256
    x = random((m, k), 13)
    w = qgemm.quantize_weights(random((n, k), 14, 0.05), weight)
    bias = random((n,), 15)
    layer = qgemm.Linear(w, act=act, out=out, backend="cpu", device=-1)
    assert (layer.backend, layer.n, layer.k, layer.device) == ("cpu", n, k, -1)
    layer.prepare(m)
    got = layer(x, bias=bias)
    assert got.shape == (m, n) and got.dtype == np.float32
    a = qgemm.quantize_activations(x, act).dequantize().astype(np.float64)
    expected = a @ w.dequantize().astype(np.float64).T + bias
    rel = np.linalg.norm(got - expected) / np.linalg.norm(expected)
    assert rel < (5e-3 if out == "bf16" else 1e-5), rel
    assert "cpu" in layer.explain()


def test_quantized_activation_layer_names_its_16_bit_input():
    w = qgemm.quantize_weights(random((16, 128), 23, 0.05), "e4m3/channel/fp32")
    assert qgemm.Linear(w, act="e4m3/token", device=-1).input == "bf16"
    assert qgemm.Linear(w, act="e4m3/token", input="fp16", device=-1).input == "fp16"
    with pytest.raises(ValueError, match="fp32"):
        qgemm.Linear(w, act="e4m3/token", input="fp32", device=-1)


def test_host_linear_rejects_wrong_k_and_bias():
    w = qgemm.quantize_weights(random((16, 128), 16, 0.05), "int4/g128/bf16")
    layer = qgemm.Linear(w, backend="cpu", device=-1)
    with pytest.raises(ValueError, match="K=128"):
        layer(random((2, 64), 17))
    with pytest.raises(ValueError, match="N=16"):
        layer(random((2, 128), 18), bias=random((8,), 19))


def test_empty_call_returns_an_empty_result():
    w = qgemm.quantize_weights(random((16, 128), 20, 0.05), "int4/g128/bf16")
    got = qgemm.Linear(w, backend="cpu", device=-1)(np.zeros((0, 128), np.float32))
    assert got.shape == (0, 16)


def test_unknown_backend_and_output_are_value_errors():
    w = qgemm.quantize_weights(random((16, 128), 21, 0.05), "int4/g128/bf16")
    with pytest.raises(ValueError, match="tpu"):
        qgemm.Linear(w, backend="tpu", device=-1)
    with pytest.raises(ValueError, match="int3"):
        qgemm.Linear(w, out="int3", device=-1)


@pytest.mark.skipif(qgemm.device_count() == 0, reason="no GPU: " + (qgemm.no_gpu_reason() or "none"))
def test_gpu_layer_refuses_host_arrays_with_advice():
    w = qgemm.quantize_weights(random((64, 256), 22, 0.05), "int4/g128/bf16")
    layer = qgemm.Linear(w, device=0)
    with pytest.raises(ValueError, match="__cuda_array_interface__"):
        layer(random((2, 256), 23))


def gptq_checkpoint(tmp_path):
    """A checkpoint directory around the repository's GPTQ act-order layer 'l' (N=8, K=32,
    group 16, with a bias): the safetensors fuzz seed."""
    import pathlib
    import shutil
    seed = pathlib.Path(__file__).resolve().parents[2] / "fuzz/corpus/safetensors/gptq_layer"
    shutil.copy(seed, tmp_path / "model.safetensors")
    (tmp_path / "config.json").write_text(
        '{"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 16, '
        '"desc_act": true}}')
    return tmp_path


def test_checkpoint_layers_are_read_one_at_a_time(tmp_path):
    c = qgemm.load_checkpoint(gptq_checkpoint(tmp_path))
    assert c.kind == "GPTQ" and c.layers == ["l"] and len(c) == 1
    layer = c["l"]
    assert str(layer.weight.format) == "uint4/g16/fp16/zp"
    assert (layer.weight.n, layer.weight.k) == (8, 32)
    assert layer.bias.shape == (8,) and not layer.interleaved_gate_up
    # Act-order: a permutation of K that makes the groups contiguous.
    assert sorted(layer.k_order.tolist()) == list(range(32))
    with pytest.raises(KeyError, match="'m'"):
        c["m"]


def test_act_order_layer_runs_on_permuted_activations(tmp_path):
    layer = qgemm.load_checkpoint(gptq_checkpoint(tmp_path))["l"]
    x = random((6, 32), 30)
    linear = qgemm.Linear(layer.weight, device=-1, out="fp32")
    linear.prepare(6)
    got = linear(x[:, layer.k_order], bias=layer.bias)
    # The weight in the model's own column order: stored column c is input feature k_order[c].
    w = np.empty((8, 32))
    w[:, layer.k_order] = layer.weight.dequantize()
    a = bf16_round(x).astype(np.float64)
    np.testing.assert_allclose(got, a @ w.T + layer.bias, rtol=1e-5, atol=1e-5)
    # Given k_order, the layer takes the model's order and gathers the columns itself.
    ordered = qgemm.Linear(layer.weight, device=-1, out="fp32", k_order=layer.k_order)
    ordered.prepare(6)
    np.testing.assert_array_equal(ordered(x, bias=layer.bias), got)
    with pytest.raises(ValueError, match="k_order has 31 entries"):
        qgemm.Linear(layer.weight, device=-1, k_order=layer.k_order[:31])


def test_missing_checkpoint_names_the_file(tmp_path):
    with pytest.raises(qgemm.Error, match="config.json"):
        qgemm.load_checkpoint(tmp_path)


def test_nvfp4_activations_carry_a_global_scale():
    x = random((4, 64), 21)
    a = qgemm.quantize_activations(x, "nvfp4")
    assert str(a.format) == "e2m1/g16/e4m3/global"
    assert a.global_scale == pytest.approx(np.abs(x).max() / 2688.0, rel=1e-6)
    assert qgemm.quantize_activations(x, "e4m3/token").global_scale is None


# ---- MoE ---------------------------------------------------------------------------------------


def _moe_stacks(experts=4, hidden=256, inter=128, seed=0):
    rng = np.random.default_rng(seed)
    w13 = qgemm.quantize_weights(rng.normal(0, 0.05, (experts, 2 * inter, hidden)), "int4/g128/bf16")
    w2 = qgemm.quantize_weights(rng.normal(0, 0.05, (experts, hidden, inter)), "int4/g128/bf16")
    return w13, w2


def _moe_numpy(x, w13, w2, ids, weights):
    """The layer in NumPy from the dequantized stacks, rounding to bf16 where the layer keeps
    16-bit rows."""
    d13, d2 = w13.dequantize().astype(np.float64), w2.dequantize().astype(np.float64)
    inter = d2.shape[2]
    xb = bf16_round(x).astype(np.float64)
    out = np.zeros((x.shape[0], d2.shape[1]))
    for t in range(x.shape[0]):
        for j in range(ids.shape[1]):
            e = ids[t, j]
            if e < 0:
                continue
            h = bf16_round(d13[e] @ xb[t]).astype(np.float64)
            g, u = h[:inter], h[inter:]
            a = bf16_round(g / (1 + np.exp(-g)) * u).astype(np.float64)
            out[t] += weights[t, j] * bf16_round(d2[e] @ a)
    return out


def test_moe_layer_on_host_matches_numpy():
    w13, w2 = _moe_stacks()
    layer = qgemm.MoE(w13, w2, top_k=2, device=-1)
    assert layer.backend == "cpu" and layer.experts == 4 and layer.intermediate == 128
    layer.prepare(8)
    rng = np.random.default_rng(1)
    x = rng.normal(0, 1, (5, 256)).astype(np.float32)
    logits = rng.normal(0, 1, (5, 4)).astype(np.float32)
    got = layer(x, router_logits=logits)
    assert got.shape == (5, 256) and got.dtype == np.float32
    # Softmax top-2, renormalized: the softmax of the two chosen logits.
    ids = np.argsort(-logits, axis=1, kind="stable")[:, :2]
    chosen = np.take_along_axis(logits, ids, axis=1).astype(np.float64)
    weights = np.exp(chosen) / np.exp(chosen).sum(axis=1, keepdims=True)
    want = _moe_numpy(x, w13, w2, ids, weights)
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 5e-3


def test_moe_layer_takes_given_top_k_and_rejects_bad_input():
    w13, w2 = _moe_stacks(seed=2)
    layer = qgemm.MoE(w13, w2, top_k=2, activation="silu", device=-1)
    layer.prepare(4)
    x = np.random.default_rng(3).normal(0, 1, (3, 256)).astype(np.float32)
    ids = np.array([[0, 3], [-1, 2], [1, 1]], dtype=np.int32)  # -1: no expert
    weights = np.array([[0.75, 0.25], [0.5, 0.5], [0.5, 0.5]], dtype=np.float32)
    got = layer(x, topk_ids=ids, topk_weights=weights)
    want = _moe_numpy(x, w13, w2, ids, weights.astype(np.float64))
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 5e-3
    assert layer(x[:0], topk_ids=ids[:0], topk_weights=weights[:0]).shape == (0, 256)
    with pytest.raises(ValueError, match="router_logits"):
        layer(x)
    with pytest.raises(ValueError, match=r"\[T, H=256\]"):
        layer(x[:, :100], topk_ids=ids, topk_weights=weights)
    with pytest.raises(ValueError, match="2 x w2's K"):
        qgemm.MoE(w13, w13, device=-1)
    with pytest.raises(ValueError, match="activation"):
        qgemm.MoE(w13, w2, activation="relu", device=-1)
