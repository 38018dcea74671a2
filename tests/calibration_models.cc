#include "tests/calibration_models.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "tests/graph_builder.h"

namespace autoshard::testing {
namespace {

using B = GraphBuilder;
using Dims = std::vector<int64_t>;

std::string Conv(B& b, const std::string& x, int64_t cin, int64_t cout,
                 int64_t k, int64_t stride, int64_t pad, const std::string& p) {
  const std::string w = b.Weight(p + ".weight", {cout, cin, k, k});
  const std::string bias = b.Weight(p + ".bias", {cout});
  onnx::NodeProto* n = b.Node("Conv", {x, w, bias}, p);
  B::IntList(n, "kernel_shape", {k, k});
  B::IntList(n, "strides", {stride, stride});
  B::IntList(n, "pads", {pad, pad, pad, pad});
  return n->output(0);
}

// torchvision's Bottleneck with BatchNormalization folded into the convs.
std::string Bottleneck(B& b, const std::string& x, int64_t cin, int64_t width,
                       int64_t stride, bool downsample, const std::string& p) {
  std::string y =
      b.Op("Relu", {Conv(b, x, cin, width, 1, 1, 0, p + ".conv1")}, p);
  y = b.Op("Relu", {Conv(b, y, width, width, 3, stride, 1, p + ".conv2")}, p);
  y = Conv(b, y, width, 4 * width, 1, 1, 0, p + ".conv3");
  const std::string shortcut =
      downsample ? Conv(b, x, cin, 4 * width, 1, stride, 0, p + ".downsample")
                 : x;
  return b.Op("Relu", {b.Op("Add", {y, shortcut}, p)}, p);
}

onnx::ModelProto ResNet50(int64_t batch) {
  B b("resnet50");
  std::string x = b.Input("input", {batch, 3, 224, 224});
  x = b.Op("Relu", {Conv(b, x, 3, 64, 7, 2, 3, "conv1")}, "stem");
  onnx::NodeProto* pool = b.Node("MaxPool", {x}, "stem");
  B::IntList(pool, "kernel_shape", {3, 3});
  B::IntList(pool, "strides", {2, 2});
  B::IntList(pool, "pads", {1, 1, 1, 1});
  x = pool->output(0);
  int64_t cin = 64;
  const int64_t blocks[] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t width = int64_t{64} << stage;
    for (int64_t i = 0; i < blocks[stage]; ++i) {
      x = Bottleneck(b, x, cin, width, i == 0 && stage > 0 ? 2 : 1, i == 0,
                     absl::StrCat("layer", stage + 1, ".", i));
      cin = 4 * width;
    }
  }
  x = b.Op("GlobalAveragePool", {x}, "head");
  x = b.Op("Flatten", {x}, "head");
  onnx::NodeProto* fc = b.Node(
      "Gemm",
      {x, b.Weight("fc.weight", {1000, 2048}), b.Weight("fc.bias", {1000})},
      "head");
  B::Int(fc, "transB", 1);
  b.Output(fc->output(0), {batch, 1000});
  return b.Take();
}

std::string ReduceMean(B& b, const std::string& x, const std::string& p,
                       int64_t axis = -1, int64_t keepdims = 1) {
  onnx::NodeProto* n = b.Node("ReduceMean", {x}, p);
  B::IntList(n, "axes", {axis});
  B::Int(n, "keepdims", keepdims);
  return n->output(0);
}

// PyTorch's LayerNorm as exported at opset 13 (9 nodes); without `dim`, the
// RMS norm without gain of RoFormerV2 (5 nodes).
std::string Norm(B& b, const std::string& x, int64_t dim,
                 const std::string& p) {
  const std::string centred =
      dim > 0 ? b.Op("Sub", {x, ReduceMean(b, x, p)}, p) : x;
  const std::string sq = b.Op("Pow", {centred, b.Scalar(2)}, p);
  const std::string sd = b.Op(
      "Sqrt", {b.Op("Add", {ReduceMean(b, sq, p), b.Scalar(1e-12f)}, p)}, p);
  std::string y = b.Op("Div", {centred, sd}, p);
  if (dim <= 0) return y;
  y = b.Op("Mul", {y, b.Weight(p + ".weight", {dim})}, p);
  return b.Op("Add", {y, b.Weight(p + ".bias", {dim})}, p);
}

// x @ W (+ bias).
std::string Linear(B& b, const std::string& x, int64_t in, int64_t out,
                   const std::string& p, bool bias = true) {
  std::string y = b.Op("MatMul", {x, b.Weight(p + ".weight", {in, out})}, p);
  return bias ? b.Op("Add", {y, b.Weight(p + ".bias", {out})}, p) : y;
}

// GELU with erf, as exported (Div, Erf, Add, Mul, Mul).
std::string Gelu(B& b, const std::string& x, const std::string& p) {
  const std::string e =
      b.Op("Erf", {b.Op("Div", {x, b.Scalar(std::sqrt(2.0f))}, p)}, p);
  const std::string y = b.Op("Mul", {x, b.Op("Add", {e, b.Scalar(1)}, p)}, p);
  return b.Op("Mul", {y, b.Scalar(0.5f)}, p);
}

std::string Transpose(B& b, const std::string& x, Dims perm,
                      const std::string& p) {
  return B::IntList(b.Node("Transpose", {x}, p), "perm", perm)->output(0);
}

std::string Reshape(B& b, const std::string& x, Dims shape,
                    const std::string& p) {
  return b.Op("Reshape", {x, b.Ints(shape)}, p);
}

// Interleaved rotary embedding of RoFormer on q or k [n, heads, seq, d]:
// x * cos + rotate_every_two(x) * sin with constant sin/cos tables.
std::string Rotary(B& b, const std::string& x, Dims shape,
                   const std::string& cos, const std::string& sin,
                   const std::string& p) {
  auto every_two = [&](int64_t start) {
    return b.Op("Unsqueeze",
                {b.Op("Slice",
                      {x, b.Ints({start}), b.Ints({shape[3]}), b.Ints({3}),
                       b.Ints({2})},
                      p),
                 b.Ints({4})},
                p);
  };
  const std::string odd = b.Op("Neg", {every_two(1)}, p);
  onnx::NodeProto* pair = b.Node("Concat", {odd, every_two(0)}, p);
  B::Int(pair, "axis", 4);
  const std::string rotated = Reshape(b, pair->output(0), shape, p);
  return b.Op("Add", {b.Op("Mul", {x, cos}, p), b.Op("Mul", {rotated, sin}, p)},
              p);
}

struct Attention {
  Attention(int64_t n, int64_t seq, int64_t dim, int64_t heads)
      : n(n), seq(seq), dim(dim), heads(heads) {}
  int64_t n, seq, dim, heads;
  bool bias = true;
  std::string mask;               // additive [n, 1, 1, seq], or empty
  std::string rel_bias;           // additive [1, heads, seq, seq], or empty
  std::string cos, sin;           // rotary tables, or empty
  std::string window_mask;        // Swin's shifted-window mask, or empty
  int64_t windows_per_image = 1;  // with window_mask
};

// Multi-head self-attention on x [n, seq, dim], output projection included.
std::string SelfAttention(B& b, const std::string& x, const Attention& a,
                          const std::string& p) {
  const int64_t d = a.dim / a.heads;
  const Dims split = {a.n, a.seq, a.heads, d};
  auto heads = [&](const std::string& name, Dims perm) {
    const std::string y = Linear(b, x, a.dim, a.dim, p + "." + name, a.bias);
    return Transpose(b, Reshape(b, y, split, p), perm, p);
  };
  std::string q = heads("query", {0, 2, 1, 3});
  std::string k = heads("key", {0, 2, 1, 3});
  const std::string v = heads("value", {0, 2, 1, 3});
  if (!a.cos.empty()) {
    const Dims shape = {a.n, a.heads, a.seq, d};
    q = Rotary(b, q, shape, a.cos, a.sin, p);
    k = Rotary(b, k, shape, a.cos, a.sin, p);
  }
  std::string s = b.Op("MatMul", {q, Transpose(b, k, {0, 1, 3, 2}, p)}, p);
  s = b.Op("Div", {s, b.Scalar(std::sqrt(static_cast<float>(d)))}, p);
  if (!a.rel_bias.empty()) s = b.Op("Add", {s, a.rel_bias}, p);
  if (!a.window_mask.empty()) {
    const int64_t images = a.n / a.windows_per_image;
    s = Reshape(b, s, {images, a.windows_per_image, a.heads, a.seq, a.seq}, p);
    s = b.Op("Add", {s, a.window_mask}, p);
    s = Reshape(b, s, {a.n, a.heads, a.seq, a.seq}, p);
  }
  if (!a.mask.empty()) s = b.Op("Add", {s, a.mask}, p);
  s = B::Int(b.Node("Softmax", {s}, p), "axis", -1)->output(0);
  std::string ctx = Transpose(b, b.Op("MatMul", {s, v}, p), {0, 2, 1, 3}, p);
  ctx = Reshape(b, ctx, {a.n, a.seq, a.dim}, p);
  return Linear(b, ctx, a.dim, a.dim, p + ".output", a.bias);
}

// BERT's additive mask from attention_mask [n, seq]: (1 - mask) x -10000.
std::string ExtendedMask(B& b, const std::string& mask, const std::string& p) {
  std::string m = b.Op("Unsqueeze", {mask, b.Ints({1, 2})}, p);
  m = B::Int(b.Node("Cast", {m}, p), "to", onnx::TensorProto::FLOAT)->output(0);
  m = b.Op("Sub", {b.Scalar(1), m}, p);
  return b.Op("Mul", {m, b.Scalar(-10000)}, p);
}

onnx::ModelProto Bert(int64_t layers, int64_t dim, int64_t heads, int64_t n,
                      int64_t seq) {
  B b(absl::StrCat("bert_", layers, "x", dim));
  const int32_t i64 = onnx::TensorProto::INT64;
  const std::string ids = b.Input("input_ids", {n, seq}, i64);
  const std::string types = b.Input("token_type_ids", {n, seq}, i64);
  const std::string mask = b.Input("attention_mask", {n, seq}, i64);
  const std::string p = "embeddings";
  std::string x =
      b.Op("Gather", {b.Weight(p + ".word_embeddings", {30522, dim}), ids}, p);
  const std::string pos = b.Op(
      "Gather",
      {b.Weight(p + ".position_embeddings", {512, dim}),
       Reshape(b, b.Op("Range", {b.Ints({0}), b.Ints({seq}), b.Ints({1})}, p),
               {1, seq}, p)},
      p);
  x = b.Op(
      "Add",
      {x, b.Op("Gather",
               {b.Weight(p + ".token_type_embeddings", {2, dim}), types}, p)},
      p);
  x = Norm(b, b.Op("Add", {x, pos}, p), dim, p + ".LayerNorm");
  Attention a{n, seq, dim, heads};
  a.mask = ExtendedMask(b, mask, "mask");
  for (int64_t l = 0; l < layers; ++l) {
    const std::string q = absl::StrCat("encoder.layer.", l);
    std::string y = SelfAttention(b, x, a, q + ".attention");
    x = Norm(b, b.Op("Add", {y, x}, q), dim, q + ".attention.LayerNorm");
    y = Gelu(b, Linear(b, x, dim, 4 * dim, q + ".intermediate"), q);
    y = Linear(b, y, 4 * dim, dim, q + ".output");
    x = Norm(b, b.Op("Add", {y, x}, q), dim, q + ".output.LayerNorm");
  }
  b.Output(x, {n, seq, dim});
  std::string cls =
      B::Int(b.Node("Gather", {x, b.Ints({0})}, "pooler"), "axis", 1)
          ->output(0);
  cls = b.Op("Tanh", {Linear(b, cls, dim, dim, "pooler.dense")}, "pooler");
  b.Output(cls, {n, 1, dim});
  return b.Take();
}

// A pre-norm transformer block of ViT on x [n, seq, dim].
std::string VitBlock(B& b, const std::string& x, const Attention& a,
                     const std::string& p) {
  std::string y =
      SelfAttention(b, Norm(b, x, a.dim, p + ".norm1"), a, p + ".attn");
  const std::string r = b.Op("Add", {x, y}, p);
  y = Gelu(b,
           Linear(b, Norm(b, r, a.dim, p + ".norm2"), a.dim, 4 * a.dim,
                  p + ".mlp.fc1"),
           p);
  return b.Op("Add", {r, Linear(b, y, 4 * a.dim, a.dim, p + ".mlp.fc2")}, p);
}

onnx::ModelProto VitB16(int64_t n) {
  B b("vit_b16");
  const int64_t dim = 768, tokens = 197;
  std::string x = b.Input("pixel_values", {n, 3, 224, 224});
  x = Conv(b, x, 3, dim, 16, 16, 0, "patch_embed.proj");
  x = Transpose(b, Reshape(b, x, {n, dim, 196}, "patch_embed"), {0, 2, 1},
                "patch_embed");
  const std::string cls =
      b.Op("Expand", {b.Weight("cls_token", {1, 1, dim}), b.Ints({n, 1, dim})},
           "embed");
  onnx::NodeProto* cat = b.Node("Concat", {cls, x}, "embed");
  B::Int(cat, "axis", 1);
  x = b.Op("Add", {cat->output(0), b.Weight("pos_embed", {1, tokens, dim})},
           "embed");
  const Attention a{n, tokens, dim, 12};
  for (int l = 0; l < 12; ++l)
    x = VitBlock(b, x, a, absl::StrCat("blocks.", l));
  x = Norm(b, x, dim, "norm");
  x = B::Int(b.Node("Gather", {x, b.Ints({0})}, "head"), "axis", 1)->output(0);
  b.Output(Linear(b, x, dim, 1000, "head"), {n, 1, 1000});
  return b.Take();
}

// torch.roll(x, shift, axis) on a static dim of `size`, as Slice + Concat.
std::string Roll(B& b, const std::string& x, int64_t shift, int64_t axis,
                 int64_t size, const std::string& p) {
  const int64_t cut = ((size - shift) % size + size) % size;
  auto part = [&](int64_t from, int64_t to) {
    return b.Op("Slice", {x, b.Ints({from}), b.Ints({to}), b.Ints({axis})}, p);
  };
  onnx::NodeProto* cat = b.Node("Concat", {part(cut, size), part(0, cut)}, p);
  return B::Int(cat, "axis", axis)->output(0);
}

// One Swin block on x [n, res*res, dim]: (shifted) window attention with a
// relative-position bias, then the MLP, each with its residual.
std::string SwinBlock(B& b, const std::string& x, int64_t n, int64_t res,
                      int64_t dim, int64_t heads, bool shift,
                      const std::string& p) {
  const int64_t w = 7, nw = (res / w) * (res / w), s = shift ? w / 2 : 0;
  std::string y =
      Reshape(b, Norm(b, x, dim, p + ".norm1"), {n, res, res, dim}, p);
  if (s > 0) y = Roll(b, Roll(b, y, -s, 1, res, p), -s, 2, res, p);
  y = Reshape(b, y, {n, res / w, w, res / w, w, dim}, p);
  y = Transpose(b, y, {0, 1, 3, 2, 4, 5}, p);
  y = Reshape(b, y, {n * nw, w * w, dim}, p);
  Attention a{n * nw, w * w, dim, heads};
  a.rel_bias =
      b.Weight(p + ".relative_position_bias", {1, heads, w * w, w * w});
  if (s > 0) {
    a.window_mask = b.Weight(p + ".attn_mask", {1, nw, 1, w * w, w * w});
    a.windows_per_image = nw;
  }
  y = SelfAttention(b, y, a, p + ".attn");
  y = Reshape(b, y, {n, res / w, res / w, w, w, dim}, p);
  y = Transpose(b, y, {0, 1, 3, 2, 4, 5}, p);
  y = Reshape(b, y, {n, res, res, dim}, p);
  if (s > 0) y = Roll(b, Roll(b, y, s, 1, res, p), s, 2, res, p);
  const std::string r =
      b.Op("Add", {x, Reshape(b, y, {n, res * res, dim}, p)}, p);
  y = Gelu(
      b, Linear(b, Norm(b, r, dim, p + ".norm2"), dim, 4 * dim, p + ".mlp.fc1"),
      p);
  return b.Op("Add", {r, Linear(b, y, 4 * dim, dim, p + ".mlp.fc2")}, p);
}

// Swin's patch merging: the 2 x 2 neighbours concatenated (strided Slices),
// LayerNorm, then a 4C -> 2C Linear without bias.
std::string PatchMerging(B& b, const std::string& x, int64_t n, int64_t res,
                         int64_t dim, const std::string& p) {
  const std::string grid = Reshape(b, x, {n, res, res, dim}, p);
  std::vector<std::string> parts;
  for (auto [r0, c0] : {std::pair{0, 0}, {1, 0}, {0, 1}, {1, 1}}) {
    parts.push_back(b.Op("Slice",
                         {grid, b.Ints({r0, c0}), b.Ints({res, res}),
                          b.Ints({1, 2}), b.Ints({2, 2})},
                         p));
  }
  std::string y = B::Int(b.Node("Concat", parts, p), "axis", -1)->output(0);
  y = Reshape(b, y, {n, res * res / 4, 4 * dim}, p);
  return Linear(b, Norm(b, y, 4 * dim, p + ".norm"), 4 * dim, 2 * dim,
                p + ".reduction", false);
}

onnx::ModelProto Swin(int64_t n) {
  B b("swin_tiny");
  std::string x = b.Input("pixel_values", {n, 3, 224, 224});
  x = Conv(b, x, 3, 96, 4, 4, 0, "patch_embed.proj");
  x = Transpose(b, Reshape(b, x, {n, 96, 3136}, "patch_embed"), {0, 2, 1},
                "patch_embed");
  x = Norm(b, x, 96, "patch_embed.norm");
  const int64_t depths[] = {2, 2, 6, 2};
  int64_t res = 56, dim = 96, heads = 3;
  for (int stage = 0; stage < 4; ++stage) {
    for (int64_t i = 0; i < depths[stage]; ++i) {
      // No shift when the window covers the whole image (the last stage).
      x = SwinBlock(b, x, n, res, dim, heads, i % 2 == 1 && res > 7,
                    absl::StrCat("layers.", stage, ".blocks.", i));
    }
    if (stage < 3) {
      x = PatchMerging(b, x, n, res, dim, absl::StrCat("layers.", stage));
      res /= 2;
      dim *= 2;
      heads *= 2;
    }
  }
  x = ReduceMean(b, Norm(b, x, dim, "norm"), "avgpool", 1, 0);
  b.Output(Linear(b, x, dim, 1000, "head"), {n, 1000});
  return b.Take();
}

onnx::ModelProto RoFormerV2Small(int64_t n, int64_t seq) {
  B b("roformer_v2_small");
  const int64_t dim = 384, heads = 6, d = dim / heads;
  const int32_t i64 = onnx::TensorProto::INT64;
  const std::string ids = b.Input("input_ids", {n, seq}, i64);
  const std::string types = b.Input("token_type_ids", {n, seq}, i64);
  const std::string mask = b.Input("attention_mask", {n, seq}, i64);
  std::string x = b.Op(
      "Add",
      {b.Op("Gather", {b.Weight("word_embeddings", {12000, dim}), ids}, "emb"),
       b.Op("Gather", {b.Weight("token_type_embeddings", {2, dim}), types},
            "emb")},
      "emb");
  x = Norm(b, x, 0, "emb.norm");
  Attention a{n, seq, dim, heads};
  a.bias = false;
  a.mask = ExtendedMask(b, mask, "mask");
  a.cos = b.Weight("rotary.cos", {1, 1, seq, d});
  a.sin = b.Weight("rotary.sin", {1, 1, seq, d});
  for (int l = 0; l < 6; ++l) {
    const std::string p = absl::StrCat("encoder.layer.", l);
    x = Norm(b, b.Op("Add", {x, SelfAttention(b, x, a, p + ".attention")}, p),
             0, p + ".norm1");
    std::string y =
        b.Op("Relu", {Linear(b, x, dim, 1536, p + ".ffn.up", false)}, p);
    y = Linear(b, y, 1536, dim, p + ".ffn.down", false);
    x = Norm(b, b.Op("Add", {x, y}, p), 0, p + ".norm2");
  }
  x = B::Int(b.Node("Gather", {x, b.Ints({0})}, "head"), "axis", 1)->output(0);
  x = Linear(b, x, dim, dim, "head.dense");
  b.Output(Linear(b, x, dim, 2, "head.out"), {n, 1, 2});
  return b.Take();
}

onnx::ModelProto Dense(int64_t n) {
  B b("dense_4096_1024");
  const std::string x = b.Input("x", {n, 4096});
  b.Output(Linear(b, x, 4096, 1024, "dense"), {n, 1024});
  return b.Take();
}

}  // namespace

std::vector<std::string> CalibrationModelNames() {
  return {"resnet50",  "bert_base",         "bert_large",     "vit_b16",
          "swin_tiny", "roformer_v2_small", "dense_4096_1024"};
}

absl::StatusOr<onnx::ModelProto> BuildCalibrationModel(const std::string& name,
                                                       int64_t batch,
                                                       int64_t seq) {
  if (batch < 1 || seq < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": batch and seq must be >= 1"));
  }
  if (name == "resnet50") return ResNet50(batch);
  if (name == "bert_base") return Bert(12, 768, 12, batch, seq);
  if (name == "bert_large") return Bert(24, 1024, 16, batch, seq);
  if (name == "vit_b16") return VitB16(batch);
  if (name == "swin_tiny") return Swin(batch);
  if (name == "roformer_v2_small") return RoFormerV2Small(batch, seq);
  if (name == "dense_4096_1024") return Dense(batch);
  return absl::InvalidArgumentError(
      absl::StrCat("no calibration model named '", name, "'"));
}

}  // namespace autoshard::testing
