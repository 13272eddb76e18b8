// The engine interface (issue 42): what one backend's ensemble of one system offers the one
// segment driver, which is compiled once against it (segment_driver.cpp). A system unit of
// the systems list makes an engine (dispatch/make_engine.hpp: make_engine) and hands it over;
// the driver, the statistics merge, checkpoints and MPI never see the system's types. The
// interface is crossed a few times per segment, never per instance step. No CUDA types:
// host/ builds with g++ alone. The backends' engines (backends/cpu/cpu_engine.hpp,
// kernels/cuda_engine.cuh) keep their typed API and are wrapped by EngineAdapter
// (backends/engine_adapter.hpp), which also does the typed per-instance work at the start
// and the end (kept instances, instance 0, passage tallies, group sizes).
//
//   shape()                     the system's facts (physical state size, which metrics,
//                               whether a reference exists) and the run's grid, backend name
//                               and whether it is pipelined (rows segment s + 1 may be
//                               launched before segment s is collected: the GPU overlaps them)
//   reference_kind()            summary.json's words for the reference
//   instance_bytes()            bytes per instance of the saved state (its own layout)
//   memory_rows()               rows per segment its memory allows (memory_bounds.hpp)
//   prepare(rows, res)          allocation for segments of `rows` rows; may throw (nothing
//                               has run yet); fills res.backend, device and threads
//   initialise()                the instances at t = 0
//   restore(c)                  the instances from a checkpoint
//   furthest_live_step(c)       the furthest step a live instance of checkpoint c is at, on
//                               the study's grid (-1: none live)
//   instances_view()            the instances' bytes in the backend's layout, for saving
//   launch(w, slot, res)        rows segment w into slot 0 or 1 (two alternate)
//   collect(w, slot, res)       its statistics into res.series and res.recorded; returns the
//                               seconds the plan measures the segment by
//   pass(w, res)                a pass into sample interval w.k0; whether every instance (and
//                               reference) is there
//   finish(res)                 totals, lost reasons, reference_projected, the first lost
//                               instances (local indices), the kept instances' metrics
//   costs(res)                  integration_seconds / measurement_seconds and step_cost where
//                               timed (this process's part; the driver adds a resumed run's)
//   keep_initial(kept, keep)    the first keep instances' initial states
//   keep_final(res, keep)       their final states, lost reasons, counters, passages and
//                               Lyapunov exponents (output.lyapunov_spectrum), and instance
//                               0's final state
//   tally_groups(res)           [parameters] group_by: each group's instances and losses
//   tally_passage(spec, g, out) [first_passage]: the passage statistics of the ensemble
//                               (g < 0) or of group g (passage_tally.hpp)
//   tally_spectrum(spec, g, out) output.lyapunov_spectrum: each exponent's statistics over
//                               the live instances at the last sample, of the ensemble
//                               (g < 0) or of group g (spectrum_tally.hpp)
// With [parameters] group_by, launch and collect also fill res.groups[g].series.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <chens/ensemble/run_params.hpp>

#include "backends/ensemble_result.hpp"
#include "backends/ensemble_spec.hpp"
#include "backends/segment_plan.hpp"

namespace chens {

struct CheckpointState;

struct EngineShape {
  const char* backend = "";  // "cpu" / "cuda"
  bool pipelined = false;
  int physical_size = 0;             // components of the kept and recorded (physical) states
  bool reference_available = false;  // the system has a reference and the run computes it
  bool momentum_metrics = false;
  bool linear_momentum_metric = false;
  bool wedge_metric = false;
  bool lyapunov_metric = false;
  // The run's grid (RunParams).
  index_t samples = 0;
  index_t steps_per_sample = 0;
  index_t total_steps = 0;
  bool fixed_step = true;
  bool passage = false;  // [first_passage] checks a level
  int spectrum = 0;      // output.lyapunov_spectrum: the number of exponents, 2(n - m); 0 without it
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual EngineShape shape() const = 0;
  virtual std::string reference_kind() const = 0;
  virtual std::uint64_t instance_bytes() const = 0;
  virtual index_t memory_rows() const = 0;
  virtual void prepare(index_t rows, EnsembleResult& res) = 0;
  virtual void initialise() = 0;
  virtual void restore(const CheckpointState& c) = 0;
  virtual index_t furthest_live_step(const CheckpointState& c) const = 0;
  virtual const unsigned char* instances_view() = 0;
  virtual void launch(const SegmentWork& w, int slot, EnsembleResult& res) = 0;
  virtual double collect(const SegmentWork& w, int slot, EnsembleResult& res) = 0;
  virtual bool pass(const SegmentWork& w, EnsembleResult& res) = 0;
  virtual void finish(EnsembleResult& res) = 0;
  virtual void costs(EnsembleResult& res) const = 0;
  virtual void keep_initial(PerInstanceResult& kept, std::uint64_t keep) = 0;
  virtual void keep_final(EnsembleResult& res, std::uint64_t keep) = 0;
  virtual void tally_groups(EnsembleResult& res) = 0;
  virtual void tally_passage(const EnsembleSpec& spec, int group, PassageResult& out) = 0;
  virtual void tally_spectrum(const EnsembleSpec& spec, int group, std::vector<ExponentStats>& out) = 0;
};

// The one segment driver (segment_driver.cpp): set-up, resume, the segment protocol of
// segment_plan.hpp (rows segments and passes, progress, checkpoints, stops), totals, lost
// examples and the kept instances, for any engine on any backend.
EnsembleResult drive_segments(Engine& engine, const EnsembleSpec& spec);

}  // namespace chens
