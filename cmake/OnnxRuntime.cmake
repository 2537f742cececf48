# Imported target onnxruntime::onnxruntime from a release folder (include/ + lib/).
# scripts/setup.sh fills the default folder; -DORTKIT_ONNXRUNTIME_ROOT=... points at an
# official release (onnxruntime-linux-x64-1.29.0 or onnxruntime-linux-x64-gpu-1.29.0) instead.
set(_ort_root "${ORTKIT_ONNXRUNTIME_ROOT}")
find_path(ORTKIT_ONNXRUNTIME_INCLUDE_DIR onnxruntime_cxx_api.h
          PATHS "${_ort_root}/include" "${_ort_root}/include/onnxruntime" NO_DEFAULT_PATH)
find_library(ORTKIT_ONNXRUNTIME_LIBRARY NAMES onnxruntime PATHS "${_ort_root}/lib" NO_DEFAULT_PATH)
if(NOT ORTKIT_ONNXRUNTIME_INCLUDE_DIR OR NOT ORTKIT_ONNXRUNTIME_LIBRARY)
  message(FATAL_ERROR
    "ONNX Runtime not found under ORTKIT_ONNXRUNTIME_ROOT='${_ort_root}'.\n"
    "Run scripts/setup.sh to install it, or pass -DORTKIT_ONNXRUNTIME_ROOT=<folder with include/ and lib/>.")
endif()
add_library(onnxruntime::onnxruntime SHARED IMPORTED GLOBAL)
set_target_properties(onnxruntime::onnxruntime PROPERTIES
  IMPORTED_LOCATION "${ORTKIT_ONNXRUNTIME_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${ORTKIT_ONNXRUNTIME_INCLUDE_DIR}")
get_filename_component(ORTKIT_ONNXRUNTIME_LIBDIR "${ORTKIT_ONNXRUNTIME_LIBRARY}" DIRECTORY)
set(CMAKE_BUILD_RPATH "${ORTKIT_ONNXRUNTIME_LIBDIR}")
set(CMAKE_INSTALL_RPATH "${ORTKIT_ONNXRUNTIME_LIBDIR}")
message(STATUS "ONNX Runtime: ${ORTKIT_ONNXRUNTIME_LIBRARY}")
