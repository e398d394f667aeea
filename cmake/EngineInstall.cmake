# `cmake --install build --prefix DIR` puts the library, its headers under include/engine/, a
# CMake package and a pkg-config file into DIR. An outside project then needs only
#   find_package(engine CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE engine::engine)
# and gets the include paths, spdlog's definitions, OpenMP, and where the library was built with
# CUDA, the CUDA runtime, cuBLAS, cuDNN and NCCL through the target (tests/test_install.sh
# checks it).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ENGINE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/engine)
install(TARGETS engine EXPORT engineTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# Every header of the library's folders, as the sources include them ("core/ops.h").
foreach(folder core cpu nn datasets kernels)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${folder}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/engine/${folder}
          FILES_MATCHING PATTERN "*.h")
endforeach()
install(EXPORT engineTargets NAMESPACE engine:: DESTINATION ${ENGINE_CMAKE_DIR})

# What the config must find again for the target's dependencies.
set(ENGINE_CONFIG_WITH_CUDA ${ENGINE_WITH_CUDA})
set(ENGINE_CONFIG_WITH_CUDNN ${CUDNN_FOUND})
set(ENGINE_CONFIG_CUDNN_ROOT "")
if(CUDNN_FOUND)
  get_filename_component(ENGINE_CONFIG_CUDNN_ROOT "${CUDNN_INCLUDE_DIR}" DIRECTORY)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/engineConfig.cmake.in
  ${PROJECT_BINARY_DIR}/engineConfig.cmake INSTALL_DESTINATION ${ENGINE_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/engineConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/engineConfig.cmake ${PROJECT_BINARY_DIR}/engineConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindCUDNN.cmake
        DESTINATION ${ENGINE_CMAKE_DIR})

# pkg-config, for builds without CMake: the same flags, written out.
set(ENGINE_PC_LIBS "-lengine ${OpenMP_CXX_FLAGS}")
foreach(library IN LISTS BLAS_LIBRARIES)
  string(APPEND ENGINE_PC_LIBS " ${library}")
endforeach()
if(ENGINE_WITH_CUDA)
  string(APPEND ENGINE_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcublas -lcudart")
  if(CUDNN_FOUND)
    string(APPEND ENGINE_PC_LIBS " ${CUDNN_LIBRARY}")
  endif()
  if(ENGINE_WITH_NCCL)  # data parallelism (core/data_parallel.h)
    string(APPEND ENGINE_PC_LIBS " ${NCCL_LIBRARY}")
  endif()
  set(ENGINE_PC_CFLAGS "-DENGINE_WITH_CUDA -DENGINE_WITH_NVTX -I${CUDAToolkit_INCLUDE_DIRS}")
endif()
# The prefix relative to the .pc file, so an installed tree works wherever it is moved.
file(RELATIVE_PATH ENGINE_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file(${PROJECT_SOURCE_DIR}/cmake/engine.pc.in ${PROJECT_BINARY_DIR}/engine.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/engine.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
