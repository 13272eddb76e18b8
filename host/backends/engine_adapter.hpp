// A backend's typed engine (backends/cpu/cpu_engine.hpp, kernels/cuda_engine.cuh) behind the
// engine interface (engine.hpp), with the typed per-instance work of the start and the end
// of a run: kept instances, instance 0, passage and spectrum tallies, group sizes
// (instance_records.hpp, passage_tally.hpp, spectrum_tally.hpp). Included by system units
// only (and by tests and benchmarks that run an engine directly, run_ensemble below).
// C++17-clean: nvcc compiles it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include <chens/ensemble/instance.hpp>
#include <chens/formulations/formulation.hpp>

#include "backends/backend.hpp"
#include "backends/checkpoint.hpp"
#include "backends/engine.hpp"
#include "backends/instance_records.hpp"
#include "backends/passage_tally.hpp"
#include "backends/spectrum_tally.hpp"

namespace chens {

template <class E>
class EngineAdapter final : public Engine {
 public:
  using System = typename E::System;
  using Reference = typename E::Reference;
  using Real = typename E::Real;
  // output.lyapunov_spectrum's exponents, K = 2(n - m); 0 without the spectrum.
  static constexpr int spectrum_exponent_count = spectrum_size_v<System>;

  template <class Method>
  EngineAdapter(const System& sys, const Method& method, const RunParams<Real>& rp, const ModelStateOf<System>& z0,
                const EnsembleSpec& spec, std::string reference_kind)
      : e_(sys, method, rp, z0, spec), rp_(rp), spec_(spec), reference_kind_(std::move(reference_kind)) {}

