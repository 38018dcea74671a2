#!/usr/bin/python3
"""Writes a GPT-2-shaped decoder as ONNX with inline (raw_data) random weights.

Usage: make_gpt2_model.py [--tied] [--sparse-weights] OUT.onnx [layers [d_model [heads [vocab [seq]]]]]
Default: GPT-2 small (12 layers, 768, 12 heads, 50257 vocab, 1024 positions), sequence 128,
fp32: 124M parameters plus an untied lm_head, 649 MB, as torch's export of GPT-2 small writes
it (the lm_head there is the tied embedding transposed, stored again).

--tied: the LM head reads the embedding itself, as Hugging Face ties them (one initializer,
transformer.wte.weight, read by the first Gather and by the last node): the hidden states
reshaped to [seq, d_model], Gemm with transB=1 (torch's export of a Linear on 2-D input), and
reshaped back to [1, seq, vocab]. GPT-2 small is then 124M parameters, 498 MB in fp32 (issue 29:
with --weights variable autoshard keeps wte's readers on one IPU, a fifth stage back on IPU 0).

--sparse-weights: every weight (not the small constants) is external data in OUT.onnx.data, a
sparse file of zeros that takes no disk blocks and is made in a moment, whatever the size:
autoshard reads only a weight's dtype, dims and location (graph/model_io.h), so the plans are
those of the random-weight model. GPT-2 XL (1.6B parameters, 6.2 GB in fp32, over protobuf's
2 GB limit inline) is then a 1 MB .onnx file; bench/gpt2_graphcore_splits.sh uses it.

The graph follows torch 1.13's opset-13 export of Hugging Face's GPT2LMHeadModel: LayerNorm as
ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add, attention as one c_attn MatMul split into
q, k, v, Reshape/Transpose per head, causal mask Add, Softmax, the tanh GELU spelled out. Node
names carry '/h.<i>/'. Weights are random (numpy, seed 0): autoshard plans by structure and
cost, so the values do not matter; no pretrained weights are downloaded. Needs only Debian's
python3-onnx and python3-numpy (no torch). For bench/model_io_bench.sh; write it under /tmp,
never into the repository.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper


def main(out, L=12, d=768, H=12, V=50257, P=1024, S=128, tied=False, sparse=False):
    rng = np.random.default_rng(0)
    inits, nodes = [], []
    data_name = os.path.basename(out) + ".data"
    data_bytes = [0]

    def W(name, shape):
        if sparse:
            t = T()
            t.name = name
            t.data_type = T.FLOAT
            t.dims.extend(shape)
            t.data_location = T.EXTERNAL
            length = int(np.prod(shape)) * 4
            for key, value in (("location", data_name), ("offset", str(data_bytes[0])),
                               ("length", str(length))):
                entry = t.external_data.add()
                entry.key, entry.value = key, value
            data_bytes[0] += length
            inits.append(t)
            return name
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
    floats = {"two": np.array(2.0, np.float32), "eps": np.array(1e-5, np.float32),
              "scale": np.array(np.sqrt(hd), np.float32),
              "mask": np.triu(np.full((S, S), -1e4, np.float32), 1),
              "half": np.array(0.5, np.float32), "one": np.array(1.0, np.float32),
              "three": np.array(3.0, np.float32), "gelu_c": np.array(0.044715, np.float32),
              "sqrt_2_pi": np.array(np.sqrt(2 / np.pi), np.float32)}
    made = set()

    def F(name, p):
        """A float constant: shared by every layer, or with --tied one per use site, as torch's
        export writes them (so no small float is read on two IPUs under --weights variable)."""
        full = f"{p}.{name}" if tied else name
        if full not in made:
            made.add(full)
            C(full, floats[name])
        return full

    # The untied model's initializers in the order earlier versions wrote them.
    C("pos_ids", np.arange(S, dtype=np.int64).reshape(1, S))
    for name in ("two", "eps"):
        if not tied:
            F(name, "")
    C("split_qkv", np.array([d, d, d], np.int64))
    C("shape_heads", np.array([1, S, H, hd], np.int64))
    C("shape_merge", np.array([1, S, d], np.int64))
    for name in ("scale", "mask", "half", "one", "three", "gelu_c", "sqrt_2_pi"):
        if not tied:
            F(name, "")

    def layer_norm(x, p):
        m = N("ReduceMean", [x], [p + "/ReduceMean_output_0"], p + "/ReduceMean", axes=[-1])
        c = N("Sub", [x, m], [p + "/Sub_output_0"], p + "/Sub")
        v = N("Pow", [c, F("two", p)], [p + "/Pow_output_0"], p + "/Pow")
        v = N("ReduceMean", [v], [p + "/ReduceMean_1_output_0"], p + "/ReduceMean_1", axes=[-1])
        v = N("Add", [v, F("eps", p)], [p + "/Add_output_0"], p + "/Add")
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
        s = N("Div", [s, F("scale", p)], [p + "/attn/Div_output_0"], p + "/attn/Div")
        s = N("Add", [s, F("mask", p)], [p + "/attn/Add_output_0"], p + "/attn/Add")
        s = N("Softmax", [s], [p + "/attn/Softmax_output_0"], p + "/attn/Softmax", axis=-1)
        o = N("MatMul", [s, v], [p + "/attn/MatMul_1_output_0"], p + "/attn/MatMul_1")
        o = N("Transpose", [o], [p + "/attn/Transpose_output_0"], p + "/attn/Transpose", perm=[0, 2, 1, 3])
        o = N("Reshape", [o, "shape_merge"], [p + "/attn/Reshape_output_0"], p + "/attn/Reshape")
        o = linear(o, p + "/attn/c_proj", d, d)
        x = N("Add", [x, o], [p + "/Add_output_0"], p + "/Add")
        a = layer_norm(x, p + "/ln_2")
        f = linear(a, p + "/mlp/c_fc", d, 4 * d)
        g = N("Pow", [f, F("three", p)], [p + "/mlp/act/Pow_output_0"], p + "/mlp/act/Pow")
        g = N("Mul", [g, F("gelu_c", p)], [p + "/mlp/act/Mul_output_0"], p + "/mlp/act/Mul")
        g = N("Add", [f, g], [p + "/mlp/act/Add_output_0"], p + "/mlp/act/Add")
        g = N("Mul", [g, F("sqrt_2_pi", p)], [p + "/mlp/act/Mul_1_output_0"], p + "/mlp/act/Mul_1")
        g = N("Tanh", [g], [p + "/mlp/act/Tanh_output_0"], p + "/mlp/act/Tanh")
        g = N("Add", [g, F("one", p)], [p + "/mlp/act/Add_1_output_0"], p + "/mlp/act/Add_1")
        g = N("Mul", [f, g], [p + "/mlp/act/Mul_2_output_0"], p + "/mlp/act/Mul_2")
        g = N("Mul", [g, F("half", p)], [p + "/mlp/act/Mul_3_output_0"], p + "/mlp/act/Mul_3")
        m = linear(g, p + "/mlp/c_proj", 4 * d, d)
        x = N("Add", [x, m], [p + "/Add_1_output_0"], p + "/Add_1")
    x = layer_norm(x, "/ln_f")
    if tied:
        C("shape_2d", np.array([S, d], np.int64))
        C("shape_logits", np.array([1, S, V], np.int64))
        x = N("Reshape", [x, "shape_2d"], ["/lm_head/Reshape_output_0"], "/lm_head/Reshape")
        x = N("Gemm", [x, "transformer.wte.weight"], ["/lm_head/Gemm_output_0"], "/lm_head/Gemm",
              transB=1)
        N("Reshape", [x, "shape_logits"], ["logits"], "/lm_head/Reshape_1")
    else:
        N("MatMul", [x, W("lm_head.weight", [d, V])], ["logits"], "/lm_head/MatMul")
    graph = h.make_graph(
        nodes, "gpt2",
        [h.make_tensor_value_info("input_ids", T.INT64, [1, S])],
        [h.make_tensor_value_info("logits", T.FLOAT, [1, S, V])], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)], producer_name="pytorch",
                         producer_version="1.13.1")
    model.ir_version = 8
    if sparse:
        # A sparse file of zeros: the weights' bytes are never written.
        with open(out + ".data", "wb") as f:
            f.truncate(data_bytes[0])
        with open(out + ".tmp", "wb") as f:
            f.write(model.SerializeToString())
        os.replace(out + ".tmp", out)
        onnx.checker.check_model(out)  # by path: the data's folder is out's
        return
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    args = sys.argv[1:]
    tied = "--tied" in args
    sparse = "--sparse-weights" in args
    args = [a for a in args if a not in ("--tied", "--sparse-weights")]
    main(args[0], *[int(a) for a in args[1:]], tied=tied, sparse=sparse)
