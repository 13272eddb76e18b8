# User models from V and phi (issue 19; docs/custom-models.md), built into a chens executable
# in chens's own tree (its tests) or in any other project after find_package(chens):
#
#   chens_add_executable(<target>)             a chens executable: the CLI, every built-in model
#   chens_add_model(<target> MODEL <spec type> HEADER <file>
#                   [FORMULATIONS <naive|dirac|impetus|baumgarte|constrained>...]
#                   [BACKENDS <cpu|cuda>...]
#                   [METHODS <euler|rk2|rk4|dopri5|midpoint|gauss2|rattle|verlet>...])
#
# chens_add_model adds to <target> one translation unit per (backend, group of formulations)
# of the model, instantiating make_engine_for<Backend, AutoModel<Spec, double>, F, false, methods>
# — the one template every built-in entry of the systems list is generated from — and one
# registration unit whose static initialiser registers the model under its spec's name
# (dispatch/custom_models.hpp). FORMULATIONS defaults to all five the generic code has;
# BACKENDS to cpu, and cuda where chens was built with CUDA; METHODS to every method (a unit's
# compile time grows with its methods: the implicit ones are the costliest; a study asking for
# a method not built is refused, naming those that are). The header is the user's: a spec
# that does not compile fails with the compiler naming that file.

set(CHENS_ADD_MODEL_DIR ${CMAKE_CURRENT_LIST_DIR})

function(chens_add_executable target)
  add_executable(${target} ${CHENS_MAIN_SOURCE})
  target_link_libraries(${target} PRIVATE ${CHENS_CLI_TARGET})
endfunction()

function(chens_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 M "" "MODEL;HEADER" "FORMULATIONS;BACKENDS;METHODS")
  if(NOT M_MODEL OR NOT M_HEADER)
    message(FATAL_ERROR "chens_add_model(${target}): MODEL <spec type> and HEADER <file> are required")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "chens_add_model: no target '${target}' (make it with chens_add_executable first)")
  endif()
  get_filename_component(header "${M_HEADER}" ABSOLUTE)
  if(NOT EXISTS "${header}")
    message(FATAL_ERROR "chens_add_model(${target} MODEL ${M_MODEL}): no header ${header}")
  endif()
  set(known naive dirac impetus baumgarte constrained)
  if(NOT M_FORMULATIONS)
    set(M_FORMULATIONS ${known})
  endif()
  foreach(f IN LISTS M_FORMULATIONS)
    if(NOT f IN_LIST known)
      message(FATAL_ERROR "chens_add_model(${M_MODEL}): formulation '${f}' is not one a user model has (${known})")
    endif()
  endforeach()
  # The methods as a MethodMask (dispatch/method_id.hpp): the same expression names the
  # instantiation in the units and in the registration.
  set(methods_known euler rk2 rk4 dopri5 midpoint gauss2 rattle verlet)
  if(NOT M_METHODS)
    set(METHOD_MASK "all_methods")
  else()
    set(METHOD_MASK "")
    foreach(m IN LISTS M_METHODS)
      if(NOT m IN_LIST methods_known)
        message(FATAL_ERROR "chens_add_model(${M_MODEL}): method '${m}' is not one chens has (${methods_known})")
      endif()
      if(METHOD_MASK)
        string(APPEND METHOD_MASK " | ")
      endif()
      string(APPEND METHOD_MASK "method_bit(MethodId::${m})")
    endforeach()
    set(METHOD_MASK "(${METHOD_MASK})")
  endif()
  if(NOT M_BACKENDS)
    set(M_BACKENDS cpu)
    if(CHENS_HAVE_CUDA)
      list(APPEND M_BACKENDS cuda)
    endif()
  endif()
  string(TOLOWER "${M_MODEL}" id)
  string(REGEX REPLACE "[^a-z0-9]+" "_" id "${id}")
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/chens_models/${target})
  set(MODEL_HEADER "${header}")
  set(SPEC "${M_MODEL}")
  set(ENTRIES "")
  set(sources "")
  foreach(backend IN LISTS M_BACKENDS)
    if(backend STREQUAL "cpu")
      set(BACKEND_TYPE CpuBackend)
      set(ENGINE_HEADER "backends/cpu/cpu_engine.hpp")
      set(ext cpp)
    elseif(backend STREQUAL "cuda")
      if(NOT CHENS_HAVE_CUDA)
        message(FATAL_ERROR "chens_add_model(${M_MODEL}): BACKENDS cuda, but chens was built without CUDA")
      endif()
      set(BACKEND_TYPE CudaBackend)
      set(ENGINE_HEADER "cuda_engine.cuh")
      set(ext cu)
    else()
      message(FATAL_ERROR "chens_add_model(${M_MODEL}): unknown backend '${backend}' (cpu, cuda)")
    endif()
    # Units of up to CHENS_SYSTEM_UNIT_ENTRIES formulations, as the built-in models'.
    set(entries_per_unit 2)
    if(DEFINED CHENS_SYSTEM_UNIT_ENTRIES)
      set(entries_per_unit ${CHENS_SYSTEM_UNIT_ENTRIES})
    endif()
    list(LENGTH M_FORMULATIONS n)
    math(EXPR chunks "(${n} + ${entries_per_unit} - 1) / ${entries_per_unit}")
    set(first 0)
    foreach(c RANGE 1 ${chunks})
      math(EXPR end "(${n} * ${c}) / ${chunks}")
      math(EXPR last "${end} - 1")
      set(name ${backend}_${id})
      set(INSTANTIATIONS "")
      foreach(i RANGE ${first} ${last})
        list(GET M_FORMULATIONS ${i} f)
        string(APPEND name _${f})
        set(engine "make_engine_for<${BACKEND_TYPE}, AutoModel<${M_MODEL}, double>, FormulationId::${f}, false, ${METHOD_MASK}>")
        string(APPEND INSTANTIATIONS "template std::unique_ptr<Engine> ${engine}(\n    const SystemArgs&, const EnsembleSpec&);\n")
        string(APPEND ENTRIES "    {\"${backend}\", FormulationId::${f}, &${engine}, ${METHOD_MASK}},\n")
      endforeach()
      set(first ${end})
      configure_file(${CHENS_ADD_MODEL_DIR}/custom_model_unit.in ${dir}/${name}.${ext} @ONLY)
      list(APPEND sources ${dir}/${name}.${ext})
    endforeach()
  endforeach()
  configure_file(${CHENS_ADD_MODEL_DIR}/custom_model_registration.in ${dir}/register_${id}.cpp @ONLY)
  list(APPEND sources ${dir}/register_${id}.cpp)
  target_sources(${target} PRIVATE ${sources})
  # GCC's inliner sizes the user's V and phi over jets before the masks of structural zeros
  # (linalg/jet.hpp) fold, finds them too large to inline into the step (its default
  # max-inline-insns-single, 200 at -O3, "limit reached") and then runs every masked branch
  # at run time: the planar pendulum's step 2.8 times slower. A larger budget in the model's
  # own units inlines them (docs/performance.md, "User models").
  set(options "$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:--param=max-inline-insns-single=1000>")
  if("cuda" IN_LIST M_BACKENDS)
    list(APPEND options "$<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr;-diag-suppress;20012;-Xptxas=-warn-spills>")
  endif()
  set_source_files_properties(${sources} TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS "${options}")
endfunction()
