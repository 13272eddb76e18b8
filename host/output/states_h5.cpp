#include "output/states_h5.hpp"

#include <stdexcept>

#ifdef CHENS_HAVE_HDF5
#include <H5Cpp.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include <chens/diagnostics/metrics.hpp>
#include <chens/version.hpp>

#include "output/writer.hpp"  // group_label
#endif

namespace chens {

#ifndef CHENS_HAVE_HDF5

std::string states_h5_image(const Study&, const RunParams<double>&, const EnsembleResult&) {
  throw std::runtime_error(
      "cannot write states.h5: this build of chens has no HDF5 (install libhdf5-dev and configure again)");
}

#else

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ",") + x;
  return out;
}

// A variable-length UTF-8 string (h5py reads it as str).
void string_attribute(H5::H5Object& obj, const char* name, const std::string& value) {
  H5::StrType type(H5::PredType::C_S1, H5T_VARIABLE);
  type.setCset(H5T_CSET_UTF8);
  H5::Attribute a = obj.createAttribute(name, type, H5::DataSpace(H5S_SCALAR));
  a.write(type, value);
}

template <class T>
const H5::PredType& h5_type();
template <>
const H5::PredType& h5_type<double>() {
  return H5::PredType::NATIVE_DOUBLE;
}
template <>
const H5::PredType& h5_type<std::uint64_t>() {
  return H5::PredType::NATIVE_UINT64;
}
template <>
const H5::PredType& h5_type<std::int32_t>() {
  return H5::PredType::NATIVE_INT32;
}
template <>
const H5::PredType& h5_type<unsigned char>() {
  return H5::PredType::NATIVE_UINT8;
}

// A dataset of the given shape (row-major, C order: h5py reads it with the same shape).
template <class T>
H5::DataSet dataset(H5::Group& g, const char* name, const std::vector<hsize_t>& dims, const std::vector<T>& data,
                    const std::string& columns = "") {
  hsize_t total = 1;
  for (hsize_t d : dims) total *= d;
  if (total != data.size()) throw std::logic_error(std::string("states.h5: ") + name + " has the wrong size");
  const H5::DataSpace space(static_cast<int>(dims.size()), dims.data());
  H5::DataSet ds = g.createDataSet(name, h5_type<T>(), space);
  if (total > 0) ds.write(data.data(), h5_type<T>());
  if (!columns.empty()) string_attribute(ds, "columns", columns);
  return ds;
}

}  // namespace

