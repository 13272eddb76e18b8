# The one list of models and systems (issues 18 and 42; docs/adding-a-model.md).
#
#   chens_model(<model.kind> TEMPLATE <C++ class template>)
#
# registers a built-in model: its ModelKind (generated/dispatch/model_kind.hpp, in the order
# of the calls), its description host/models/<id>.cpp (compiled into chens_host; the registry
# lists it, host/models/model_registry.cpp) and its traits host/models/<id>_traits.hpp (what
# its system units need beyond its header: dispatch/model_traits.hpp), where <id> is the
# model.kind with '-' as '_' (double-pendulum: double_pendulum.cpp, ModelKind::double_pendulum,
# double_pendulum_description()). Every chens_system() of a type of that template then
# includes only that model's traits.
#
# Each chens_system() call names a model type, the formulations it runs, the backends that
# have it and whether output.wedge's tangent systems are built too. Every (backend, model,
# formulation, tangents) is one entry of the list, instantiated by one line of a translation unit generated from
# host/dispatch/system_unit.in (a .cpp for the CPU, a .cu for the GPU: the same template,
# dispatch/make_engine.hpp). chens_systems_generate() writes generated/dispatch/system_list.hpp,
# the list the one run_study (dispatch/system_dispatch.hpp) dispatches over, and sets
# CHENS_CPU_SYSTEM_SOURCES and CHENS_CUDA_SYSTEM_SOURCES.
#
#   chens_system(MODEL <C++ type> FORMULATIONS <FormulationId...> BACKENDS <cpu|cuda...> [TANGENTS])
#
# (the type's template registered by chens_model() before).
#
# How many entries share a unit (CHENS_SYSTEM_UNIT_ENTRIES, of one model, backend and tangents
# variant, in list order) trades parallelism for total work: each unit pays a fixed cost
# (parsing the headers, and for nvcc cudafe++, cicc's front end and the host compile of its
# output) of about 5 s for g++ and 16 s for nvcc, 30 % and 50 % of a one-entry unit
# (docs/performance.md, "Build time"). With few cores the total is what a build waits for, so
# the default grows as the cores shrink: 1 entry per unit from 16 logical cores, 2 from 8,
# 4 below. The instantiations, and so the program, are the same for every value.

# What the build compiles ahead of time (issue 42, item 4; docs/jit.md, "What the build
# compiles ahead of time"): every entry of the list lists a system chens runs; which of them
# a unit of the build instantiates is CHENS_AHEAD_OF_TIME's choice, and every other one is
# compiled on first use (dispatch/jit_systems.hpp) for the run's method alone.
#   all            every entry, every method (the tests and CI: they compare the built-in units)
#   default-study  the default study's systems and method (chens_default_study_systems(), below)
#                  and nothing else: what scripts/run-default-study.sh configures a new build
#                  directory with, so that a first build is the default study's
set(CHENS_AHEAD_OF_TIME all CACHE STRING "Systems compiled ahead of time: all, or default-study (the rest on first use)")
set_property(CACHE CHENS_AHEAD_OF_TIME PROPERTY STRINGS all default-study)
if(NOT CHENS_AHEAD_OF_TIME MATCHES "^(all|default-study)$")
  message(FATAL_ERROR "CHENS_AHEAD_OF_TIME = '${CHENS_AHEAD_OF_TIME}': all (every system of the list) or default-study "
                      "(the default study's systems; the others compiled on first use, docs/jit.md)")
endif()

# chens_default_study_systems(MODEL <C++ type> FORMULATIONS <FormulationId...> METHODS <method...>)
# declares the systems examples/default_study.toml runs (one call per model type; the test
# JitSystems.TheDefaultStudyRunsOnlyTheDefaultStudysSystems checks the file against it):
# CHENS_AHEAD_OF_TIME = default-study compiles those alone, for those methods alone, without
# tangents. Before the chens_system() calls.
function(chens_default_study_systems)
  cmake_parse_arguments(PARSE_ARGV 0 D "" "MODEL" "FORMULATIONS;METHODS")
  if(NOT D_MODEL OR NOT D_FORMULATIONS OR NOT D_METHODS)
    message(FATAL_ERROR "chens_default_study_systems: MODEL, FORMULATIONS and METHODS are required")
  endif()
  set(mask "")
  foreach(m IN LISTS D_METHODS)
    string(REPLACE "-" "_" m "${m}")
    list(APPEND mask "method_bit(MethodId::${m})")
  endforeach()
  list(JOIN mask " | " mask)
  foreach(f IN LISTS D_FORMULATIONS)
    set_property(GLOBAL PROPERTY CHENS_DEFAULT_STUDY_METHODS_${D_MODEL}_${f} "${mask}")
    set_property(GLOBAL APPEND_STRING PROPERTY CHENS_DEFAULT_STUDY_SYSTEMS " \\\n  X(${f}, false, ${mask}, ${D_MODEL})")
  endforeach()
