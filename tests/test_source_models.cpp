// User models from a header, compiled on first use (issue 42; dispatch/source_models.hpp,
// docs/custom-models.md "From a header"): the spec scanner, the SHA-256 that keys the
// objects (FIPS 180-2's test vectors), a model from its header against the hand-written
// pendulum, an edit of a file the header includes compiling it again, and the bad input
// refused. The tests share chens_jit_tests's cache (CHENS_CACHE_DIR): the planar pendulum's
// description and one of its systems are compiled once per build of the suite.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dispatch/custom_models.hpp"
#include "dispatch/run_study.hpp"
#include "dispatch/sha256.hpp"
#include "dispatch/source_models.hpp"
#include "dispatch/system_dispatch.hpp"
#include "study/study.hpp"
#include "support/source_dir.hpp"

namespace chens {
namespace {

namespace fs = std::filesystem;

// A directory of its own per test, removed at the end.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(fs::temp_directory_path() / ("chens-source-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return (path_ / name).string();
  }

 private:
  fs::path path_;
};

// The message of the StudyError that f throws, or "" where it throws none.
template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const StudyError& e) {
    return e.what();
  }
  return "";
}

// A spec of a point on the unit circle under gravity: struct `type` in namespace mine, called
// `kind`.
std::string unit_circle_spec(const std::string& type, const std::string& kind) {
  return "#include <chens/models/auto_model.hpp>\nnamespace mine {\nstruct " + type + " {\n" +
         "  static constexpr const char* name = \"" + kind + "\";\n" + R"cpp(  static constexpr int dof = 2;
  static constexpr int constraints = 1;
  static constexpr const char* coordinates[] = {"x", "y"};
  template <class K> CHENS_HD static auto mass(const K&, int) { return 1.0; }
  template <class T, class K> CHENS_HD static T potential(const K&, const chens::Vec<T, 2>& q) { return q[1]; }
  template <class T, class K> CHENS_HD static chens::Vec<T, 1> constraint(const K&, const chens::Vec<T, 2>& q) {
    return chens::Vec<T, 1>{{(q[0] * q[0] + q[1] * q[1] - 1) / 2}};
  }
};
}  // namespace mine
)cpp";
}

TEST(Sha256, FipsTestVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");  // two blocks after padding
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(SourceModels, SpecCandidatesAreTheStructsDefinedAtNamespaceScope) {
  const std::string text = R"cpp(
#pragma once
#include <chens/models/auto_model.hpp>
#define NOT_A struct Macro {
// struct InAComment {
/* struct InABlock { */
struct Plain { static constexpr const char* name = "struct InAString {"; };
struct Forward;
class Derived final : public Plain {};
template <class T> struct Template { T x; };
enum class Colour { red };
namespace outer {
struct Inner { struct Nested {}; void f() { struct Local {}; } };
namespace {
struct Hidden {};
}
inline namespace v1 { struct Versioned {}; }
}  // namespace outer
namespace a::b { struct Deep {}; }
extern "C" { struct CStruct { int x; }; }
auto raw = R"x(struct InARawString {)x";
struct After {};
)cpp";
  const std::vector<std::string> expected = {
      "::Plain",      "::Derived", "::outer::Inner", "::outer::Hidden", "::outer::v1::Versioned",
      "::a::b::Deep", "::CStruct", "::After"};
  EXPECT_EQ(spec_candidates(text), expected);
}

