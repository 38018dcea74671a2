#!/usr/bin/python3
"""Writes the seeds of fuzz_model_stream beside this script (run it there).

raw_weights.onnx: MatMul by an 8x8 float initializer in raw_data (256 bytes,
over the target's 16-byte streaming threshold) and a bias stored as
float_data; doc strings and metadata around the graph, so the writer's field
order is exercised. graph_twice.onnx: the same with its graph field repeated
(the reader refuses it). external_and_raw.onnx: an initializer that is both
EXTERNAL and raw_data (kept in memory). Needs python3-onnx and numpy.
"""
import numpy as np
from onnx import TensorProto as T, helper as h, numpy_helper

w = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8), "w")
w.doc_string = "after raw_data"
b = h.make_tensor("b", T.FLOAT, [8], [0.5] * 8)
g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["t"], name="mm"),
                  h.make_node("Add", ["t", "b"], ["y"], name="add")], "g",
                 [h.make_tensor_value_info("x", T.FLOAT, [1, 8])],
                 [h.make_tensor_value_info("y", T.FLOAT, [1, 8])], [w, b], doc_string="graph doc")
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], doc_string="model doc")
m.ir_version = 8
h.set_model_props(m, {"k": "v"})
good = m.SerializeToString()
open("raw_weights.onnx", "wb").write(good)
i = good.index(b"\x3a")
open("graph_twice.onnx", "wb").write(good + good[i:])
t = m.graph.initializer[0]
t.data_location = T.EXTERNAL
e = t.external_data.add(); e.key = "location"; e.value = "w.bin"
open("external_and_raw.onnx", "wb").write(m.SerializeToString())
