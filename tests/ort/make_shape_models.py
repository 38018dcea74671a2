#!/usr/bin/python3
"""Writes the hand-made models of issue 25's onnxruntime comparison, one per
shape-changing op class, and cases.tsv: model, then autoshard's options for
each case (several lines a model).

Usage: make_shape_models.py OUT_DIR

Each model is small (a few nodes, no weights of note) and either runs at
every option set listed for it (its dims then depend on the options as the
op's rule says) or is impossible at one (ONNX or onnxruntime refuses it;
autoshard must refuse too). Node names are n0, n1, ... in file order.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper


def const(name, values, dtype=np.int64):
    return h.make_node("Constant", [], [name], name="",
                       value=numpy_helper.from_array(np.array(values, dtype), name))


def model(nodes, inputs, outputs, inits=(), opset=13):
    for i, n in enumerate(nodes):
        n.name = f"n{i}"
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8)

    return m


def vi(name, dtype, dims):
    return h.make_tensor_value_info(name, dtype, dims)


def weight(name, shape):
    return numpy_helper.from_array(
        np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape), name)


F = T.FLOAT
MODELS = {}
CASES = []


def add(name, m, *option_sets):
    MODELS[name] = m
    for opts in option_sets:
        CASES.append((name, opts))


# Resize by constant sizes (keeps batch 1) and by scales (follows the batch),
# joined by Concat: runs at batch 1 only (IS-Net's fault).
add("resize_concat", model(
    [const("roi", [], np.float32), const("none", [], np.float32),
     const("sc", [1, 1, 2, 2], np.float32), const("sz", [1, 4, 16, 16]),
     h.make_node("Resize", ["x", "roi", "none", "sz"], ["a"]),
     h.make_node("Resize", ["x", "roi", "sc"], ["b"]),
     h.make_node("Concat", ["a", "b"], ["y"], axis=1)],
    [vi("x", F, [1, 4, 8, 8])], [vi("y", F, None)]),
    "", "--batch-size 1", "--batch-size 2", "--batch-size 8")
# Resize by scales alone, and Upsample (opset 9) by scales.
add("resize_scales", model(
    [const("roi", [], np.float32), const("sc", [1, 1, 2, 3], np.float32),
     h.make_node("Resize", ["x", "roi", "sc"], ["y"])],
    [vi("x", F, ["N", 3, 5, 7])], [vi("y", F, None)]),
    "", "--batch-size 2", "--batch-size 8")
add("upsample", model(
    [const("sc", [1, 1, 2, 2], np.float32),
     h.make_node("Upsample", ["x", "sc"], ["y"])],
    [vi("x", F, ["N", 2, 4, 4])], [vi("y", F, None)], opset=9),
    "", "--batch-size 2", "--batch-size 8")
# Expand to a constant shape [2,16]: batch 1 or 2 only.
add("expand", model(
    [const("s", [2, 16]), h.make_node("Expand", ["x", "s"], ["e"]),
     h.make_node("Relu", ["e"], ["y"])],
    [vi("x", F, ["N", 16])], [vi("y", F, None)]),
    "", "--batch-size 2", "--batch-size 8")
# Tile by constant repeats, the batch axis too.
add("tile", model(
    [const("r", [2, 3]), h.make_node("Tile", ["x", "r"], ["y"])],
    [vi("x", F, ["N", 5])], [vi("y", F, None)]),
    "", "--batch-size 2", "--batch-size 8")
# Slice on the batch axis: the first 2 samples, then a MatMul.
add("slice_batch", model(
    [const("st", [0]), const("en", [2]), const("ax", [0]),
     h.make_node("Slice", ["x", "st", "en", "ax"], ["s"]),
     h.make_node("MatMul", ["s", "w"], ["y"])],
    [vi("x", F, ["N", 4])], [vi("y", F, None)], [weight("w", [4, 3])]),
    "", "--batch-size 2", "--batch-size 8")
# ConstantOfShape from Shape: a zeros tensor as large as the input.
add("constant_of_shape", model(
    [h.make_node("Shape", ["x"], ["s"]),
     h.make_node("ConstantOfShape", ["s"], ["z"],
                 value=numpy_helper.from_array(np.array([1.0], np.float32))),
     h.make_node("Add", ["x", "z"], ["y"])],
    [vi("x", F, ["N", 6])], [vi("y", F, None)]),
    "", "--batch-size 2", "--batch-size 8")
# Reshape to a shape computed from Shape (batch kept, the rest flattened).
add("reshape_from_shape", model(
    [h.make_node("Shape", ["x"], ["s"]), const("i0", [0]),
     h.make_node("Gather", ["s", "i0"], ["b"], axis=0), const("m1", [-1]),
     h.make_node("Concat", ["b", "m1"], ["t"], axis=0),
     h.make_node("Reshape", ["x", "t"], ["y"])],
    [vi("x", F, ["N", 3, 4, 5])], [vi("y", F, None)]),
    "", "--batch-size 2", "--batch-size 8")
# Add joining two branches: one follows the batch, one is a constant [1,8].
add("add_branches", model(
    [h.make_node("Relu", ["x"], ["a"]),
     h.make_node("MatMul", ["x", "w"], ["b"]),
     h.make_node("Add", ["a", "b"], ["y"])],
    [vi("x", F, ["N", 8])], [vi("y", F, None)], [weight("w", [8, 8])]),
    "", "--batch-size 2", "--batch-size 8")
# A Reshape that hard-codes batch 1.
add("reshape_fixed", model(
    [const("s", [1, 12]), h.make_node("Reshape", ["x", "s"], ["y"])],
    [vi("x", F, [1, 3, 4])], [vi("y", F, None)]),
    "", "--batch-size 2")
# A CHW image, normalized, then unsqueezed: one sample per run.
add("unsqueeze_chw", model(
    [const("m", np.full((3, 1, 1), 0.5), np.float32),
     h.make_node("Sub", ["image", "m"], ["c"]), const("ax", [0]),
     h.make_node("Unsqueeze", ["c", "ax"], ["u"]),
     h.make_node("Conv", ["u", "w"], ["y"], pads=[1, 1, 1, 1])],
    [vi("image", F, [3, "H", "W"])], [vi("y", F, None)],
    [weight("w", [4, 3, 3, 3])]),
    "--dim H=8 --dim W=8", "--batch-size 1 --dim H=8 --dim W=8",
    "--batch-size 2 --dim H=8 --dim W=8")
# If: both branches give [N,4] (then: Relu, else: Neg).
then_g = h.make_graph([h.make_node("Relu", ["x"], ["t"], name="then_relu")],
                      "then", [], [vi("t", F, None)])
else_g = h.make_graph([h.make_node("Neg", ["x"], ["e"], name="else_neg")],
                      "else", [], [vi("e", F, None)])
add("if_branches", model(
    [h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
     const("zero", 0.0, np.float32),
     h.make_node("Greater", ["s", "zero"], ["c"]),
     h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
    [vi("x", F, ["N", 4])], [vi("y", F, None)]),
    "", "--batch-size 2", "--batch-size 8")
# Loop of 3 iterations (a constant trip count) adding 1 to a [N,4] state.
body = h.make_graph(
    [h.make_node("Identity", ["cond"], ["cond_out"], name="body_cond"),
     h.make_node("Add", ["v", "one"], ["v_out"], name="body_add")],
    "body", [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("v", F, None)],
    [vi("cond_out", T.BOOL, []), vi("v_out", F, None)])
add("loop_const", model(
    [const("trip", 3), const("cond", True, np.bool_), const("one", 1.0, np.float32),
     h.make_node("Loop", ["trip", "cond", "x"], ["y"], body=body)],
    [vi("x", F, ["N", 4])], [vi("y", F, None)]),
    "", "--batch-size 2", "--batch-size 8")
# NonZero: its count depends on the data (reported as data-dependent).
add("nonzero", model(
    [h.make_node("NonZero", ["x"], ["nz"]),
     h.make_node("Transpose", ["nz"], ["y"], perm=[1, 0])],
    [vi("x", F, ["N", 4])], [vi("y", T.INT64, None)]),
    "", "--batch-size 2")


def main(out):
    os.makedirs(out, exist_ok=True)
    for name, m in MODELS.items():
        onnx.save(m, os.path.join(out, name + ".onnx"))
    with open(os.path.join(out, "cases.tsv"), "w") as f:
        for name, opts in CASES:
            f.write(f"{name}\t{opts}\n")


if __name__ == "__main__":
    main(sys.argv[1])
