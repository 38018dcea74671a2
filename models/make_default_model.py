#!/usr/bin/python3
"""Make autoshard's bundled default model: models/squeezenet1_1.onnx.

What it makes
    torchvision's SqueezeNet 1.1 image classifier, exported to ONNX (opset 13)
    in eval mode with constant folding. One input, "input", of shape
    [batch, 3, 224, 224] (float32, dynamic batch axis named "batch"), and one
    output, "logits", of shape [batch, 1000]. This is the model that the
    project README's first command shards across 4 IPUs.

How to run it
    python3 models/make_default_model.py [OUTPUT.onnx]

    OUTPUT defaults to squeezenet1_1.onnx beside this script. It needs
    Debian's python3-torch (1.13), python3-torchvision (0.14) and
    python3-onnx (1.12); if the `python3` on PATH lacks them (e.g. a pyenv
    interpreter), the script re-runs itself under /usr/bin/python3.

Weights are random
    No pretrained weights can be downloaded here, so the parameters come from
    torchvision's default initialisation under torch.manual_seed(0). The graph
    (operators, shapes, parameter tensors and their sizes) is the real
    SqueezeNet 1.1; the values are not, so its predictions are meaningless.
    That is all autoshard needs: it partitions by graph structure and cost.

    One adjustment: torchvision sets every SqueezeNet conv bias to zero, and
    torch 1.13's exporter merges identical initializers, so an export of the
    untouched model holds 18 bias tensors fewer and 18 extra Identity nodes
    that a pretrained export does not have. The biases are therefore redrawn
    with PyTorch's default Conv2d bias init, U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
    under the same seed; the script checks that every parameter survives as
    its own initializer and that no Identity node is left.
"""

import collections
import math
import os
import sys


def _reexec_under_system_python():
    """Fall back to Debian's interpreter when torch is missing from this one."""
    system_python = "/usr/bin/python3"
    if (os.path.exists(system_python)
            and os.path.realpath(sys.executable) != os.path.realpath(system_python)
            and not os.environ.get("MAKE_DEFAULT_MODEL_REEXEC")):
        os.environ["MAKE_DEFAULT_MODEL_REEXEC"] = "1"
        os.execv(system_python, [system_python, os.path.abspath(__file__)] + sys.argv[1:])


try:
    import torch
    import torchvision
    import onnx
except ImportError:
    _reexec_under_system_python()
    raise


OPSET = 13
SEED = 0


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    out_path = argv[1] if len(argv) > 1 else os.path.join(here, "squeezenet1_1.onnx")

    torch.manual_seed(SEED)
    model = torchvision.models.squeezenet1_1(weights=None)
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, torch.nn.Conv2d) and mod.bias is not None:
                fan_in = mod.in_channels // mod.groups * math.prod(mod.kernel_size)
                bound = 1.0 / math.sqrt(fan_in)
                torch.nn.init.uniform_(mod.bias, -bound, bound)
    model.eval()
    expected_params = sum(p.numel() for p in model.parameters())
    expected_tensors = len(list(model.parameters()))

    dummy = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        torch.onnx.export(
            model,
            dummy,
            out_path,
            export_params=True,
            opset_version=OPSET,
            do_constant_folding=True,
            input_names=["input"],
            output_names=["logits"],
            dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
        )

    m = onnx.load(out_path)
    onnx.checker.check_model(m)

    g = m.graph
    n_params = sum(math.prod(t.dims) for t in g.initializer)
    unnamed = sum(1 for n in g.node if not n.name)
    ops = collections.Counter(n.op_type for n in g.node)
    size = os.path.getsize(out_path)

    if len(g.initializer) != expected_tensors or n_params != expected_params:
        sys.exit(f"error: exported {len(g.initializer)} initializers / {n_params} "
                 f"parameters, model has {expected_tensors} / {expected_params}")
    if ops.get("Identity"):
        sys.exit(f"error: export holds {ops['Identity']} Identity nodes "
                 "(deduplicated initializers)")

    print(f"wrote {out_path}")
    print(f"opset: {OPSET}")
    print(f"nodes: {len(g.node)} ({unnamed} with empty names)")
    print("op types: " + ", ".join(f"{op} {c}" for op, c in sorted(ops.items())))
    print(f"initializers: {len(g.initializer)}")
    print(f"parameters: {n_params}")
    print(f"size: {size} bytes ({size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
