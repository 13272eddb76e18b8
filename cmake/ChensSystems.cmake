# The one list of systems (issue 18; docs/adding-a-model.md). Each chens_system() call names
# a model type, the formulations it runs, the backends that have it and whether output.wedge's
# tangent systems are built too. Every (backend, model, formulation, tangents) is one entry of
# the list, instantiated by one line of a translation unit generated from
# host/dispatch/system_unit.in (a .cpp for the CPU, a .cu for the GPU: the same template,
# dispatch/make_engine.hpp). chens_systems_generate() writes generated/dispatch/system_list.hpp,
# the list the one run_study (dispatch/system_dispatch.hpp) dispatches over, and sets
# CHENS_CPU_SYSTEM_SOURCES and CHENS_CUDA_SYSTEM_SOURCES.
#
#   chens_system(MODEL <C++ type> FORMULATIONS <FormulationId...> BACKENDS <cpu|cuda...> [TANGENTS])
#
# How many entries share a unit (CHENS_SYSTEM_UNIT_ENTRIES, of one model, backend and tangents
# variant, in list order) trades parallelism for total work: each unit pays a fixed cost
# (parsing the headers, and for nvcc cudafe++, cicc's front end and the host compile of its
# output) of about 5 s for g++ and 16 s for nvcc, 30 % and 50 % of a one-entry unit
# (docs/performance.md, "Build time"). With few cores the total is what a build waits for, so
# the default grows as the cores shrink: 1 entry per unit from 16 logical cores, 2 from 8,
# 4 below. The instantiations, and so the program, are the same for every value.

cmake_host_system_information(RESULT chens_logical_cores QUERY NUMBER_OF_LOGICAL_CORES)
if(chens_logical_cores GREATER_EQUAL 16)
  set(chens_default_unit_entries 1)
elseif(chens_logical_cores GREATER_EQUAL 8)
  set(chens_default_unit_entries 2)
else()
  set(chens_default_unit_entries 4)
endif()
set(CHENS_SYSTEM_UNIT_ENTRIES ${chens_default_unit_entries} CACHE STRING
    "Entries of the systems list per generated translation unit (1: one per formulation; more: less total compile work)")
if(NOT CHENS_SYSTEM_UNIT_ENTRIES MATCHES "^[1-9][0-9]*$")
  message(FATAL_ERROR "CHENS_SYSTEM_UNIT_ENTRIES = '${CHENS_SYSTEM_UNIT_ENTRIES}': a positive whole number of entries per unit")
endif()

# Writes the units of one model's entries `formulations` (variant `tangents`) on one backend,
# in balanced chunks of at most CHENS_SYSTEM_UNIT_ENTRIES: unit names list what they hold,
# e.g. cpu_pendulum_double_naive_total.cpp, cuda_pendulum_double_tangents_dirac.cu.
function(_chens_system_units backend backend_type engine_header ext id model tangents formulations)
  list(LENGTH formulations n)
  math(EXPR chunks "(${n} + ${CHENS_SYSTEM_UNIT_ENTRIES} - 1) / ${CHENS_SYSTEM_UNIT_ENTRIES}")
  set(dir ${CMAKE_BINARY_DIR}/generated/systems)
  string(TOUPPER "${backend}" BACKEND)
  set(first 0)
  foreach(c RANGE 1 ${chunks})
    # chunk c holds entries [first, end): sizes differ by at most one
    math(EXPR end "(${n} * ${c}) / ${chunks}")
    set(name ${backend}_${id})
    if(tangents)
      string(APPEND name _tangents)
    endif()
    set(INSTANTIATIONS "")
    set(FORMULATIONS "")
    math(EXPR last "${end} - 1")
    foreach(i RANGE ${first} ${last})
      list(GET formulations ${i} f)
      string(APPEND name _${f})
      list(APPEND FORMULATIONS ${f})
      string(APPEND INSTANTIATIONS
             "template std::unique_ptr<Engine> make_engine<${backend_type}, ${model}, FormulationId::${f}, ${tangents}>(
"
             "    const SystemArgs&, const EnsembleSpec&);
")
      set_property(GLOBAL APPEND_STRING PROPERTY CHENS_SYSTEM_ENTRIES_${BACKEND} " \\\n  X(${f}, ${tangents}, ${model})")
    endforeach()
    list(JOIN FORMULATIONS ", " FORMULATIONS)
    set(first ${end})
    set(MODEL "${model}")
    set(TANGENTS ${tangents})
    set(BACKEND_TYPE ${backend_type})
    set(ENGINE_HEADER ${engine_header})
    configure_file(${PROJECT_SOURCE_DIR}/host/dispatch/system_unit.in ${dir}/${name}.${ext} @ONLY)
    set_property(GLOBAL APPEND PROPERTY CHENS_${BACKEND}_SYSTEM_SOURCES ${dir}/${name}.${ext})
  endforeach()
endfunction()

function(chens_system)
  cmake_parse_arguments(PARSE_ARGV 0 S "TANGENTS" "MODEL" "FORMULATIONS;BACKENDS")
  if(NOT S_MODEL OR NOT S_FORMULATIONS OR NOT S_BACKENDS)
    message(FATAL_ERROR "chens_system: MODEL, FORMULATIONS and BACKENDS are required")
  endif()
  # Pendulum<double> -> pendulum_double, Chain<double, 16> -> chain_double_16
  string(TOLOWER "${S_MODEL}" id)
  string(REGEX REPLACE "[^a-z0-9]+" "_" id "${id}")
  string(REGEX REPLACE "_$" "" id "${id}")
  set(variants false)
  if(S_TANGENTS)
    list(APPEND variants true)
  endif()
  foreach(backend IN LISTS S_BACKENDS)
    if(backend STREQUAL "cpu")
      set(args CpuBackend "backends/cpu/cpu_engine.hpp" cpp)
    elseif(backend STREQUAL "cuda")
      if(NOT CHENS_HAVE_CUDA)
        continue()
      endif()
      set(args CudaBackend "cuda_engine.cuh" cu)
    else()
      message(FATAL_ERROR "chens_system(${S_MODEL}): unknown backend '${backend}' (cpu, cuda)")
    endif()
    foreach(t IN LISTS variants)
      _chens_system_units(${backend} ${args} ${id} "${S_MODEL}" ${t} "${S_FORMULATIONS}")
    endforeach()
  endforeach()
  set_property(GLOBAL APPEND_STRING PROPERTY CHENS_SYSTEM_MODELS " \\\n  X(${S_MODEL})")
endfunction()

macro(chens_systems_generate)
  get_property(CHENS_CPU_SYSTEM_SOURCES GLOBAL PROPERTY CHENS_CPU_SYSTEM_SOURCES)
  get_property(CHENS_CUDA_SYSTEM_SOURCES GLOBAL PROPERTY CHENS_CUDA_SYSTEM_SOURCES)
  get_property(CHENS_SYSTEM_ENTRIES_CPU GLOBAL PROPERTY CHENS_SYSTEM_ENTRIES_CPU)
  get_property(CHENS_SYSTEM_ENTRIES_CUDA GLOBAL PROPERTY CHENS_SYSTEM_ENTRIES_CUDA)
  get_property(CHENS_SYSTEM_MODELS GLOBAL PROPERTY CHENS_SYSTEM_MODELS)
  configure_file(${PROJECT_SOURCE_DIR}/host/dispatch/system_list.hpp.in
                 ${CMAKE_BINARY_DIR}/generated/dispatch/system_list.hpp @ONLY)
endmacro()
