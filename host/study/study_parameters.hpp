// The [parameters] section's rules between keys (study_parameters.cpp), and where a drawn
// step size lands on the sample grid. Host only.
#pragma once

#include "study/study.hpp"

namespace chens {

// Throws StudyError for a [parameters] section that does not fit the study: scopes, the rules
// between keys, group_by and its bins, and (normal laws) every instance's draw that could
// leave its parameter's range or the bins. resolve() calls it before validating the output.
void validate_parameters(const Study& s, const RunParams<double>& rp);

// on_sample_grid: backends/step_grid.hpp.

}  // namespace chens
