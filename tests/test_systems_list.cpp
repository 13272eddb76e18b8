// The systems list (CMakeLists.txt, cmake/ChensSystems.cmake) against the study parser: every
// study resolve() accepts has a CPU entry in the list, every study it refuses has none, and
// every entry runs (and names the state's components as many as its model has); a chain size
// the build lacks is accepted for a unit compiled on first use. Over every model kind,
// formulation, precision, tangents (none, output.wedge, output.lyapunov) and chain size (the
// compiled ones and one that is not): the list and the study's rules cannot drift apart. (A
// tangent system the list lacks is compiled on first use, as a chain size is.)
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "dispatch/run_study.hpp"
#include "dispatch/system_dispatch.hpp"

namespace chens {
namespace {

enum class Tangents { none, wedge, lyapunov };

Study tiny(ModelKind kind, FormulationId f, Precision precision, Tangents tangents, int atoms) {
  Study s;
  s.model_kind = kind;
  s.formulation = f;
  s.method = f == FormulationId::constrained ? MethodId::rattle : MethodId::rk4;
  s.precision = precision;
  s.wedge = tangents == Tangents::wedge;
  s.lyapunov = tangents == Tangents::lyapunov;
  if (kind == ModelKind::chain) set_key(s, "model.atoms=" + std::to_string(atoms));
  s.size = 16;
  s.h = 0.01;
  s.t_end = 0.1;
  s.sample_dt = 0.05;
  s.reference = "none";
  return s;
}

std::string describe(const Study& s) {
  return std::string(model_kind_name(s.model_kind)) + " " + formulation_name(s.formulation) + " " +
         precision_name(s.precision) + (s.wedge ? " wedge" : "") + (s.lyapunov ? " lyapunov" : "") +
         (s.model_kind == ModelKind::chain ? " N=" + std::to_string(model_key(s).atoms) : "");
}

TEST(SystemsList, ResolveAcceptsExactlyTheStudiesTheListRunsAndEveryEntryRuns) {
  std::vector<int> sizes = compiled_chain_sizes();
  sizes.push_back(5);  // not compiled
  int entries = 0;
  for (int k = 0; k < model_kind_count; ++k)
    for (int f = 0; f < formulation_count; ++f)
      for (const Precision precision : {Precision::double_precision, Precision::single_precision})
        for (const Tangents tangents : {Tangents::none, Tangents::wedge, Tangents::lyapunov})
          for (int atoms : sizes) {
            const auto kind = static_cast<ModelKind>(k);
            if (kind != ModelKind::chain && atoms != sizes.front()) continue;
            const Study s = tiny(kind, static_cast<FormulationId>(f), precision, tangents, atoms);
            bool accepted = true;
            try {
              resolve(s);
            } catch (const StudyError&) {
              accepted = false;
            }
            ASSERT_EQ(accepted, has_system<CpuBackend>(s)) << describe(s);
            // A size the build lacks is compiled on first use (tests/test_jit_systems.cpp).
            if (!accepted || !has_built_in_system<CpuBackend>(s)) continue;
            if (tangents != Tangents::lyapunov) ++entries;  // the exponent runs the wedge's entries
            const EnsembleResult r = run_study_cpu(s, resolve(s), ensemble_spec(s, 1));
            EXPECT_EQ(static_cast<int>(r.state_names.size()), physical_state_size(s)) << describe(s);
            const SampleStats& last = r.series.back();
            EXPECT_EQ(last.metric[int(MetricId::energy_error)].count, 16u) << describe(s);
            EXPECT_TRUE(std::isfinite(last.metric[int(MetricId::energy_error)].max)) << describe(s);
          }
  // Every CPU entry of the list the build compiled was reached: each study above matches one
  // entry (CHENS_AHEAD_OF_TIME = all: every entry).
  int listed = 0;
  for_each_system<CpuBackend>([&](auto e) {
    if (decltype(e)::built_methods != 0) ++listed;
    return false;
  });
  EXPECT_EQ(entries, listed);
}

}  // namespace
}  // namespace chens
