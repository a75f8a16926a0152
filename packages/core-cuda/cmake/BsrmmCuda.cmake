# Decides whether the CUDA backend is built and how it is compiled.
#
# BSRMM_CUDA=AUTO enables CUDA when a CUDA compiler is found (CMAKE_CUDA_COMPILER, CUDACXX or
# nvcc on PATH) and src/cuda holds sources; ON makes a missing compiler an error; OFF never
# builds it. Sets BSRMM_WITH_CUDA and BSRMM_CUDA_SOURCES, and defines bsrmm_configure_cuda().

set(BSRMM_WITH_CUDA OFF)
set(BSRMM_CUDA_SOURCES "")

if(NOT BSRMM_CUDA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "BSRMM_CUDA=${BSRMM_CUDA}: use AUTO, ON or OFF")
endif()

if(NOT BSRMM_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    if(BSRMM_CUDA STREQUAL "ON")
      message(FATAL_ERROR "BSRMM_CUDA=ON but no CUDA compiler was found: set CMAKE_CUDA_COMPILER "
                          "or CUDACXX to nvcc")
    endif()
    message(STATUS "bsrmm: no CUDA compiler found, building the CPU backend only")
  else()
    # Kernels (.cu) and the backend's host code (.cpp) under src/cuda. The core only calls into
    # them when some exist: before the first kernel lands, the build stays CPU-only.
    file(GLOB_RECURSE BSRMM_CUDA_SOURCES CONFIGURE_DEPENDS
         "${CMAKE_CURRENT_SOURCE_DIR}/src/cuda/*.cu" "${CMAKE_CURRENT_SOURCE_DIR}/src/cuda/*.cpp")
    set(_bsrmm_kernels ${BSRMM_CUDA_SOURCES})
    list(FILTER _bsrmm_kernels INCLUDE REGEX "\\.cu$")
    if(NOT _bsrmm_kernels)
      if(BSRMM_CUDA STREQUAL "ON")
        message(FATAL_ERROR "BSRMM_CUDA=ON but src/cuda has no .cu sources")
      endif()
      message(STATUS "bsrmm: nvcc found but src/cuda has no .cu sources: CPU backend only")
      set(BSRMM_CUDA_SOURCES "")
    else()
      # Architectures are passed as explicit -gencode flags below; CMake adds none of its own.
      set(CMAKE_CUDA_ARCHITECTURES OFF)
      enable_language(CUDA)
      find_package(CUDAToolkit REQUIRED)
      set(BSRMM_WITH_CUDA ON)
    endif()
  endif()
endif()

# sm_90a: Hopper's TMA + wgmma kernels (arch-specific, no forward compatibility).
# sm_80: the portable mma.sync kernels for Ampere, Ada and Hopper.
# compute_80 PTX: lets newer GPUs JIT the portable kernels.
# The "=" spelling keeps CMake from merging the repeated -gencode flags.
set(BSRMM_CUDA_GENCODE
    -gencode=arch=compute_90a,code=sm_90a
    -gencode=arch=compute_80,code=sm_80
    -gencode=arch=compute_80,code=compute_80)

function(bsrmm_configure_cuda target)
  set_target_properties(${target} PROPERTIES
    CUDA_ARCHITECTURES OFF
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    CUDA_RUNTIME_LIBRARY Static)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:${BSRMM_CUDA_GENCODE} --expt-relaxed-constexpr -lineinfo>)
  if(BSRMM_PTXAS_VERBOSE)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xptxas=-v>)
  endif()
  # Static cudart: the library (and a wheel built on it) needs only the driver at run time.
  target_link_libraries(${target} PRIVATE CUDA::cudart_static)
endfunction()
