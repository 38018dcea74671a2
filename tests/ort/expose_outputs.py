#!/usr/bin/python3
"""Makes a model as autoshard's options make it, for onnxruntime: its inputs
at the options' dims and every main-graph node output exposed as a graph
output (issue 25, point 1).

Usage: expose_outputs.py MODEL.onnx OUT_DIR [autoshard's options]
Options (as autoshard reads them): --batch-size N, --input-shape NAME:D,D,...,
--dim NAME=V; other dims still unknown are 1, as autoshard takes them.

Writes OUT_DIR/model.onnx (static input dims the options replace set,
symbolic ones kept, as onnxruntime checks both branches of an If at load;
value_info dropped: it follows the declared dims; data files of external
weights copied beside it) and OUT_DIR/spec.json:
{"inputs": [{"name", "type" (onnxruntime's), "dims"}], "nodes": [{"name",
"op_type", "outputs": [...]}]}, nodes in file order as `inspect
--nodes-csv` lists them. An output whose element type ONNX 1.12 cannot infer,
or that is not a tensor, is not exposed (spec lists it as null).
--batch-size follows autoshard's rule (graph/shapes.h): symbolic first dims,
else the model's static batch (the first dim of the first input of rank >= 2,
on every input whose first dim equals it); inputs the graph unsqueezes at
axis 0 have no batch axis (graph/batch_axis.h) and keep their dims.
"""
import copy
import json
import os
import shutil
import sys

import onnx
from onnx import TensorProto as T
from onnx import numpy_helper

ORT_TYPES = {T.FLOAT: "float32", T.DOUBLE: "float64", T.FLOAT16: "float16",
             T.INT8: "int8", T.UINT8: "uint8", T.INT16: "int16", T.UINT16: "uint16",
             T.INT32: "int32", T.UINT32: "uint32", T.INT64: "int64", T.UINT64: "uint64",
             T.BOOL: "bool", T.STRING: "string"}
KEEPS_RANK = {"Sub", "Div", "Mul", "Add", "Cast", "Identity", "Relu", "Clip", "Sqrt",
              "Neg", "Abs", "Sigmoid", "Tanh", "Exp", "Log", "Pow", "Reciprocal",
              "Floor", "Ceil", "Round"}


def parse_options(args):
    o = {"batch": 0, "shapes": {}, "dims": {}}
    it = iter(args)
    for a in it:
        if a == "--batch-size":
            o["batch"] = int(next(it))
        elif a == "--input-shape":
            name, dims = next(it).rsplit(":", 1)
            o["shapes"][name] = [int(d) for d in dims.split(",")]
        elif a == "--dim":
            name, v = next(it).split("=")
            o["dims"][name] = int(v)
        else:
            sys.exit(f"expose_outputs: unknown option {a}")
    return o


def without_batch_axis(g):
    """Inputs the graph unsqueezes at axis 0 through a normalization."""
    consts = {t.name: t for t in g.initializer}
    for n in g.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    consts[n.output[0]] = a.t
    readers = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)

    def leading(t, rank, depth):
        for n in readers.get(t, []) if depth <= 8 else []:
            if n.op_type == "Unsqueeze" and n.input[0] == t:
                axes = [a for at in n.attribute if at.name == "axes" for a in at.ints]
                if len(n.input) > 1 and n.input[1] in consts:
                    axes = list(numpy_helper.to_array(consts[n.input[1]]).reshape(-1))
                if any(a in (0, -(rank + len(axes))) for a in axes):
                    return True
            if (n.op_type in KEEPS_RANK and len(n.output) == 1 and
                    all(i == t or i == "" or i in consts for i in n.input) and
                    leading(n.output[0], rank, depth + 1)):
                return True
        return False

    return {vi.name for vi in g.input
            if vi.type.HasField("tensor_type") and
            leading(vi.name, len(vi.type.tensor_type.shape.dim), 0)}


