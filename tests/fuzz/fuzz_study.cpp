// libFuzzer target: the study-file parser and validator (host/study/study_*.cpp) on arbitrary
// bytes, as `chens run FILE` reads them: load_runs_text (TOML, [sweep], [[run]], every key's
// type and range) and resolve (cross-key checks, the time grid, [output]). Bad input must end
// in StudyError with a message; anything else (a crash, another exception, a hang, memory
// errors or undefined behaviour under ASan/UBSan) is a finding. Built and run by
// scripts/fuzz-study.sh.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "study/study.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const chens::StudyRun& run : chens::load_runs_text(text, "fuzz.toml", {})) {
      const chens::RunParams<double> rp = chens::resolve(run.study);
      (void)chens::to_toml(run.study, rp);
      (void)chens::to_json(run.study, rp);
    }
  } catch (const chens::StudyError& e) {
    if (std::string(e.what()).empty()) __builtin_trap();  // every refusal says why
  }
  return 0;
}
