#!/usr/bin/python3
"""Writes a GPT-2-shaped decoder as ONNX with inline (raw_data) random weights.

Usage: make_gpt2_model.py OUT.onnx [layers [d_model [heads [vocab [seq]]]]]
Default: GPT-2 small (12 layers, 768, 12 heads, 50257 vocab, 1024 positions), sequence 128,
fp32: 124M parameters plus an untied lm_head, 649 MB, as torch's export of GPT-2 small writes
it (the lm_head there is the tied embedding transposed, stored again).

The graph follows torch 1.13's opset-13 export of Hugging Face's GPT2LMHeadModel: LayerNorm as
ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add, attention as one c_attn MatMul split into
q, k, v, Reshape/Transpose per head, causal mask Add, Softmax, the tanh GELU spelled out. Node
names carry '/h.<i>/'. Weights are random (numpy, seed 0): autoshard plans by structure and
cost, so the values do not matter; no pretrained weights are downloaded. Needs only Debian's
python3-onnx and python3-numpy (no torch). For bench/model_io_bench.sh; write it under /tmp,
never into the repository.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper


def main(out, L=12, d=768, H=12, V=50257, P=1024, S=128):
    rng = np.random.default_rng(0)
    inits, nodes = [], []

    def W(name, shape):
        a = (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)
        inits.append(numpy_helper.from_array(a, name))
        return name

    def C(name, arr):
        inits.append(numpy_helper.from_array(np.array(arr), name))
        return name

    def N(op, ins, outs, name, **kw):
        nodes.append(h.make_node(op, ins, outs, name=name, **kw))
        return outs[0]

    hd = d // H
    C("pos_ids", np.arange(S, dtype=np.int64).reshape(1, S))
    C("two", np.array(2.0, np.float32))
    C("eps", np.array(1e-5, np.float32))
    C("split_qkv", np.array([d, d, d], np.int64))
    C("shape_heads", np.array([1, S, H, hd], np.int64))
    C("shape_merge", np.array([1, S, d], np.int64))
    C("scale", np.array(np.sqrt(hd), np.float32))
    C("mask", np.triu(np.full((S, S), -1e4, np.float32), 1))
    C("half", np.array(0.5, np.float32))
    C("one", np.array(1.0, np.float32))
    C("three", np.array(3.0, np.float32))
    C("gelu_c", np.array(0.044715, np.float32))
    C("sqrt_2_pi", np.array(np.sqrt(2 / np.pi), np.float32))

    def layer_norm(x, p):
        m = N("ReduceMean", [x], [p + "/ReduceMean_output_0"], p + "/ReduceMean", axes=[-1])
        c = N("Sub", [x, m], [p + "/Sub_output_0"], p + "/Sub")
        v = N("Pow", [c, "two"], [p + "/Pow_output_0"], p + "/Pow")
        v = N("ReduceMean", [v], [p + "/ReduceMean_1_output_0"], p + "/ReduceMean_1", axes=[-1])
        v = N("Add", [v, "eps"], [p + "/Add_output_0"], p + "/Add")
        v = N("Sqrt", [v], [p + "/Sqrt_output_0"], p + "/Sqrt")
        y = N("Div", [c, v], [p + "/Div_output_0"], p + "/Div")
        y = N("Mul", [y, W(p + ".weight", [d])], [p + "/Mul_output_0"], p + "/Mul")
        return N("Add", [y, W(p + ".bias", [d])], [p + "/Add_1_output_0"], p + "/Add_1")

    def linear(x, p, n_in, n_out):
        y = N("MatMul", [x, W(p + ".weight", [n_in, n_out])], [p + "/MatMul_output_0"], p + "/MatMul")
        return N("Add", [y, W(p + ".bias", [n_out])], [p + "/Add_output_0"], p + "/Add")

    def heads(x, p, perm):
        y = N("Reshape", [x, "shape_heads"], [p + "/Reshape_output_0"], p + "/Reshape")
        return N("Transpose", [y], [p + "/Transpose_output_0"], p + "/Transpose", perm=perm)

    tok = N("Gather", [W("transformer.wte.weight", [V, d]), "input_ids"], ["/wte/out"], "/wte/Gather")
    pos = N("Gather", [W("transformer.wpe.weight", [P, d]), "pos_ids"], ["/wpe/out"], "/wpe/Gather")
    x = N("Add", [tok, pos], ["/embed/out"], "/embed/Add")
    for i in range(L):
        p = f"/h.{i}"
        a = layer_norm(x, p + "/ln_1")
        qkv = linear(a, p + "/attn/c_attn", d, 3 * d)
        q, k, v = (p + "/attn/q", p + "/attn/k", p + "/attn/v")
        N("Split", [qkv, "split_qkv"], [q, k, v], p + "/attn/Split", axis=2)
        q = heads(q, p + "/attn/q", [0, 2, 1, 3])
        k = heads(k, p + "/attn/k", [0, 2, 3, 1])
        v = heads(v, p + "/attn/v", [0, 2, 1, 3])
        s = N("MatMul", [q, k], [p + "/attn/MatMul_output_0"], p + "/attn/MatMul")
        s = N("Div", [s, "scale"], [p + "/attn/Div_output_0"], p + "/attn/Div")
        s = N("Add", [s, "mask"], [p + "/attn/Add_output_0"], p + "/attn/Add")
        s = N("Softmax", [s], [p + "/attn/Softmax_output_0"], p + "/attn/Softmax", axis=-1)
        o = N("MatMul", [s, v], [p + "/attn/MatMul_1_output_0"], p + "/attn/MatMul_1")
        o = N("Transpose", [o], [p + "/attn/Transpose_output_0"], p + "/attn/Transpose", perm=[0, 2, 1, 3])
        o = N("Reshape", [o, "shape_merge"], [p + "/attn/Reshape_output_0"], p + "/attn/Reshape")
        o = linear(o, p + "/attn/c_proj", d, d)
        x = N("Add", [x, o], [p + "/Add_output_0"], p + "/Add")
        a = layer_norm(x, p + "/ln_2")
        f = linear(a, p + "/mlp/c_fc", d, 4 * d)
        g = N("Pow", [f, "three"], [p + "/mlp/act/Pow_output_0"], p + "/mlp/act/Pow")
        g = N("Mul", [g, "gelu_c"], [p + "/mlp/act/Mul_output_0"], p + "/mlp/act/Mul")
        g = N("Add", [f, g], [p + "/mlp/act/Add_output_0"], p + "/mlp/act/Add")
        g = N("Mul", [g, "sqrt_2_pi"], [p + "/mlp/act/Mul_1_output_0"], p + "/mlp/act/Mul_1")
        g = N("Tanh", [g], [p + "/mlp/act/Tanh_output_0"], p + "/mlp/act/Tanh")
        g = N("Add", [g, "one"], [p + "/mlp/act/Add_1_output_0"], p + "/mlp/act/Add_1")
        g = N("Mul", [f, g], [p + "/mlp/act/Mul_2_output_0"], p + "/mlp/act/Mul_2")
        g = N("Mul", [g, "half"], [p + "/mlp/act/Mul_3_output_0"], p + "/mlp/act/Mul_3")
        m = linear(g, p + "/mlp/c_proj", 4 * d, d)
        x = N("Add", [x, m], [p + "/Add_1_output_0"], p + "/Add_1")
    x = layer_norm(x, "/ln_f")
    N("MatMul", [x, W("lm_head.weight", [d, V])], ["logits"], "/lm_head/MatMul")
    graph = h.make_graph(
        nodes, "gpt2",
        [h.make_tensor_value_info("input_ids", T.INT64, [1, S])],
        [h.make_tensor_value_info("logits", T.FLOAT, [1, S, V])], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)], producer_name="pytorch",
                         producer_version="1.13.1")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    main(sys.argv[1], *[int(a) for a in sys.argv[2:]])
