# CHENS_CPU_ISAS: the instruction sets whose CPU lanes the build compiles
# (host/backends/cpu/cpu_isa.hpp, cpu_lanes.hpp). Each set's lanes are a flattened copy of
# every fixed-step method of every system unit, so a set costs build time whether or not the
# machine that runs chens has it: the sanitizer build of CI (scripts/sanitize-tests.sh) and the
# `dev` preset compile what their own machine runs (issue 42; docs/performance.md, "Build
# time"). One binary then still runs everywhere: where the CPU has a set the build left out,
# the widest compiled one runs, with the same results (linalg/simd_pack.hpp).
#   all     scalar, sse2, avx2, avx512 (the default: the release build serves every x86-64)
#   native  scalar and every set this machine's CPU runs (found by running a probe)
#   widest  scalar and the widest set this machine's CPU runs (the sanitizer build: the lanes'
#           code is one template over the register width, so one width under ASan and UBSan
#           is what the others would add at twice the build time; the release suite runs all)
#   a list  of scalar, sse2, avx2, avx512 (scalar is always compiled: the one-at-a-time path)
# chens_cpu_isas(<spec> <mask var> <names var>) turns one into the bit mask cpu_isa.hpp reads
# (CHENS_CPU_ISAS_MASK: bit i for CpuIsa(i)) and its names, or stops naming what is wrong.
set(CHENS_CPU_ISAS "all" CACHE STRING "CPU lane instruction sets compiled: all, native, widest, or a list of scalar;sse2;avx2;avx512")

function(chens_cpu_isas spec mask_var names_var)
  set(known scalar sse2 avx2 avx512)
  if(spec STREQUAL "all")
    set(isas ${known})
  elseif(spec STREQUAL "native" OR spec STREQUAL "widest")
    set(probe_dir ${CMAKE_BINARY_DIR}/CMakeFiles/chens_cpu_isas)
    file(WRITE ${probe_dir}/probe.cpp [=[
#include <cstdio>
int main() {
#if defined(__GNUC__) && defined(__x86_64__)
  __builtin_cpu_init();
  std::printf("scalar;sse2%s%s", __builtin_cpu_supports("avx2") ? ";avx2" : "", __builtin_cpu_supports("avx512f") ? ";avx512" : "");
#else
  std::printf("scalar");
#endif
  return 0;
}
]=])
    try_run(run_status compiled ${probe_dir}/build ${probe_dir}/probe.cpp
            COMPILE_OUTPUT_VARIABLE compile_out RUN_OUTPUT_VARIABLE isas)
    if(NOT compiled OR NOT run_status EQUAL 0)
      message(FATAL_ERROR "CHENS_CPU_ISAS = ${spec}: the probe of this CPU's instruction sets did not build or run "
                          "(${run_status}); give the sets as a list instead, e.g. \"scalar;sse2;avx2\"\n${compile_out}")
    endif()
    if(spec STREQUAL "widest")
      list(GET isas -1 widest)
      set(isas scalar ${widest})
    endif()
  else()
    set(isas ${spec})
  endif()
  set(mask 1)
  foreach(isa IN LISTS isas)
    list(FIND known "${isa}" i)
    if(i LESS 0)
      message(FATAL_ERROR "CHENS_CPU_ISAS = \"${spec}\": '${isa}' is not an instruction set chens compiles lanes for "
                          "(all, native, widest, or a list of scalar;sse2;avx2;avx512)")
    endif()
    math(EXPR bit "1 << ${i}")
    math(EXPR seen "${mask} & ${bit}")
    if(seen EQUAL 0)
      math(EXPR mask "${mask} | ${bit}")
    endif()
  endforeach()
  set(names "")
  foreach(i RANGE 3)
    math(EXPR has "(${mask} >> ${i}) & 1")
    if(has EQUAL 1)
      list(GET known ${i} isa)
      list(APPEND names ${isa})
    endif()
  endforeach()
  string(REPLACE ";" ", " names "${names}")
  set(${mask_var} ${mask} PARENT_SCOPE)
  set(${names_var} "${names}" PARENT_SCOPE)
endfunction()