endfunction()

# The methods the build instantiates for one entry, into `out`: "all" (make_engine), a mask
# expression (make_engine_for), or "" (none: compiled on first use).
function(_chens_ahead_of_time model formulation tangents out)
  if(CHENS_AHEAD_OF_TIME STREQUAL "all")
    set(${out} all PARENT_SCOPE)
    return()
  endif()
  set(mask "")
  if(NOT tangents)
    get_property(mask GLOBAL PROPERTY CHENS_DEFAULT_STUDY_METHODS_${model}_${formulation})
  endif()
  set(${out} "${mask}" PARENT_SCOPE)
endfunction()

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
# e.g. cpu_pendulum_double_naive_total.cpp, cuda_pendulum_double_tangents_dirac.cu. Every
# entry joins the list; those CHENS_AHEAD_OF_TIME leaves out get no unit.
function(_chens_system_units backend backend_type engine_header ext id model model_template tangents formulations)
  string(TOUPPER "${backend}" BACKEND)
  set(built "")
  foreach(f IN LISTS formulations)
    set_property(GLOBAL APPEND_STRING PROPERTY CHENS_SYSTEM_ENTRIES_${BACKEND} " \\\n  X(${f}, ${tangents}, ${model})")
    _chens_ahead_of_time("${model}" ${f} ${tangents} methods)
    if(methods STREQUAL "")
      continue()
    endif()
    list(APPEND built ${f})
    set(methods_of_${f} "${methods}")  # the chunks' instantiations below
    if(NOT methods STREQUAL "all")
      set_property(GLOBAL APPEND_STRING PROPERTY CHENS_SYSTEMS_AHEAD_OF_TIME_${BACKEND}
                   " \\\n  X(${f}, ${tangents}, ${methods}, ${model})")
    endif()
  endforeach()
  list(LENGTH built n)
  if(n EQUAL 0)
    return()
  endif()
  math(EXPR chunks "(${n} + ${CHENS_SYSTEM_UNIT_ENTRIES} - 1) / ${CHENS_SYSTEM_UNIT_ENTRIES}")
  set(dir ${CMAKE_BINARY_DIR}/generated/systems)
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
      list(GET built ${i} f)
      string(APPEND name _${f})
      list(APPEND FORMULATIONS ${f})
      set(methods "${methods_of_${f}}")
      if(methods STREQUAL "all")
        string(APPEND INSTANTIATIONS
               "template std::unique_ptr<Engine> make_engine<${backend_type}, ${model}, FormulationId::${f}, ${tangents}>(\n"
               "    const SystemArgs&, const EnsembleSpec&);\n")
      else()
        string(APPEND INSTANTIATIONS
               "template std::unique_ptr<Engine> make_engine_for<${backend_type}, ${model}, FormulationId::${f}, ${tangents},\n"
               "                                                 ${methods}>(const SystemArgs&, const EnsembleSpec&);\n")
      endif()
    endforeach()
    list(JOIN FORMULATIONS ", " FORMULATIONS)
    set(first ${end})
    set(MODEL "${model}")
    set(TANGENTS ${tangents})
    set(BACKEND_TYPE ${backend_type})
    set(ENGINE_HEADER ${engine_header})
    get_property(TRAITS_HEADER GLOBAL PROPERTY CHENS_MODEL_TRAITS_OF_${model_template})
    configure_file(${PROJECT_SOURCE_DIR}/host/dispatch/system_unit.in ${dir}/${name}.${ext} @ONLY)
    set_property(GLOBAL APPEND PROPERTY CHENS_${BACKEND}_SYSTEM_SOURCES ${dir}/${name}.${ext})
  endforeach()
endfunction()

