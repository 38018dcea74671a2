"""Writes the hand-made MatMul models of tests/remote_cli_test.sh.

x[1,8192] feeds MatMuls with fp32 weights [8192, W] held as external data in
a sparse file NAME.data (the loader never reads weights, so nothing is
written to disk): "chain" reads each MatMul's output into the next (every W
must be 8192), "fan" feeds x to every MatMul, each its own graph output.
Usage: matmul_models.py OUT_DIR NAME chain|fan W[,W...]
"""
import os
import sys

from onnx import TensorProto as T, helper as h, save

out, name, shape, widths = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
widths = [int(w) for w in widths.split(",")]
inits, nodes, outs, offset = [], [], [], 0
for i, w in enumerate(widths):
    n = 8192 * w * 4
    t = T(); t.name = f"w{i}"; t.data_type = T.FLOAT; t.dims.extend([8192, w])
    t.data_location = T.EXTERNAL
    for k, v in (("location", f"{name}.data"), ("offset", str(offset)), ("length", str(n))):
        e = t.external_data.add(); e.key = k; e.value = v
    offset += n
    inits.append(t)
    source = "x" if shape == "fan" or i == 0 else f"y{i-1}"
    nodes.append(h.make_node("MatMul", [source, f"w{i}"], [f"y{i}"], name=f"mm{i}"))
    if shape == "fan":
        outs.append(h.make_tensor_value_info(f"y{i}", T.FLOAT, [1, w]))
if shape == "chain":
    outs = [h.make_tensor_value_info(f"y{len(widths) - 1}", T.FLOAT, [1, widths[-1]])]
g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", T.FLOAT, [1, 8192])], outs, inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
with open(os.path.join(out, f"{name}.data"), "wb") as f:
    f.truncate(offset)
save(m, os.path.join(out, f"{name}.onnx"))