std::string states_h5_image(const Study& s, const RunParams<double>& rp, const EnsembleResult& r) {
  try {
    H5::Exception::dontPrint();  // errors become the exception's message, not a printed stack
    H5::FileAccPropList memory;
    memory.setCore(std::size_t{1} << 20, false);  // grows in 1 MiB steps; nothing on disk
    // The name is HDF5's only: before creating, it tries to open the name as an existing file,
    // so it must name nothing that can exist (a states.h5 in the working directory would be read).
    H5::H5File file("/dev/null/chens-states.h5", H5F_ACC_TRUNC, H5::FileCreatPropList::DEFAULT, memory);
    H5::Group root = file.openGroup("/");
    string_attribute(root, "chens_version", CHENS_VERSION_STRING);
    string_attribute(root, "study", to_json(s, rp).dump());
    string_attribute(root, "backend", r.backend);
    string_attribute(root, "device", r.device);
    string_attribute(root, "state_names", join(r.state_names));
    std::vector<std::string> metrics;
    std::vector<int> reported;
    for (int m = 0; m < metric_count; ++m)
      if (r.metric_reported(m)) {
        metrics.push_back(metric_name(m));
        reported.push_back(m);
      }
    string_attribute(root, "metric_names", join(metrics));
    const hsize_t S = r.state_names.size(), M = metrics.size();

    const PerInstanceResult& kept = r.kept;
    const hsize_t n = kept.lost.size();
    if (n > 0) {
      H5::Group g = file.createGroup("/instances");
      string_attribute(g, "description",
                       "row i: instance index[i] of the ensemble (i, unless ensemble.only lists the instances): initial "
                       "and final states in the formulation's variables "
                       "(state) and physical (q, p) (physical), final metrics (NaN where the instance was lost), lost "
                       "reason and work counters");
      const std::string names = join(r.state_names);
      std::vector<std::uint64_t> index(n);
      for (hsize_t i = 0; i < n; ++i) index[i] = s.only.empty() ? i : static_cast<std::uint64_t>(s.only[i]);
      dataset(g, "index", {n}, index);
      dataset(g, "initial_state", {n, S}, kept.initial_state, names);
      dataset(g, "initial_physical", {n, S}, kept.initial_physical, names);
      dataset(g, "final_state", {n, S}, kept.final_state, names);
      dataset(g, "final_physical", {n, S}, kept.final_physical, names);
      std::vector<double> fm(n * M);
      for (hsize_t i = 0; i < n; ++i)
        for (hsize_t c = 0; c < M; ++c)
          fm[i * M + c] = kept.lost[i] != int(LostReason::none)
                              ? std::numeric_limits<double>::quiet_NaN()
                              : kept.metrics[i * metric_count + static_cast<hsize_t>(reported[c])];
      dataset(g, "final_metrics", {n, M}, fm, join(metrics));
      std::vector<std::int32_t> lost(kept.lost.begin(), kept.lost.end());
      H5::DataSet ld = dataset(g, "lost", {n}, lost);
      std::string codes;
      for (int q = 0; q < lost_reason_count; ++q) codes += (q ? ", " : "") + std::to_string(q) + " " + lost_reason_name(q);
      string_attribute(ld, "codes", codes);
      if (r.passage.any() && kept.first_passage.size() == n * passage_slots) {
        // output's [first_passage]: each instance's times, one column per checked level
        // (+inf where it never crossed; "lost": the first sample time it was found lost).
        std::vector<std::string> slots;
        std::vector<int> slot_ids;
        for (int q = 0; q < passage_slots; ++q)
          if (r.passage.on(q)) {
            slots.push_back(passage_slot_name(q));
            slot_ids.push_back(q);
          }
        const hsize_t P = slots.size();
        std::vector<double> fp(n * P);
        for (hsize_t i = 0; i < n; ++i)
          for (hsize_t c = 0; c < P; ++c)
            fp[i * P + c] = kept.first_passage[i * passage_slots + static_cast<hsize_t>(slot_ids[c])];
        H5::DataSet pd = dataset(g, "first_passage", {n, P}, fp, join(slots));
        string_attribute(pd, "description",
                         "the first time each metric exceeded its level ([first_passage] in the study; +inf: never), "
                         "and for \"lost\" the first sample time at which the instance was found lost");
      }
      const std::uint64_t K = r.lyapunov_spectrum.size();
      if (K > 0 && kept.lyapunov_spectrum.size() == n * K) {
        // output.lyapunov_spectrum (docs/lyapunov.md): each instance's exponents, the largest first.
        std::vector<std::string> columns;
        for (std::uint64_t k = 1; k <= K; ++k) columns.push_back("lambda" + std::to_string(k));
        H5::DataSet sd = dataset(g, "lyapunov_spectrum", {n, K}, kept.lyapunov_spectrum, join(columns));
        string_attribute(sd, "description",
                         "each instance's 2(n - m) finite-time Lyapunov exponents on the constraint manifold at the "
                         "last sample time (output.lyapunov_spectrum), the largest first; NaN where the instance was "
                         "lost");
      }
      if (s.varies_parameters()) {
        // [parameters]: each instance's values, one column per varied parameter, drawn again
        // from (seed, instance index, parameter) as the run drew them.
        const ParameterEnsemble e = parameter_ensemble(s);
        std::vector<std::string> varied;
        std::vector<ParameterId> ids;
        for (int q = 0; q < parameter_count; ++q)
          if (e.varies(ParameterId(q))) {
            varied.push_back(parameter_name(ParameterId(q)));
            ids.push_back(ParameterId(q));
          }
        const hsize_t P = ids.size();
        std::vector<double> values(n * P);
        for (hsize_t i = 0; i < n; ++i)
          for (hsize_t c = 0; c < P; ++c) values[i * P + c] = e.value(ids[c], index[i]);
        H5::DataSet pd = dataset(g, "parameters", {n, P}, values, join(varied));
        string_attribute(pd, "description",
                         "each instance's values of the parameters the study varies ([parameters]); the step size h "
                         "as the instance used it (fixed-step methods: on the output.sample_dt grid)");
        if (e.groups() > 0) {
          // [parameters] group_by: each instance's group, the labels of series.csv's group column.
          std::vector<std::int32_t> group(n);
          for (hsize_t i = 0; i < n; ++i) group[i] = e.group_of(index[i]);
          std::vector<std::string> labels;
          for (std::size_t q = 0; q < e.groups(); ++q) labels.push_back(group_label(e, q));
          H5::DataSet gd = dataset(g, "group", {n}, group);
          string_attribute(gd, "labels", join(labels));
          string_attribute(gd, "description",
                           "each instance's group of parameters.group_by, 0-based: the labels attribute's entry "
                           "(comma-separated), which is series.csv's group column");
        }
      }
      H5::Group cg = g.createGroup("counters");
      const auto counter = [&](const char* name, std::uint64_t Counters::*field) {
        std::vector<std::uint64_t> v(n);
        for (hsize_t i = 0; i < n; ++i) v[i] = kept.counters[i].*field;
        dataset(cg, name, {n}, v);
      };
      counter("steps", &Counters::steps);
      counter("rejected_steps", &Counters::rejected_steps);
      counter("rhs_evaluations", &Counters::rhs_evaluations);
      counter("fixed_point_iterations", &Counters::iterations);
      counter("unconverged_steps", &Counters::unconverged_steps);
      counter("momentum_projections", &Counters::momentum_projections);
      counter("position_projections", &Counters::position_projections);
      counter("position_newton_iterations", &Counters::position_newton_iterations);
      counter("unconverged_position_projections", &Counters::unconverged_position_projections);
      counter("impetus_resets", &Counters::impetus_resets);
      counter("reference_steps", &Counters::reference_steps);
      counter("reference_rhs_evaluations", &Counters::reference_rhs_evaluations);
    }

    const RecordedTrajectories& rec = r.recorded;
    const hsize_t R = rec.instances.size(), K = rec.t.size();
    if (R > 0) {
      H5::Group g = file.createGroup("/trajectories");
      string_attribute(g, "description",
                       "the instances listed in `instances`, at every sample time t: state[r, k, :] is instance "
                       "instances[r] at t[k] (physical q, p), reference[r, k, :] its reference solution, metrics[r, k, :] "
                       "its metrics (NaN where measured[r, k] = 0: lost)");
      dataset(g, "instances", {R}, rec.instances);
      dataset(g, "t", {K}, rec.t);
      // Sample-major in memory ([k][r][c]); instance-major in the file ([r][k][c]).
      const auto transpose = [&](const std::vector<double>& v, hsize_t C, const std::vector<unsigned char>* mask) {
        std::vector<double> out(R * K * C);
        for (hsize_t k = 0; k < K; ++k)
          for (hsize_t q = 0; q < R; ++q)
            for (hsize_t c = 0; c < C; ++c)
              out[(q * K + k) * C + c] = mask && !(*mask)[k * R + q] ? std::numeric_limits<double>::quiet_NaN()
                                                                     : v[(k * R + q) * C + c];
        return out;
      };
      dataset(g, "state", {R, K, S}, transpose(rec.state, S, nullptr), join(r.state_names));
      if (rec.has_reference) dataset(g, "reference", {R, K, S}, transpose(rec.reference, S, nullptr), join(r.state_names));
      std::vector<double> mm(K * R * M);
      for (hsize_t k = 0; k < K; ++k)
        for (hsize_t q = 0; q < R; ++q)
          for (hsize_t c = 0; c < M; ++c)
            mm[(k * R + q) * M + c] = rec.metrics[(k * R + q) * metric_count + static_cast<hsize_t>(reported[c])];
      dataset(g, "metrics", {R, K, M}, transpose(mm, M, &rec.measured), join(metrics));
      std::vector<unsigned char> measured(R * K);
      for (hsize_t k = 0; k < K; ++k)
        for (hsize_t q = 0; q < R; ++q) measured[q * K + k] = rec.measured[k * R + q];
      dataset(g, "measured", {R, K}, measured);
    }
    file.flush(H5F_SCOPE_GLOBAL);
    const ssize_t size = H5Fget_file_image(file.getId(), nullptr, 0);
    if (size < 0) throw H5::FileIException("H5Fget_file_image", "cannot get the size of the file image");
    std::string image(static_cast<std::size_t>(size), '\0');
    if (H5Fget_file_image(file.getId(), image.data(), image.size()) != size)
      throw H5::FileIException("H5Fget_file_image", "cannot copy the file image");
    file.close();
    return image;
  } catch (const H5::Exception& e) {
    throw std::runtime_error("cannot make states.h5: HDF5: " + e.getFuncName() + ": " + e.getDetailMsg());
  }
}

#endif

}  // namespace chens
