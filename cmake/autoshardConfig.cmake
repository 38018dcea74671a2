# autoshard's CMake package: find_package(autoshard) defines
# autoshard::autoshard (the public header <autoshard/autoshard.h> and the
# static libraries behind it). The libraries' own dependencies are found here,
# so a client needs no other find_package.
include(CMakeFindDependencyMacro)
find_dependency(Protobuf)
find_dependency(ONNX)
find_dependency(absl)
find_dependency(yaml-cpp)
include("${CMAKE_CURRENT_LIST_DIR}/autoshardTargets.cmake")
