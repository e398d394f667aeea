# Finds cuDNN: its header cudnn.h and its library libcudnn, for `--device cudnn`.
#
# Looks first under CUDNN_ROOT (a -D variable or an environment variable: a folder with include/
# and lib/), then in the CUDA Toolkit's folders, the system's, and the pip wheel
# (nvidia-cudnn-cu*) of a Python environment in a usual place. A wheel ships lib/libcudnn.so.9
# without the unversioned libcudnn.so link, so the versioned name is searched too.
#
# Defines CUDNN_FOUND, CUDNN_VERSION ("9.19.0"), CUDNN_INCLUDE_DIR, CUDNN_LIBRARY and the
# imported target CUDNN::cudnn.
file(GLOB _cudnn_wheels
  /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn
  /usr/local/lib/python3*/dist-packages/nvidia/cudnn
  /usr/lib/python3/dist-packages/nvidia/cudnn)

find_path(CUDNN_INCLUDE_DIR cudnn.h
  HINTS ${CUDNN_ROOT} $ENV{CUDNN_ROOT}
  PATHS ${CUDAToolkit_INCLUDE_DIRS} ${_cudnn_wheels}
  PATH_SUFFIXES include)
# NAMES_PER_DIR: the first folder holding either name wins, so CUDNN_ROOT beats the system.
find_library(CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 NAMES_PER_DIR
  HINTS ${CUDNN_ROOT} $ENV{CUDNN_ROOT}
  PATHS ${CUDAToolkit_LIBRARY_DIR} ${_cudnn_wheels}
  PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu)

if(CUDNN_INCLUDE_DIR AND EXISTS "${CUDNN_INCLUDE_DIR}/cudnn_version.h")
  file(STRINGS "${CUDNN_INCLUDE_DIR}/cudnn_version.h" _cudnn_version_lines
       REGEX "^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) +[0-9]+")
  foreach(_part MAJOR MINOR PATCHLEVEL)
    string(REGEX REPLACE ".*#define CUDNN_${_part} +([0-9]+).*" "\\1" _cudnn_${_part}
           "${_cudnn_version_lines}")
  endforeach()
  set(CUDNN_VERSION "${_cudnn_MAJOR}.${_cudnn_MINOR}.${_cudnn_PATCHLEVEL}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CUDNN
  REQUIRED_VARS CUDNN_LIBRARY CUDNN_INCLUDE_DIR
  VERSION_VAR CUDNN_VERSION)

if(CUDNN_FOUND AND NOT TARGET CUDNN::cudnn)
  add_library(CUDNN::cudnn UNKNOWN IMPORTED)
  set_target_properties(CUDNN::cudnn PROPERTIES
    IMPORTED_LOCATION "${CUDNN_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CUDNN_INCLUDE_DIR}")
endif()
mark_as_advanced(CUDNN_INCLUDE_DIR CUDNN_LIBRARY)
