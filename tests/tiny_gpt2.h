// GPT-2 in miniature with a tied embedding (issue 29), for tests: the
// shape of bench/make_gpt2_model.py --tied at sizes a unit test plans in
// moments.
#ifndef AUTOSHARD_TESTS_TINY_GPT2_H_
#define AUTOSHARD_TESTS_TINY_GPT2_H_

#include <cstdint>

#include "onnx/onnx_pb.h"

namespace autoshard::testing {

// GPT-2 in miniature: `layers` blocks of width d (one attention head),
// vocabulary v, sequence s; weights inline, zeros. Each block: LayerNorm
// (ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt, Div, Mul, Add), c_attn
// MatMul + Add split into q, k, v, q k^T / sqrt(d) + causal mask, Softmax,
// times v, c_proj, residual Add, LayerNorm, c_fc, tanh GELU, c_proj,
// residual Add. Every block has its own constants, as torch's export does.
// The token embedding `transformer.wte.weight` [v, d] is read by the first
// Gather (/wte/Gather) and by the LM head (/lm_head/Gemm, transB = 1, on
// the final LayerNorm reshaped to [s, d]); block i's last node is
// /h.<i>/Add_1, the final LayerNorm's /ln_f/Add_1, the model's last node
// /lm_head/Reshape_1 (output "logits" [1, s, v]).
onnx::ModelProto TinyTiedGpt2(int layers, int64_t d, int64_t v, int64_t s);

}  // namespace autoshard::testing

#endif  // AUTOSHARD_TESTS_TINY_GPT2_H_
