// Conversions between the library's values and Python's for the extension
// autoshard._autoshard (python/module.cc): errors to Python exceptions,
// protobuf messages to plain dicts of Python numbers, strings and lists.
#ifndef AUTOSHARD_PYTHON_PY_CONVERT_H_
#define AUTOSHARD_PYTHON_PY_CONVERT_H_

#include <pybind11/pybind11.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace autoshard::python {

// Throws the Python exception for a failed `status`, with its message:
// ValueError for bad input or options (InvalidArgument, FailedPrecondition,
// OutOfRange), FileNotFoundError (NotFound), PermissionError
// (PermissionDenied), RuntimeError for the rest (Internal: a bug or an I/O
// failure). Must be called with the GIL held.
[[noreturn]] void RaiseStatus(const absl::Status& status);

// The value of `result`, or RaiseStatus of its error.
template <typename T>
T ValueOrRaise(absl::StatusOr<T> result) {
  if (!result.ok()) RaiseStatus(result.status());
  return *std::move(result);
}

// `message` as a dict keyed by its fields' proto names: every field (as
// protobuf's JSON mapping would print it with defaults), int64 as int,
// enums by name, repeated fields as lists, sub-messages as dicts (None when
// a singular one is unset), optional scalars unset as None.
pybind11::dict MessageToDict(const google::protobuf::Message& message);

}  // namespace autoshard::python

#endif  // AUTOSHARD_PYTHON_PY_CONVERT_H_
