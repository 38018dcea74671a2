// The models of the calibration facts (costmodel/calibration/facts.textproto,
// docs/calibration.md), built in memory: nothing is downloaded. Each follows
// the published architecture in op types and shapes (what decides FLOPs and
// memory) as PyTorch's ONNX export writes it at opset 13: BatchNormalization
// folded into Conv, LayerNormalization and GELU decomposed into their
// elementwise ops. Weights are external-data initializers (dims only: nothing
// reads their data). Used by the calibration test and bench/calibration_fit.
#ifndef AUTOSHARD_TESTS_CALIBRATION_MODELS_H_
#define AUTOSHARD_TESTS_CALIBRATION_MODELS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace autoshard::testing {

// The model names facts use:
// - "resnet50": torchvision ResNet-50 (v1.5, stride on the 3x3 convs),
//   input float[batch, 3, 224, 224], 1000 classes;
// - "bert_base", "bert_large": Hugging Face BertModel (12 layers x 768, 12
//   heads / 24 x 1024, 16 heads; vocabulary 30522), int64 input_ids,
//   token_type_ids and attention_mask [batch, seq], the pooler included;
// - "vit_b16": ViT-B/16 at 224 x 224 (12 layers x 768, 197 tokens), 1000
//   classes;
// - "swin_tiny": Swin-T (patch 4, window 7, depths 2-2-6-2, dims 96-768,
//   heads 3-24, shifted windows by Slice + Concat), 224 x 224, 1000 classes;
// - "roformer_v2_small": junnyu/roformer_v2_chinese_char_small as PopRT's
//   benchmark exports it (6 layers x 384, 6 heads, FFN 1536 ReLU, no biases,
//   RMS norm without gain, rotary Q/K, vocabulary 12000), 2 classes;
// - "dense_4096_1024": one Dense layer, x float[batch, 4096] x W[4096, 1024]
//   + b[1024] (the auto-pipeline test's layer).
// `seq` is the sequence length of the text models (ignored by the others).
// InvalidArgument for another name or batch/seq < 1.
absl::StatusOr<onnx::ModelProto> BuildCalibrationModel(const std::string& name,
                                                       int64_t batch,
                                                       int64_t seq);

// The names above.
std::vector<std::string> CalibrationModelNames();

}  // namespace autoshard::testing

#endif  // AUTOSHARD_TESTS_CALIBRATION_MODELS_H_
