# Run at build time (cmake -P, the chens_jit_config target of CMakeLists.txt): writes
# generated/dispatch/jit_config.hpp, what a system compiled on first use needs to be the
# built-in one's twin (dispatch/jit_systems.cpp): the compile command of a CPU unit of the
# systems list and of a CUDA one (from compile_commands.json: the same compiler, flags, definitions and include
# directories), the engine-support library it links, chens's version, and a hash of every
# source a unit can include, which keys the cache. The file is rewritten only when it changes.
#
# An installed chens (cmake --install, cmake/ChensInstall.cmake) compiles with the installed
# copies of the headers and the library instead of the build tree's: the directories below
# say where each is in both layouts (dispatch/jit_cache.cpp, jit::toolchain()).
#
# In: COMMANDS (compile_commands.json), OUT, SUPPORT_LIB, CUDA_SUPPORT_LIB (empty without CUDA), VERSION, COMPILER_ID (CMAKE_CXX_COMPILER_ID),
# SOURCE_DIR, GENERATED_DIR, BINARY_DIR, INSTALL_INCLUDEDIR, INSTALL_LIBDIR (relative to the prefix).
file(READ "${COMMANDS}" commands)
string(JSON count LENGTH "${commands}")
math(EXPR last "${count} - 1")
# The command of the first unit of the systems list whose file matches `pattern`, into `out`.
function(chens_unit_command pattern what out)
  foreach(i RANGE ${last})
    string(JSON file GET "${commands}" ${i} file)
    if(file MATCHES "${pattern}")
      string(JSON command GET "${commands}" ${i} command)
      set(${out} "${command}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "ChensJitConfig: no ${what} system unit in ${COMMANDS}")
endfunction()
chens_unit_command("/generated/systems/cpu_[^/]*\\.cpp$" CPU command)
# The GPU's: a CUDA unit's command, where CUDA is built.
set(cuda_command "")
if(CUDA_SUPPORT_LIB)
  chens_unit_command("/generated/systems/cuda_[^/]*\\.cu$" CUDA cuda_command)
endif()
# The unit's own output, input and dependency file go; the rest is the command. Of a CUDA
# unit's, also its ptxas options (kernels/CMakeLists.txt: a spill is an error in some units
# of the list; they report and change no code) and "-x cu", which the first-use unit's
# name (.cu) makes unneeded.
foreach(var command cuda_command)
  string(REGEX REPLACE " -o [^ ]+" "" ${var} "${${var}}")
  string(REGEX REPLACE " -c [^ ]+" "" ${var} "${${var}}")
  string(REGEX REPLACE " -MD| -MT [^ ]+| -MF [^ ]+" "" ${var} "${${var}}")
endforeach()
string(REGEX REPLACE " -Xptxas=[^ ]+| -x cu" "" cuda_command "${cuda_command}")
# The sources a unit can include: the per-instance headers, the host headers, the generated
# ones (systems list, chain sizes), and the engine-support library's sources.
file(GLOB_RECURSE sources "${SOURCE_DIR}/include/chens/*.hpp" "${SOURCE_DIR}/host/*.hpp"
     "${GENERATED_DIR}/dispatch/system_list.hpp" "${GENERATED_DIR}/dispatch/chain_sizes.hpp"
     "${GENERATED_DIR}/dispatch/model_kind.hpp" "${GENERATED_DIR}/backends/cpu/cpu_isas_compiled.hpp"
     "${SOURCE_DIR}/host/dispatch/method_id.cpp" "${SOURCE_DIR}/host/backends/step_grid.cpp"
     "${SOURCE_DIR}/host/backends/parameter_laws.cpp" "${SOURCE_DIR}/host/backends/cpu/cpu_isa.cpp"
     "${SOURCE_DIR}/kernels/*.cuh" "${SOURCE_DIR}/kernels/cuda_device.cu" "${SOURCE_DIR}/kernels/device_statistics.cu")
list(SORT sources)
set(all "")
foreach(f IN LISTS sources)
  file(SHA256 "${f}" h)
  file(RELATIVE_PATH rel "${SOURCE_DIR}" "${f}")
  string(APPEND all "${rel} ${h}\n")
endforeach()
string(SHA256 sources_hash "${all}")
file(SHA256 "${SUPPORT_LIB}" support_hash)
set(cuda_support_hash "")
if(CUDA_SUPPORT_LIB)
  file(SHA256 "${CUDA_SUPPORT_LIB}" cuda_support_hash)
endif()
set(text "// Generated at build time by cmake/ChensJitConfig.cmake: what dispatch/jit_systems.cpp
// compiles a system with on first use.
#pragma once

#define CHENS_JIT_COMPILE R\"chens(${command})chens\"
#define CHENS_JIT_SUPPORT_LIB R\"chens(${SUPPORT_LIB})chens\"
#define CHENS_JIT_CUDA_COMPILE R\"chens(${cuda_command})chens\"
#define CHENS_JIT_CUDA_SUPPORT_LIB R\"chens(${CUDA_SUPPORT_LIB})chens\"
#define CHENS_JIT_CUDA_SUPPORT_HASH \"${cuda_support_hash}\"
#define CHENS_JIT_VERSION \"${VERSION}\"
#define CHENS_JIT_COMPILER_ID \"${COMPILER_ID}\"
#define CHENS_JIT_SOURCES_HASH \"${sources_hash}\"
#define CHENS_JIT_SUPPORT_HASH \"${support_hash}\"
#define CHENS_JIT_SOURCE_DIR R\"chens(${SOURCE_DIR})chens\"
#define CHENS_JIT_GENERATED_DIR R\"chens(${GENERATED_DIR})chens\"
#define CHENS_JIT_BINARY_DIR R\"chens(${BINARY_DIR})chens\"
#define CHENS_JIT_INSTALL_INCLUDEDIR R\"chens(${INSTALL_INCLUDEDIR})chens\"
#define CHENS_JIT_INSTALL_LIBDIR R\"chens(${INSTALL_LIBDIR})chens\"
")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