// The planar pendulum of the examples from its header, as a study names it (a path relative
// to the study file): its ensemble equals the hand-written pendulum's (models/pendulum.hpp,
// an independent implementation of 001 §3) to round-off in every sampled statistic.
TEST(SourceModels, APendulumFromItsHeaderIsTheHandWrittenPendulum) {
  const TempDir dir("pendulum");
  fs::copy_file(test::source_dir() + "/examples/custom_model/models/planar_pendulum.hpp",
                dir.path() / "planar_pendulum.hpp");
  const std::string common = "[integrator]\nformulation = \"dirac\"\nmethod = \"rk4\"\nh = 0.01\nt_end = 2.0\n"
                             "[ensemble]\nsize = 64\nperturbation = 1e-3\n";
  const std::string path = dir.write("study.toml", "[model]\nsource = \"planar_pendulum.hpp\"\n" + common);
  const std::vector<StudyRun> runs = load_runs(path, {});
  ASSERT_EQ(runs.size(), 1u);
  const Study& user = runs[0].study;
  EXPECT_EQ(user.custom_model, "planar-pendulum") << "the header's one model is the study's model.kind";
  EXPECT_EQ(user.model_source, (dir.path() / "planar_pendulum.hpp").string());
  ASSERT_TRUE(compiles_on_first_use<CpuBackend>(user));
  const std::vector<StudyRun> hand = load_runs_text("[model]\nkind = \"pendulum\"\n" + common, "hand-written", {});
  const EnsembleResult a = run_study_cpu(user, resolve(user), ensemble_spec(user, 2));
  EXPECT_EQ(first_use_compile(user, BackendId::cpu), FirstUseCompile::cached);
  const EnsembleResult b = run_study_cpu(hand[0].study, resolve(hand[0].study), ensemble_spec(hand[0].study, 2));
  ASSERT_EQ(a.series.size(), b.series.size());
  ASSERT_EQ(a.series.size(), 101u);  // output.sample_dt = 0.02
  for (MetricId m : {MetricId::energy_error, MetricId::phi, MetricId::psi})
    for (std::size_t k = 0; k < a.series.size(); ++k) {
      const auto& x = a.series[k].metric[int(m)];
      const auto& y = b.series[k].metric[int(m)];
      ASSERT_EQ(x.count, 64u);
      EXPECT_NEAR(x.max, y.max, 1e-14) << metric_name(int(m)) << " at sample " << k;
      EXPECT_NEAR(x.mean, y.mean, 1e-14) << metric_name(int(m)) << " at sample " << k;
    }
  // RK4's energy error is far above round-off at t = 2 with h = 0.01: the comparison is not
  // of two zeros.
  EXPECT_GT(a.series.back().metric[int(MetricId::energy_error)].max, 1e-10);
}

// A header's objects are keyed by the files it includes too: an edit of one compiles the
// description again, and this process loads the new one (the parameter's default moves).
TEST(SourceModels, AnEditOfAnIncludedFileCompilesTheModelAgain) {
  const TempDir dir("edit");
  dir.write("defaults.hpp", "#pragma once\ninline constexpr double default_g = 1.5;\n");
  const std::string header = dir.write("models.hpp", R"cpp(#pragma once
#include <chens/models/auto_model.hpp>
#include "defaults.hpp"
namespace mine {
struct Swing {
  static constexpr const char* name = "source-test-swing";
  static constexpr int dof = 2;
  static constexpr int constraints = 1;
  static constexpr chens::ModelParameter parameters[] = {{"g", default_g, "gravity"}};
  static constexpr const char* coordinates[] = {"x", "y"};
  template <class K> CHENS_HD static auto mass(const K&, int) { return 1.0; }
  template <class T, class K> CHENS_HD static T potential(const K& k, const chens::Vec<T, 2>& q) { return k[0] * q[1]; }
  template <class T, class K> CHENS_HD static chens::Vec<T, 1> constraint(const K&, const chens::Vec<T, 2>& q) {
    return chens::Vec<T, 1>{{(q[0] * q[0] + q[1] * q[1] - 1) / 2}};
  }
};
struct Swing2 : Swing { static constexpr const char* name = "source-test-swing2"; };
}  // namespace mine
)cpp");
  EXPECT_EQ(load_source_models(header), (std::vector<std::string>{"source-test-swing", "source-test-swing2"}));
  ASSERT_NE(find_custom_model("source-test-swing"), nullptr);
  EXPECT_EQ(find_custom_model("source-test-swing")->parameters.at(0).value, 1.5);
  EXPECT_EQ(find_custom_model("source-test-swing")->spec_type, "::mine::Swing");
  const std::string hash = find_custom_model("source-test-swing")->source_hash;
  dir.write("defaults.hpp", "#pragma once\ninline constexpr double default_g = 2.5;\n");
  load_source_models(header);
  EXPECT_EQ(find_custom_model("source-test-swing")->parameters.at(0).value, 2.5) << "the edit was not compiled";
  EXPECT_NE(find_custom_model("source-test-swing")->source_hash, hash);
  // Two models and no model.kind: which one is the study's?
  const std::string study = dir.write("study.toml", "[model]\nsource = \"models.hpp\"\n");
  EXPECT_NE(refusal([&] { load_runs(study, {}); })
                .find("defines 2 models (\"source-test-swing\", \"source-test-swing2\"): "
                      "say which with model.kind"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              load_runs(study, {"model.kind=pendulum"});
            }).find("model.kind = \"pendulum\" is not a model of model.source"),
            std::string::npos);
  // The formulations a user model runs.
  const std::string total = refusal([&] {
    const std::vector<StudyRun> runs = load_runs(study, {"model.kind=source-test-swing", "integrator.formulation=total"});
    resolve(runs.at(0).study);
  });
  EXPECT_NE(
      total.find("integrator.formulation = \"total\": model.kind = \"source-test-swing\" has \"naive\", "
                 "\"dirac\", \"impetus\", \"baumgarte\" and \"constrained\" (\"constrained\" is method \"rattle\"; the "
                 "formulations of a user model from its header)"),
      std::string::npos)
      << total;
  // Sweeping the header's models is a study; sweeping headers is not.
  EXPECT_EQ(load_runs(dir.write("kinds.toml", "[model]\nsource = \"models.hpp\"\n[sweep]\nmodel.kind = "
                                              "[\"source-test-swing\", \"source-test-swing2\"]\n"),
                      {})
                .size(),
            2u);
  EXPECT_NE(refusal([&] {
              load_runs(dir.write("headers.toml", "[model]\nkind = \"source-test-swing\"\n[sweep]\nmodel.source = "
                                                  "[\"models.hpp\"]\n"),
                        {});
            }).find("model.source may not vary between runs"),
            std::string::npos);
}

