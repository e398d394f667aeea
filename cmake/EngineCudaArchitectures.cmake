# Which GPU architectures the CUDA backend is compiled for, when CMAKE_CUDA_ARCHITECTURES (the
# one cache variable to set by hand, e.g. -DCMAKE_CUDA_ARCHITECTURES=86) is not given:
#  - a GPU is visible at configure time (nvidia-smi answers): code for exactly that GPU, as
#    CMake's "native" would choose, spelled as numbers (9.0 -> 90) so the rest of the build
#    and the run-time refusal can read the list; one build folder per machine.
#  - no GPU (a build machine, a container, CI): a fat binary with machine code (SASS) for every
#    architecture from Turing to Hopper and PTX for the newest, which the driver of a future
#    GPU compiles at first use.
# Entries as CMake writes them: "86-real" SASS only, "90-virtual" PTX only, "90" both.
set(ENGINE_FAT_CUDA_ARCHITECTURES "75-real;80-real;86-real;89-real;90-real;90-virtual")

# nvidia-smi's compute_cap query: one "major.minor" line per GPU ("9.0"). Anything else
# (no driver, no GPU, an old driver without the field) means no GPU is visible.
function(engine_cuda_architectures_from_query out query_result query_output)
  set(archs "")
  if(query_result EQUAL 0)
    string(REPLACE "\n" ";" lines "${query_output}")
    foreach(line IN LISTS lines)
      string(STRIP "${line}" line)
      if(line MATCHES "^([0-9]+)\\.([0-9]+)$")
        list(APPEND archs "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
      elseif(NOT line STREQUAL "")
        set(archs "")
        break()
      endif()
    endforeach()
  endif()
  list(REMOVE_DUPLICATES archs)
  if(archs STREQUAL "")
    set(${out} "${ENGINE_FAT_CUDA_ARCHITECTURES}" PARENT_SCOPE)
  else()
    set(${out} "${archs}" PARENT_SCOPE)
  endif()
endfunction()

# The Hopper-only kernels (wgmma, TMA, clusters: kernels/matmul/v10, v11) need the
# architecture-specific target sm_90a, whose code runs on compute capability 9.0 alone. They
# are compiled, as machine code for sm_90a, only where the list has machine code for 9.0;
# elsewhere they are absent from the build.
function(engine_wants_sm90a out architectures)
  set(result OFF)
  foreach(arch IN LISTS architectures)
    if(arch MATCHES "^90(-real)?$" OR arch STREQUAL "all" OR arch STREQUAL "all-major")
      set(result ON)
    endif()
  endforeach()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# Sets CMAKE_CUDA_ARCHITECTURES (before enable_language(CUDA)) unless the user did, and says
# what was chosen and how to change it. "native" given by hand is resolved here too, so that
# the list is numbers for the sm_90a choice and the run-time refusal.
macro(engine_choose_cuda_architectures)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "native")
    find_program(ENGINE_NVIDIA_SMI nvidia-smi)
    set(_engine_query_result 1)
    set(_engine_query_output "")
    if(ENGINE_NVIDIA_SMI)
      execute_process(COMMAND ${ENGINE_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                      RESULT_VARIABLE _engine_query_result OUTPUT_VARIABLE _engine_query_output
                      ERROR_QUIET TIMEOUT 20)
    endif()
    engine_cuda_architectures_from_query(_engine_archs "${_engine_query_result}" "${_engine_query_output}")
    if(_engine_archs STREQUAL ENGINE_FAT_CUDA_ARCHITECTURES)
      set(_engine_reason "no GPU visible at configure time: Turing (75) to Hopper (90), PTX for the newest")
    else()
      set(_engine_reason "the GPU visible at configure time")
    endif()
    set(CMAKE_CUDA_ARCHITECTURES "${_engine_archs}" CACHE STRING
        "GPU architectures to build for, e.g. 86 or 75-real;90-real (cmake/EngineCudaArchitectures.cmake)" FORCE)
    set(ENGINE_CUDA_ARCHITECTURES_CHOSEN "${_engine_archs}" CACHE INTERNAL "")
    set(ENGINE_CUDA_ARCHITECTURES_REASON "${_engine_reason}" CACHE INTERNAL "")
  endif()
  if(CMAKE_CUDA_ARCHITECTURES STREQUAL ENGINE_CUDA_ARCHITECTURES_CHOSEN)
    set(_engine_reason "${ENGINE_CUDA_ARCHITECTURES_REASON}")
  else()
    set(_engine_reason "set by hand")
  endif()
  message(STATUS "CUDA architectures: ${CMAKE_CUDA_ARCHITECTURES} (${_engine_reason}); "
                 "to change: -DCMAKE_CUDA_ARCHITECTURES=<list>, e.g. 86 for one RTX 30 card")
endmacro()
