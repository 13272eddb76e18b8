// Mergeable statistics of one metric at one sample time: count, mean, root mean square,
// minimum and maximum. CPU threads, GPU blocks and (later) MPI ranks reduce the same
// way and merge in a fixed order, so results do not depend on how an ensemble was split.
// The mean is kept as a running mean and the sum of squares in LAPACK's scaled form
// (dlassq), so statistics stay finite for any finite inputs. No product is fused into an
// addition (config.hpp's mul_rn): the GPU reduces the same values to the same bits as the
// CPU, and its block tree (kernels/device_statistics.cu) to the host tree's bits.
#pragma once

#include <cmath>
#include <cstdint>

#include <chens/config.hpp>

namespace chens {

struct Accumulator {
  std::uint64_t count = 0;
  double mean = 0.0;
  double scale = 0.0;  // sum of squares = scale^2 * ssq
  double ssq = 1.0;
  double min = 0.0;
  double max = 0.0;

  CHENS_HD void add(double x) {
    using std::fabs;
    count += 1;
    if (count == 1) {
      mean = x;
      min = x;
      max = x;
    } else {
      mean += (x - mean) / static_cast<double>(count);
      min = x < min ? x : min;
      max = x > max ? x : max;
    }
    const double a = fabs(x);
    if (a > 0.0) {
      if (scale < a) {
        const double r = scale / a;
        ssq = 1.0 + mul_rn(ssq * r, r);
        scale = a;
      } else {
        const double r = a / scale;
        ssq = ssq + mul_rn(r, r);
      }
    }
  }

  CHENS_HD void merge(const Accumulator& o) {
    if (o.count == 0) return;
    if (count == 0) {
      *this = o;
      return;
    }
    const double n = static_cast<double>(count) + static_cast<double>(o.count);
    mean = mean + mul_rn(o.mean - mean, static_cast<double>(o.count) / n);
    count += o.count;
    min = o.min < min ? o.min : min;
    max = o.max > max ? o.max : max;
    if (o.scale > 0.0) {
      if (scale < o.scale) {
        const double r = scale / o.scale;
        ssq = o.ssq + mul_rn(ssq * r, r);
        scale = o.scale;
      } else {
        const double r = o.scale / scale;
        ssq = ssq + mul_rn(o.ssq * r, r);
      }
    }
  }

  CHENS_HD double rms() const {
    using std::sqrt;
    if (count == 0) return 0.0;
    return scale * sqrt(ssq / static_cast<double>(count));
  }
};

}  // namespace chens
