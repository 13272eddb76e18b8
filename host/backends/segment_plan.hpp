// Where a run stops to reduce, report, checkpoint and look for an interrupt (issue 17,
// docs/checkpoints.md): the one plan both backends' segment drivers follow. A run used to
// stop only between segments of whole sample intervals, so a study whose sample interval
// was its whole run ignored SIGTERM until it ended. Segments are now sized by wall time:
// as many sample rows as fit in about EnsembleSpec::stop_seconds, and a sample interval
// longer than that is crossed in passes (SegmentWork::partial) that advance every instance
// by a StepLimit (ensemble/instance.hpp) and measure nothing; a checkpoint may then fall
// between two sample times. Stop points change no result (instance.hpp's StepLimit), so the
// plan may follow the clock. Sharded (MPI) runs must agree on every segment across ranks:
// they keep the sample-row segments of old and no passes (docs/scaling.md).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <chens/config.hpp>
#include <chens/ensemble/instance.hpp>

namespace chens {

struct SegmentWork {
  index_t k0 = 0, k1 = 0;  // a segment: advance to and measure the sample rows k0 .. k1-1
  bool partial = false;    // a pass toward row k0 within `limit`, measuring nothing
  StepLimit limit;
  index_t steps = 0;  // fixed step: the steps it takes (the pace's measure)
};

// The drivers call next() for the work to launch, take() once it is launched (a pipelined
// driver plans the next segment before the last one's time is known), and measured() when
// its time is known; after a pass of an adaptive run, measured() must come before next().
class SegmentPlan {
 public:
  // samples: rows 0..samples; max_rows: the most rows a segment's buffers hold. fixed_step,
  // steps_per_sample and total_steps: the time grid (RunParams). fixed_rows > 0 (tests,
  // EnsembleSpec::segment_rows) or sharded: segments of exactly that many rows, no clock.
  // pass_steps > 0 (tests, EnsembleSpec::pass_steps): passes of that many steps (or trial
  // steps) wherever a row needs more, no clock. stop_seconds: the clock's aim otherwise
  // (0: segments of max_rows rows, no passes).
  SegmentPlan(index_t samples, index_t max_rows, bool fixed_step, index_t steps_per_sample, index_t total_steps,
              index_t fixed_rows, bool sharded, index_t pass_steps, double stop_seconds)
      : samples_(samples),
        max_rows_(std::max<index_t>(1, max_rows)),
        fixed_step_(fixed_step),
        steps_per_sample_(steps_per_sample),
        total_steps_(total_steps),
        fixed_rows_(fixed_rows > 0 ? fixed_rows : (sharded ? max_rows_ : 0)),
        pass_steps_(sharded ? 0 : pass_steps),
        stop_seconds_(sharded ? 0.0 : stop_seconds) {}

  // A resumed run continues at row `done`; its live fixed-step instances may be part of the
  // way into that row's interval, all at the same step: live_step, the furthest step a live
  // resumed instance is at (Engine::furthest_live_step; -1 where none is live).
  void resume_at(index_t done, index_t live_step) {
    row_ = done;
    step_ = std::max(sample_step(done - 1), live_step);
  }
  bool finished() const { return row_ > samples_; }
  index_t row() const { return row_; }
  // Fixed step: the step the live instances are at once the work taken so far is done.
  index_t step() const { return step_; }

  SegmentWork next() const {
    const index_t rows_left = samples_ + 1 - row_;
    const index_t cap = std::min(fixed_rows_ > 0 ? fixed_rows_ : max_rows_, rows_left);
    if (row_ == 0) return rows(fixed_rows_ > 0 && pass_steps_ <= 0 ? cap : 1);  // the initial measurement
    if (fixed_step_) {
      const index_t left = sample_step(row_) - step_;  // steps into row_'s interval still to take
      const index_t budget = step_budget();
      if (budget <= 0) return rows(cap);
      if (left > budget) return pass(StepLimit{step_ + budget, budget}, budget);
      // After passes, the rest of the interval is a pass of its own until every instance is
      // there: numerical references (their trial steps also bounded) catch up in passes too.
      if (in_passes_ && !reached_) return pass(StepLimit{step_ + left, budget}, left);
      if (fixed_rows_ > 0) return rows(cap);
      // Rows after the first cost steps_per_sample steps each.
      const index_t more = steps_per_sample_ > 0 ? (budget - left) / steps_per_sample_ : rows_left;
      return rows(std::clamp<index_t>(1 + more, 1, cap));
    }
    // Adaptive: the steps a row takes are not known before they are taken. A row that
    // passes have brought every instance to is measured alone; rows are planned from the
    // seconds of the last ones, and a row not known to fit is approached in passes.
    if (reached_) return rows(1);
    if (pass_steps_ > 0) return pass(StepLimit{INT64_MAX, pass_steps_}, 0);
    if (fixed_rows_ > 0 || stop_seconds_ <= 0) return rows(cap);
    if (row_seconds_ >= 0 && row_seconds_ <= 0.5 * stop_seconds_) {
      const auto fit = static_cast<index_t>(stop_seconds_ / std::max(row_seconds_, 1e-9));
      return rows(std::clamp<index_t>(fit, 1, cap));
    }
    return pass(StepLimit{INT64_MAX, attempt_budget()}, 0);
  }

