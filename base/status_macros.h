// Status helpers that Debian's Abseil (20220623) does not ship.
#ifndef AUTOSHARD_BASE_STATUS_MACROS_H_
#define AUTOSHARD_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define AUTOSHARD_CONCAT_INNER_(a, b) a##b
#define AUTOSHARD_CONCAT_(a, b) AUTOSHARD_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define RETURN_IF_ERROR(expr)          \
  do {                                 \
    ::absl::Status _status = (expr);   \
    if (!_status.ok()) return _status; \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, Foo());` assigns the value of an absl::StatusOr
// or returns its error from the enclosing function.
#define ASSIGN_OR_RETURN(lhs, expr)                                         \
  AUTOSHARD_ASSIGN_OR_RETURN_IMPL_(AUTOSHARD_CONCAT_(_statusor_, __LINE__), \
                                   lhs, expr)
#define AUTOSHARD_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                     \
  if (!tmp.ok()) return tmp.status();                    \
  lhs = std::move(tmp).value()

#endif  // AUTOSHARD_BASE_STATUS_MACROS_H_
