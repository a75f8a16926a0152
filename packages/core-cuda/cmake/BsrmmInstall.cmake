# install(): the library, the public headers, a CMake package (find_package(bsrmm CONFIG) gives
# bsrmm::bsrmm) and a pkg-config file for consumers that link the archive by hand (Rust).

include(CMakePackageConfigHelpers)

set(BSRMM_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/bsrmm")

install(TARGETS bsrmm EXPORT bsrmmTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/bsrmm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT bsrmmTargets NAMESPACE bsrmm:: DESTINATION ${BSRMM_CMAKE_DIR})

# A static bsrmm drags its private link dependencies (threads, static cudart) into every
# consumer, so the package finds them again; the toolkit used for this build is the default.
set(BSRMM_CUDA_TOOLKIT_ROOT "")
if(BSRMM_WITH_CUDA)
  get_filename_component(BSRMM_CUDA_TOOLKIT_ROOT "${CUDAToolkit_BIN_DIR}/.." ABSOLUTE)
endif()

configure_package_config_file(cmake/bsrmmConfig.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/bsrmmConfig.cmake"
  INSTALL_DESTINATION ${BSRMM_CMAKE_DIR})
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/bsrmmConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/bsrmmConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/bsrmmConfigVersion.cmake"
        DESTINATION ${BSRMM_CMAKE_DIR})

# libdl: the CPU dense fallback dlopens a CBLAS (and cudart static needs it too).
set(BSRMM_PC_LIBS_PRIVATE "-lstdc++ -lpthread -lm")
if(CMAKE_DL_LIBS)
  set(BSRMM_PC_LIBS_PRIVATE "${BSRMM_PC_LIBS_PRIVATE} -l${CMAKE_DL_LIBS}")
endif()
if(BSRMM_WITH_CUDA)
  set(BSRMM_PC_LIBS_PRIVATE "${CUDA_cudart_static_LIBRARY} -lrt ${BSRMM_PC_LIBS_PRIVATE}")
endif()
file(RELATIVE_PATH BSRMM_PC_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
configure_file(cmake/bsrmm.pc.in "${CMAKE_CURRENT_BINARY_DIR}/bsrmm.pc" @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/bsrmm.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
