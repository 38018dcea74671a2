// Sizes that saturate instead of overflowing: a huge or corrupt shape must
// not wrap around. A leaf (no ONNX header), so the cost model's headers
// (costmodel/device_model.h) use it without pulling ONNX's inference
// headers into every strategy.
#ifndef AUTOSHARD_BASE_SATURATING_H_
#define AUTOSHARD_BASE_SATURATING_H_

#include <cstdint>

namespace autoshard {

// a * b and a + b for non-negative sizes, clamped at INT64_MAX instead of
// overflowing.
inline int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return INT64_MAX;
  return out;
}
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return INT64_MAX;
  return out;
}

}  // namespace autoshard

#endif  // AUTOSHARD_BASE_SATURATING_H_
