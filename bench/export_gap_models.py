#!/usr/bin/python3
"""Exports models the development corpus does not hold, for issue 28's table
(bench/bound_corpus.sh --extra): torchvision detectors with an FPN and their
post-processing, a vision transformer, with random weights (weights=None:
nothing is downloaded; autoshard plans by structure and cost, so the values
do not matter). Needs Debian's python3-torch and python3-torchvision (torch
1.13, torchvision 0.14). Write under a temporary folder, never into the
repository or the shared folder.

Usage: export_gap_models.py OUT_DIR [NAME...]
Names (default: all): tv_fasterrcnn_resnet50_fpn, tv_retinanet_resnet50_fpn,
tv_fcos_resnet50_fpn, tv_vit_b_16, tv_maskrcnn_resnet50_fpn,
tv_keypointrcnn_resnet50_fpn, tv_deeplabv3_mobilenet_v3_large,
tv_lraspp_mobilenet_v3_large, tv_swin_t, tv_convnext_tiny.
"""
import os
import sys

import torch
import torchvision


def detector(ctor, size):
    # 800 x 800 images as the torchvision references evaluate them; the
    # transform's resize keeps the image at this size.
    m = ctor(weights=None, weights_backbone=None, min_size=size, max_size=size)
    return m.eval(), torch.rand(1, 3, size, size), 11


MODELS = {
    "tv_fasterrcnn_resnet50_fpn":
        lambda: detector(torchvision.models.detection.fasterrcnn_resnet50_fpn, 800),
    "tv_retinanet_resnet50_fpn":
        lambda: detector(torchvision.models.detection.retinanet_resnet50_fpn, 800),
    "tv_fcos_resnet50_fpn":
        lambda: detector(torchvision.models.detection.fcos_resnet50_fpn, 800),
    "tv_vit_b_16":
        lambda: (torchvision.models.vit_b_16(weights=None).eval(),
                 torch.rand(1, 3, 224, 224), 14),
    # Two-stage detectors with a second head after RoIAlign (masks,
    # keypoints), segmenters (an ASPP head; a lite R-ASPP head) at 520 x 520
    # as torchvision's segmentation references evaluate them, and a
    # shifted-window transformer and a ConvNeXt at 224 x 224.
    "tv_maskrcnn_resnet50_fpn":
        lambda: detector(torchvision.models.detection.maskrcnn_resnet50_fpn, 800),
    "tv_keypointrcnn_resnet50_fpn":
        lambda: detector(
            torchvision.models.detection.keypointrcnn_resnet50_fpn, 800),
    "tv_deeplabv3_mobilenet_v3_large":
        lambda: (torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
            weights=None, weights_backbone=None).eval(),
                 torch.rand(1, 3, 520, 520), 13),
    "tv_lraspp_mobilenet_v3_large":
        lambda: (torchvision.models.segmentation.lraspp_mobilenet_v3_large(
            weights=None, weights_backbone=None).eval(),
                 torch.rand(1, 3, 520, 520), 13),
    "tv_swin_t":
        lambda: (torchvision.models.swin_t(weights=None).eval(),
                 torch.rand(1, 3, 224, 224), 14),
    "tv_convnext_tiny":
        lambda: (torchvision.models.convnext_tiny(weights=None).eval(),
                 torch.rand(1, 3, 224, 224), 13),
}

# Detectors: a list of images as their forward takes. Exported with
# gradients on: transformers whose attention takes torch 1.13's fused fast
# path under no_grad (aten::_native_multi_head_attention, no ONNX export).
DETECTORS = ("rcnn", "retinanet", "fcos")
WITH_GRAD = ("vit", "swin")


def main(out_dir, names):
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    for name in names or MODELS:
        model, x, opset = MODELS[name]()
        path = os.path.join(out_dir, name + ".onnx")
        tmp = path + ".tmp"
        args = ([x[0]],) if any(d in name for d in DETECTORS) else (x,)
        if any(g in name for g in WITH_GRAD):
            torch.onnx.export(model, args, tmp, opset_version=opset,
                              do_constant_folding=True)
        else:
            with torch.no_grad():
                torch.onnx.export(model, args, tmp, opset_version=opset,
                                  do_constant_folding=True)
        os.replace(tmp, path)
        print(path)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