def fix_inputs(g, o):
    initializers = {t.name for t in g.initializer}
    inputs = [vi for vi in g.input if vi.name not in initializers and
              vi.type.HasField("tensor_type")]
    no_batch = without_batch_axis(g)
    dims = {vi.name: [d.dim_value if d.HasField("dim_value") else
                      (d.dim_param or None) for d in vi.type.tensor_type.shape.dim]
            for vi in inputs}
    for name, shape in o["shapes"].items():
        dims[name] = list(shape)
    free = [n for n in dims if n not in o["shapes"] and n not in no_batch]
    if o["batch"] > 1 and not any(
            dims[n] and (not isinstance(dims[n][0], int) or len(dims[n]) >= 2) for n in free):
        # Only inputs without a batch axis could take it: autoshard refuses,
        # onnxruntime judges them at the dims the option asks for.
        free = [n for n in dims if n not in o["shapes"]]
    bound = dict(o["dims"])
    if o["batch"] > 0:
        symbolic = [n for n in free if dims[n] and not isinstance(dims[n][0], int)]
        for n in symbolic:
            if dims[n][0]:
                bound.setdefault(dims[n][0], o["batch"])
            dims[n][0] = o["batch"]
        if not symbolic:
            static = [n for n in free if len(dims[n]) >= 2 and isinstance(dims[n][0], int)]
            if static:
                first = dims[static[0]][0]
                for n in static:
                    if dims[n][0] == first:
                        dims[n][0] = o["batch"]
    for name in o["shapes"]:  # --input-shape binds the symbols it replaces
        vi = next(v for v in inputs if v.name == name)
        for d, v in zip(vi.type.tensor_type.shape.dim, o["shapes"][name]):
            if d.dim_param:
                bound.setdefault(d.dim_param, v)
    for n in dims:
        dims[n] = [d if isinstance(d, int) else bound.get(d, 1) for d in dims[n]]
    return inputs, dims


def main(model_path, out_dir, args, values=None):
    """Writes OUT_DIR as the module says; `values` ({input: V}) go into the
    spec for check_dims.js."""
    o = parse_options(args)
    m = onnx.load(model_path, load_external_data=False)
    g = m.graph
    inputs, dims = fix_inputs(g, o)
    for vi in inputs:  # static dims the options replace; symbols stay
        for d, v in zip(vi.type.tensor_type.shape.dim, dims[vi.name]):
            if d.HasField("dim_value"):
                d.dim_value = v
    del g.value_info[:]
    for out in g.output:
        if out.type.HasField("tensor_type"):
            out.type.tensor_type.ClearField("shape")
    try:
        inferred = onnx.shape_inference.infer_shapes(copy.deepcopy(m))
    except Exception:  # ONNX 1.12 throws on ZipMap's map type: no node left
        inferred = copy.deepcopy(m)  # out, the types it cannot give
        for i in range(len(inferred.graph.node)):
            one = copy.deepcopy(m)
            del one.graph.node[i + 1:]
            try:
                inferred = onnx.shape_inference.infer_shapes(one)
            except Exception:
                break
    types = {vi.name: vi.type for vi in list(inferred.graph.value_info) +
             list(inferred.graph.output)}
    present = {out.name for out in g.output}
    nodes = []
    for n in g.node:
        outs = []
        for name in n.output:
            t = types.get(name)
            tensor = (t is not None and t.HasField("tensor_type") and
                      t.tensor_type.elem_type != 0)
            outs.append(name if name and (tensor or name in present) else None)
            if outs[-1] and name not in present:
                vi = g.output.add()
                vi.name = name
                vi.type.tensor_type.elem_type = t.tensor_type.elem_type
                present.add(name)
        nodes.append({"name": n.name, "op_type": n.op_type, "outputs": outs})
    os.makedirs(out_dir, exist_ok=True)
    src = os.path.dirname(os.path.abspath(model_path))
    for t in g.initializer:
        for kv in t.external_data:
            if kv.key == "location":
                # A copy: onnxruntime refuses data outside the model's folder.
                dest = os.path.join(out_dir, kv.value)
                if not os.path.exists(dest):
                    shutil.copyfile(os.path.join(src, kv.value), dest)
    onnx.save(m, os.path.join(out_dir, "model.onnx"))
    spec = {"inputs": [{"name": vi.name,
                        "type": ORT_TYPES.get(vi.type.tensor_type.elem_type, "?"),
                        "dims": [str(d) for d in dims[vi.name]]} for vi in inputs],
            "nodes": nodes, "values": values or {}}
    with open(os.path.join(out_dir, "spec.json"), "w") as f:
        json.dump(spec, f)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: expose_outputs.py MODEL.onnx OUT_DIR [options]")
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