  EngineShape shape() const override {
    using Model = std::decay_t<decltype(std::declval<System>().model)>;
    EngineShape s;
    s.backend = E::backend;
    s.pipelined = E::pipelined;
    s.physical_size = physical_state_size_v<System>;
    s.reference_available = Reference::available && rp_.reference;
    s.momentum_metrics = Model::has_momentum_integrals;
    s.linear_momentum_metric = reports_linear_momentum_v<Model>;
    s.wedge_metric = has_tangents_v<System> && rp_.wedge;
    s.lyapunov_metric = has_tangents_v<System> && rp_.lyapunov;
    s.samples = rp_.samples;
    s.steps_per_sample = rp_.steps_per_sample;
    s.total_steps = rp_.total_steps;
    s.fixed_step = rp_.fixed_step;
    s.passage = rp_.passage.any();
    s.spectrum = spectrum_exponent_count;
    return s;
  }
  std::string reference_kind() const override { return reference_kind_; }
  std::uint64_t instance_bytes() const override { return e_.instance_bytes(); }
  index_t memory_rows() const override { return e_.memory_rows(); }
  void prepare(index_t rows, EnsembleResult& res) override { e_.prepare(rows, res); }
  void initialise() override { e_.initialise(); }
  void restore(const CheckpointState& c) override { e_.restore(c); }
  index_t furthest_live_step(const CheckpointState& c) const override {
    index_t step = -1;
    for (std::uint64_t i = 0; i < spec_.size; ++i) {
      const auto in = e_.saved(c, i);
      if (in.lost == int(LostReason::none)) step = std::max<index_t>(step, in.step);
    }
    return step;
  }
  const unsigned char* instances_view() override { return e_.instances_view(); }
  void launch(const SegmentWork& w, int slot, EnsembleResult& res) override { e_.launch(w, slot, res); }
  double collect(const SegmentWork& w, int slot, EnsembleResult& res) override { return e_.collect(w, slot, res); }
  bool pass(const SegmentWork& w, EnsembleResult& res) override { return e_.pass(w, res); }
  void finish(EnsembleResult& res) override { e_.finish(res); }
  void costs(EnsembleResult& res) const override { e_.costs(res); }
  void keep_initial(PerInstanceResult& kept, std::uint64_t keep) override {
    e_.for_first(keep, [&](std::uint64_t i, const auto& in) { chens::keep_initial(kept, e_.system_of(i), i, in); });
  }
  void keep_final(EnsembleResult& res, std::uint64_t keep) override {
    const std::uint64_t fetch = std::min<std::uint64_t>(std::max<std::uint64_t>(keep, 1), spec_.size);
    e_.for_first(fetch, [&](std::uint64_t i, const auto& in) {
      const System sys_i = e_.system_of(i);
      if (i < keep) {
        chens::keep_final(res.kept, sys_i, i, in);
        if constexpr (spectrum_exponent_count > 0) {
          if (in.lost == int(LostReason::none)) {
            double lambda[spectrum_exponent_count];
            sys_i.spectrum_exponents(in.z, rp_.reference_time(rp_.samples), lambda);
            for (int k = 0; k < spectrum_exponent_count; ++k)
              res.kept.lyapunov_spectrum[i * spectrum_exponent_count + static_cast<std::uint64_t>(k)] = lambda[k];
          }
        }
      }
      if (i == 0) record_instance0_final(res, sys_i, in);
    });
  }
  void tally_groups(EnsembleResult& res) override {
    e_.for_first(spec_.size, [&](std::uint64_t i, const auto& in) {
      const int g = e_.group_of(i);
      if (g < 0) return;
      res.groups[static_cast<std::size_t>(g)].instances += 1;
      if (in.lost != int(LostReason::none)) res.groups[static_cast<std::size_t>(g)].lost += 1;
    });
  }
  void tally_passage(const EnsembleSpec& spec, int group, PassageResult& out) override {
    const std::uint64_t n = spec_.size;
    if (group < 0) {
      chens::tally_passage(
          rp_, spec, n, [&](auto&& f) { e_.for_first(n, f); }, out);
      return;
    }
    auto members = [&](auto&& f) {
      e_.for_first(n, [&](std::uint64_t i, const auto& in) {
        if (e_.group_of(i) == group) f(i, in);
      });
    };
    chens::tally_passage(rp_, spec, n, members, out);
  }
  void tally_spectrum(const EnsembleSpec& spec, int group, std::vector<ExponentStats>& out) override {
    if constexpr (spectrum_exponent_count > 0) {
      const std::uint64_t n = spec_.size;
      const double t = rp_.reference_time(rp_.samples);  // where every live instance ends
      auto exponents = [&](std::uint64_t i, const auto& in, double(&lambda)[spectrum_exponent_count]) {
        e_.system_of(i).spectrum_exponents(in.z, t, lambda);
      };
      if (group < 0) {
        chens::tally_spectrum<spectrum_exponent_count>(
            spec, n, [&](auto&& f) { e_.for_first(n, f); }, exponents, out);
        return;
      }
      auto members = [&](auto&& f) {
        e_.for_first(n, [&](std::uint64_t i, const auto& in) {
          if (e_.group_of(i) == group) f(i, in);
        });
      };
      chens::tally_spectrum<spectrum_exponent_count>(spec, n, members, exponents, out);
    } else {
      (void)spec;
      (void)group;
      out.clear();
    }
  }

 private:
  E e_;
  RunParams<Real> rp_;
  const EnsembleSpec& spec_;
  std::string reference_kind_;
};

// The engine of System integrated by Method from z0, measured against Reference, on Backend.
template <class Backend, class System, class Method, class Reference>
std::unique_ptr<Engine> make_backend_engine(const System& sys, const Method& method,
                                            const RunParams<typename System::Real>& rp, const ModelStateOf<System>& z0,
                                            const EnsembleSpec& spec, std::string reference_kind) {
  using E = typename EngineOf<Backend>::template type<System, Method, Reference>;
  return std::make_unique<EngineAdapter<E>>(sys, method, rp, z0, spec, std::move(reference_kind));
}

// One ensemble of System on Backend, run through the one segment driver (tests, benchmarks).
template <class Backend, class System, class Method, class Reference>
EnsembleResult run_ensemble(const System& sys, const Method& method, const RunParams<typename System::Real>& rp,
                            const ModelStateOf<System>& z0, const EnsembleSpec& spec) {
  const std::unique_ptr<Engine> engine =
      make_backend_engine<Backend, System, Method, Reference>(sys, method, rp, z0, spec, "");
  return drive_segments(*engine, spec);
}

}  // namespace chens
