# `cmake --install` (issue 19; docs/custom-models.md): the executable, the headers, the
# libraries and a CMake package, so that another project can build a chens executable with its
# own user models without chens's sources:
#
#   find_package(chens REQUIRED)                  # -DCMAKE_PREFIX_PATH=<prefix>
#   chens_add_executable(my-chens)
#   chens_add_model(my-chens MODEL MySpec HEADER my_spec.hpp)
#
# Layout under the prefix: bin/chens; include/chens/ (the per-instance code); include/chens/host/
# (what a generated unit includes: the engines, the dispatch, the study, the CUDA engine's
# .cuh and this build's generated headers); lib/ (static libraries); lib/cmake/chens/ (the
# package, ChensAddModel.cmake and its templates); share/chens/ (the CLI's main.cpp, and
# plot_study.py, which an installed chens's `chens plot` runs).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(chens_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/chens)
set(chens_host_include ${CMAKE_INSTALL_INCLUDEDIR}/chens/host)

install(TARGETS chens RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/chens DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(DIRECTORY host/ DESTINATION ${chens_host_include} FILES_MATCHING PATTERN "*.hpp")
install(DIRECTORY ${chens_generated}/ DESTINATION ${chens_host_include} FILES_MATCHING PATTERN "*.hpp")
if(CHENS_HAVE_CUDA)
  install(DIRECTORY kernels/ DESTINATION ${chens_host_include} FILES_MATCHING PATTERN "*.cuh")
endif()
# (plot_study.py loads the work-precision table's module from beside it where installed.)
install(FILES host/cli/main.cpp scripts/plot_study.py python/chens/work_precision.py DESTINATION ${CMAKE_INSTALL_DATADIR}/chens)
install(FILES cmake/ChensAddModel.cmake cmake/custom_model_unit.in cmake/custom_model_registration.in
        DESTINATION ${chens_cmake_dir})

set(chens_exported chens_core chens_engine_support chens_host chens_cli ${chens_gpu_backend})
if(TARGET chens_cuda_support)  # the GPU engines' support library (kernels/CMakeLists.txt)
  list(APPEND chens_exported chens_cuda_support)
endif()
install(TARGETS ${chens_exported} EXPORT chensTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT chensTargets NAMESPACE chens:: DESTINATION ${chens_cmake_dir})

configure_package_config_file(cmake/chensConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/chensConfig.cmake
                              INSTALL_DESTINATION ${chens_cmake_dir} PATH_VARS CMAKE_INSTALL_DATADIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/chensConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/chensConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/chensConfigVersion.cmake
        DESTINATION ${chens_cmake_dir})