function(chens_model name)
  cmake_parse_arguments(PARSE_ARGV 1 M "" "TEMPLATE" "")
  if(NOT name MATCHES "^[a-z][a-z0-9-]*$" OR NOT M_TEMPLATE MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "chens_model(${name} TEMPLATE ${M_TEMPLATE}): a model.kind of lower-case letters, digits and "
                        "'-', and the model's C++ class template's name")
  endif()
  string(REPLACE "-" "_" id "${name}")
  get_property(kinds GLOBAL PROPERTY CHENS_MODEL_KINDS)
  if(id IN_LIST kinds OR id STREQUAL "custom")
    message(FATAL_ERROR "chens_model(${name}): registered twice, or the user models' kind 'custom'")
  endif()
  get_property(owner GLOBAL PROPERTY CHENS_MODEL_OF_${M_TEMPLATE})
  if(owner)
    message(FATAL_ERROR "chens_model(${name}): the template ${M_TEMPLATE} is model ${owner}'s already")
  endif()
  set(traits models/${id}_traits.hpp)  # as its units include it (host/ is on their path)
  foreach(f host/models/${id}.cpp host/${traits})
    if(NOT EXISTS ${PROJECT_SOURCE_DIR}/${f})
      message(FATAL_ERROR "chens_model(${name}): ${f} is missing (docs/adding-a-model.md)")
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY CHENS_MODEL_KINDS ${id})
  set_property(GLOBAL APPEND PROPERTY CHENS_MODEL_SOURCES ${PROJECT_SOURCE_DIR}/host/models/${id}.cpp)
  set_property(GLOBAL PROPERTY CHENS_MODEL_TRAITS_OF_${M_TEMPLATE} ${traits})
  set_property(GLOBAL PROPERTY CHENS_MODEL_OF_${M_TEMPLATE} ${name})
  list(LENGTH kinds value)
  set_property(GLOBAL APPEND_STRING PROPERTY CHENS_MODEL_ENUM "  ${id} = ${value},\n")
  set_property(GLOBAL APPEND_STRING PROPERTY CHENS_MODEL_NAMES "    case ModelKind::${id}: return \"${name}\";\n")
  set_property(GLOBAL APPEND_STRING PROPERTY CHENS_MODEL_TRAITS_HEADERS "    case ModelKind::${id}: return \"${traits}\";\n")
  set_property(GLOBAL APPEND_STRING PROPERTY CHENS_MODEL_LIST " \\\n  X(${id})")
  set_property(GLOBAL APPEND_STRING PROPERTY CHENS_MODEL_TRAITS_INCLUDES "#include \"${traits}\"\n")
endfunction()

function(chens_system)
  cmake_parse_arguments(PARSE_ARGV 0 S "TANGENTS" "MODEL" "FORMULATIONS;BACKENDS")
  if(NOT S_MODEL OR NOT S_FORMULATIONS OR NOT S_BACKENDS)
    message(FATAL_ERROR "chens_system: MODEL, FORMULATIONS and BACKENDS are required")
  endif()
  string(REGEX MATCH "^[A-Za-z_][A-Za-z0-9_]*" model_template "${S_MODEL}")
  get_property(traits GLOBAL PROPERTY CHENS_MODEL_TRAITS_OF_${model_template})
  if(NOT traits)
    message(FATAL_ERROR "chens_system(MODEL ${S_MODEL}): no chens_model(... TEMPLATE ${model_template}) before it")
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
      _chens_system_units(${backend} ${args} ${id} "${S_MODEL}" ${model_template} ${t} "${S_FORMULATIONS}")
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
  get_property(CHENS_MODEL_SOURCES GLOBAL PROPERTY CHENS_MODEL_SOURCES)
  get_property(CHENS_MODEL_ENUM GLOBAL PROPERTY CHENS_MODEL_ENUM)
  get_property(CHENS_MODEL_NAMES GLOBAL PROPERTY CHENS_MODEL_NAMES)
  get_property(CHENS_MODEL_TRAITS_HEADERS GLOBAL PROPERTY CHENS_MODEL_TRAITS_HEADERS)
  get_property(CHENS_MODEL_LIST GLOBAL PROPERTY CHENS_MODEL_LIST)
  get_property(CHENS_MODEL_TRAITS_INCLUDES GLOBAL PROPERTY CHENS_MODEL_TRAITS_INCLUDES)
  get_property(chens_model_kinds GLOBAL PROPERTY CHENS_MODEL_KINDS)
  list(LENGTH chens_model_kinds CHENS_MODEL_COUNT)
  get_property(CHENS_DEFAULT_STUDY_SYSTEMS GLOBAL PROPERTY CHENS_DEFAULT_STUDY_SYSTEMS)
  get_property(CHENS_SYSTEMS_AHEAD_OF_TIME_CPU GLOBAL PROPERTY CHENS_SYSTEMS_AHEAD_OF_TIME_CPU)
  get_property(CHENS_SYSTEMS_AHEAD_OF_TIME_CUDA GLOBAL PROPERTY CHENS_SYSTEMS_AHEAD_OF_TIME_CUDA)
  if(CHENS_AHEAD_OF_TIME STREQUAL "all")
    set(CHENS_AHEAD_OF_TIME_ALL 1)
  else()
    set(CHENS_AHEAD_OF_TIME_ALL 0)
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/host/dispatch/systems_ahead_of_time.hpp.in
                 ${CMAKE_BINARY_DIR}/generated/dispatch/systems_ahead_of_time.hpp @ONLY)
  configure_file(${PROJECT_SOURCE_DIR}/host/dispatch/system_list.hpp.in
                 ${CMAKE_BINARY_DIR}/generated/dispatch/system_list.hpp @ONLY)
  configure_file(${PROJECT_SOURCE_DIR}/host/dispatch/model_kind.hpp.in
                 ${CMAKE_BINARY_DIR}/generated/dispatch/model_kind.hpp @ONLY)
  configure_file(${PROJECT_SOURCE_DIR}/host/dispatch/all_model_traits.hpp.in
                 ${CMAKE_BINARY_DIR}/generated/dispatch/all_model_traits.hpp @ONLY)
endmacro()
