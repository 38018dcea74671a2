// The classes of autoshard._autoshard (python/module.cc): Plan, Ipu, Memory
// and InspectReport, read-only views of the library's plan and reports whose
// figures are Python numbers (units in the names, as in proto/plan.proto).
#ifndef AUTOSHARD_PYTHON_PY_CLASSES_H_
#define AUTOSHARD_PYTHON_PY_CLASSES_H_

#include <pybind11/pybind11.h>

namespace autoshard::python {

// Adds the classes to `m`. Documented for Python in
// python/autoshard/__init__.pyi.
void BindClasses(pybind11::module_& m);

}  // namespace autoshard::python

#endif  // AUTOSHARD_PYTHON_PY_CLASSES_H_
