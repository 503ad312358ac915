# The CUDA backend (src/backend/cuda). Built when HWT_CUDA is ON, or AUTO and nvcc exists.
set(HWT_HAVE_CUDA OFF)
if(NOT HWT_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(HWT_HAVE_CUDA ON)
  elseif(HWT_CUDA STREQUAL "ON")
    message(FATAL_ERROR "HWT_CUDA=ON but no CUDA compiler was found")
  endif()
endif()

# Every .cu under src/, plus host-side .cpp of the CUDA backend (they include CUDA headers).
file(GLOB_RECURSE HWT_CUDA_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/*.cu
     ${CMAKE_SOURCE_DIR}/src/backend/cuda/*.cpp)
if(HWT_HAVE_CUDA AND HWT_CUDA_SOURCES)
  # Hopper (H100/H200) with its architecture-specific instructions (wgmma) unless the caller
  # chose: -DCMAKE_CUDA_ARCHITECTURES=80 etc. Without 90a the attention runs its generic kernels.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90a)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  # Compiled into hwt_lib: the CUDA backend implements the same Backend interface.
  target_sources(hwt_lib PRIVATE ${HWT_CUDA_SOURCES})
  # The target exists before CUDA is enabled, so its CUDA properties are set here explicitly.
  # CMake 3.25 knows no C++20 flag for nvcc 13; the kernels need C++17 only.
  set_target_properties(hwt_lib PROPERTIES CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}"
                                           CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
  target_compile_options(hwt_lib PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr
                         -Xcompiler=-Wall,-Wextra -lineinfo>)
  target_compile_definitions(hwt_lib PUBLIC HWT_WITH_CUDA=1)
  if("90a" IN_LIST CMAKE_CUDA_ARCHITECTURES)
    target_compile_definitions(hwt_lib PRIVATE HWT_CUDA_SM90A=1)
  endif()
  target_link_libraries(hwt_lib PUBLIC CUDA::cudart CUDA::cublasLt)
  message(STATUS "hwt: CUDA backend enabled (architectures ${CMAKE_CUDA_ARCHITECTURES})")
else()
  message(STATUS "hwt: CUDA backend disabled")
endif()