  // `w` (from next()) is launched: the plan moves past it.
  void take(const SegmentWork& w) {
    if (w.partial) {
      if (fixed_step_) step_ = w.limit.until_step;
      in_passes_ = true;
      return;
    }
    if (fixed_step_) step_ = sample_step(w.k1 - 1);
    row_ = w.k1;
    reached_ = in_passes_ = false;
  }

  // `w` took `seconds`; for a pass, `there` says whether every instance (and its
  // reference) is now at row w.k0.
  void measured(const SegmentWork& w, double seconds, bool there) {
    if (w.partial) {
      pass_seconds_ += seconds;
      reached_ = there;
      if (!fixed_step_) {
        per_attempt_ = seconds / static_cast<double>(std::max<index_t>(1, w.limit.attempts));
        last_attempts_ = w.limit.attempts;
      }
    } else if (!fixed_step_ && w.k0 > 0) {
      row_seconds_ = (seconds + pass_seconds_) / static_cast<double>(w.k1 - w.k0);
      pass_seconds_ = 0;
    }
    if (fixed_step_ && w.steps > 0) per_step_ = seconds / static_cast<double>(w.steps);
  }

 private:
  index_t sample_step(index_t k) const {
    const index_t s = k * steps_per_sample_;
    return s < total_steps_ ? s : total_steps_;
  }
  SegmentWork rows(index_t count) const {
    SegmentWork w;
    w.k0 = row_;
    w.k1 = row_ + count;
    if (fixed_step_) w.steps = sample_step(w.k1 - 1) - (row_ > 0 ? step_ : 0);
    return w;
  }
  // steps: the integration steps it takes at most (fixed step; the pace's measure).
  SegmentWork pass(StepLimit limit, index_t steps) const {
    SegmentWork w;
    w.k0 = w.k1 = row_;
    w.partial = true;
    w.limit = limit;
    w.steps = steps;
    return w;
  }
  // Steps that fit in stop_seconds (0: no passes), from a first pass of 4 steps that
  // measures the pace.
  index_t step_budget() const {
    if (pass_steps_ > 0) return pass_steps_;
    if (fixed_rows_ > 0 || stop_seconds_ <= 0) return 0;
    if (per_step_ < 0) return 4;
    return clamp_budget(stop_seconds_ / std::max(per_step_, 1e-12));
  }
  // Trial steps likewise; at most 16 times the last pass's, since instances that reached
  // the row early make a pass look faster than the next one will be.
  index_t attempt_budget() const {
    if (per_attempt_ < 0) return 4;
    return std::min<index_t>(clamp_budget(stop_seconds_ / std::max(per_attempt_, 1e-12)),
                             16 * std::max<index_t>(1, last_attempts_));
  }
  static index_t clamp_budget(double b) { return static_cast<index_t>(std::clamp(std::floor(b), 1.0, 1e15)); }

  index_t samples_, max_rows_;
  bool fixed_step_;
  index_t steps_per_sample_, total_steps_;
  index_t fixed_rows_, pass_steps_;
  double stop_seconds_;
  index_t row_ = 0;
  index_t step_ = 0;         // fixed step: the step index the live instances are at
  double per_step_ = -1;     // fixed step: seconds per step of the whole ensemble
  double per_attempt_ = -1;  // adaptive: seconds per trial step of the whole ensemble
  index_t last_attempts_ = 0;
  double row_seconds_ = -1;  // adaptive: seconds per row, passes included
  double pass_seconds_ = 0;  // adaptive: passes of the current row so far
  bool in_passes_ = false;   // row_'s interval is being crossed in passes
  bool reached_ = false;     // the last pass brought every instance (and reference) to row_
};

}  // namespace chens