// A spec in a file the header includes in quotes, beside it or through another included file,
// is found; a file named in a comment is not read (its struct would not compile: the unit would
// name a type the header never declares).
TEST(SourceModels, SpecsInFilesTheHeaderIncludesAreFound) {
  const TempDir dir("included");
  fs::create_directories(dir.path() / "specs");
  dir.write("specs/deeper.hpp", "#pragma once\n" + unit_circle_spec("Deeper", "source-test-deeper"));
  dir.write("specs/swing.hpp",
            "#pragma once\n#include \"deeper.hpp\"\n" + unit_circle_spec("Included", "source-test-included"));
  dir.write("decoy.hpp", "#pragma once\nstruct Decoy { int x; };\n");
  const std::string header = dir.write("models.hpp", "#pragma once\n"
                                                     "// #include \"decoy.hpp\"\n"
                                                     "/* a block\n#include \"decoy.hpp\"\n*/\n"
                                                     "  #  include \"specs/swing.hpp\"  // beside the header\n");
  EXPECT_EQ(load_source_models(header), (std::vector<std::string>{"source-test-included", "source-test-deeper"}));
  ASSERT_NE(find_custom_model("source-test-deeper"), nullptr);
  EXPECT_EQ(find_custom_model("source-test-deeper")->spec_type, "::mine::Deeper");
}

TEST(SourceModels, BadHeadersAreRefusedWithTheReason) {
  const TempDir dir("bad");
  EXPECT_NE(refusal([&] { load_source_models((dir.path() / "missing.hpp").string()); }).find("missing.hpp\": no such file"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              load_source_models(dir.write("quo\"te.hpp", "#pragma once\nstruct A {};\n"));
            }).find("may not contain a double quote"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              load_source_models(dir.write("none.hpp", "#pragma once\nint f();\n"));
            }).find("defines no struct at namespace scope, nor do the files it includes in quotes"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              load_source_models(dir.write("other.hpp", "#pragma once\nstruct Point { double x, y; };\n"));
            }).find("defines no user model: none of its structs (Point) has the members"),
            std::string::npos);
  // A header that does not compile: the compiler's message, naming the header's line.
  const std::string broken = refusal([&] {
    load_source_models(dir.write("broken.hpp", "#pragma once\nstruct Broken {\n  static constexpr int dof = 2\n};\n"));
  });
  EXPECT_NE(broken.find("compiling the user models of"), std::string::npos) << broken;
  EXPECT_NE(broken.find("broken.hpp:3:"), std::string::npos) << broken;
  // A model named as a built-in model.kind would shadow it.
  const std::string clash =
      refusal([&] { load_source_models(dir.write("clash.hpp", "#pragma once\n" + unit_circle_spec("Clash", "chain"))); });
  EXPECT_NE(clash.find("defines a model called \"chain\", the name of a built-in model.kind"), std::string::npos) << clash;
}

}  // namespace
}  // namespace chens
