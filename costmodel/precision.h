// The precision tensors are costed at (--precision). A public header:
// sharder/autoshard.h includes it and `cmake --install` installs it.
#ifndef AUTOSHARD_COSTMODEL_PRECISION_H_
#define AUTOSHARD_COSTMODEL_PRECISION_H_

namespace autoshard {

// kFp16: FLOAT (and DOUBLE) tensors are costed at 2 bytes an element, as
// PopRT converts models to fp16 before compiling; kFp32: at their own size.
enum class Precision { kFp32, kFp16 };

}  // namespace autoshard

#endif  // AUTOSHARD_COSTMODEL_PRECISION_H_
