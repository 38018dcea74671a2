# Finds Debian's pybind11 (pybind11-dev) for the Python the module is built
# for: Python_EXECUTABLE when given, else Debian's /usr/bin/python3, where
# python3-onnx and python3-pytest live (a pyenv or virtualenv python3 earlier
# on PATH has neither). Included by the top-level CMakeLists.txt before its
# AUTOSHARD_PYTHON option, whose default is pybind11_FOUND.
if(NOT DEFINED Python_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python_EXECUTABLE /usr/bin/python3 CACHE FILEPATH
    "The Python interpreter the autoshard module is built for")
endif()
find_package(Python 3.8 COMPONENTS Interpreter Development.Module QUIET)
set(pybind11_FOUND FALSE)
if(Python_FOUND)
  # pybind11 then uses the Python found above (FindPython, not the PATH's).
  set(PYBIND11_FINDPYTHON ON)
  find_package(pybind11 2.6 CONFIG QUIET)
endif()
