// The model registry (host/models, issue 42 item 2) against what it describes: the keys it
// says a model takes are the key table's model keys, the state it names has the size of the
// model's own state (include/chens/models), its default initial state is a state the study
// accepts, its reference default is the one its traits compute, and what it refuses elsewhere
// it names. tests/test_systems_list.cpp checks its formulations against the systems list.
#include <gtest/gtest.h>

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>

#include <chens/models/chain.hpp>
#include <chens/models/double_pendulum.hpp>
#include <chens/models/pendulum.hpp>
#include <chens/models/penalty_pendulum.hpp>

#include "cli/cli.hpp"
#include "dispatch/all_model_traits.hpp"
#include "dispatch/system_dispatch.hpp"
#include "models/model_description.hpp"
#include "study/study_key_table.hpp"
#include "support/cli_runner.hpp"
#include "support/source_dir.hpp"

namespace chens {
namespace {

std::vector<const ModelDescription*> built_in_models() {
  std::vector<const ModelDescription*> out;
  for (const ModelDescription* m : model_descriptions())
    if (m->kind != ModelKind::custom) out.push_back(m);
  return out;
}

Study study_of(const ModelDescription& m) {
  Study s;
  s.model_kind = m.kind;
  s.formulation = m.default_formulation;
  s.size = 8;
  s.t_end = 0.1;
  s.h = 0.01;
  return s;
}

// The compiled model's state size and whether its traits' reference is a closed form (the
// rigid pendulum's Jacobi elliptic functions), by ModelKind: from the model headers, not
// from the registry.
struct Compiled {
  int state_size;
  bool closed_form;
};
Compiled compiled(ModelKind kind) {
  constexpr bool pendulum_exact = std::is_same_v<ModelTraits<Pendulum<double>>::Reference, PendulumExact<double>>;
  constexpr bool penalty_exact = std::is_same_v<ModelTraits<PenaltyPendulum<double>>::Reference, PendulumExact<double>>;
  constexpr bool chain_exact = std::is_same_v<ModelTraits<Chain<double, 7>>::Reference, PendulumExact<double>>;
  constexpr bool double_exact = std::is_same_v<ModelTraits<DoublePendulum<double>>::Reference, PendulumExact<double>>;
  switch (kind) {
    case ModelKind::pendulum: return {Pendulum<double>::state_size, pendulum_exact};
    case ModelKind::penalty_pendulum: return {PenaltyPendulum<double>::state_size, penalty_exact};
    case ModelKind::chain: return {Chain<double, 7>::state_size, chain_exact};  // model.atoms defaults to 7
    case ModelKind::double_pendulum: return {DoublePendulum<double>::state_size, double_exact};
    case ModelKind::custom: break;
  }
  return {0, false};
}

TEST(ModelRegistry, EveryModelKindHasOneDescriptionOfItsName) {
  std::set<ModelKind> kinds;
  for (const ModelDescription* m : model_descriptions()) {
    EXPECT_TRUE(kinds.insert(m->kind).second) << m->name << " described twice";
    if (m->kind != ModelKind::custom) {
      EXPECT_STREQ(m->name, model_kind_name(m->kind));
      EXPECT_EQ(find_built_in_model(m->name), m);
    }
  }
  EXPECT_EQ(kinds.size(), static_cast<std::size_t>(model_kind_count) + 1);  // and the user models'
  EXPECT_EQ(find_built_in_model("user-model"), nullptr);
}

TEST(ModelRegistry, TheKeysAModelTakesAreTheKeyTablesModelKeys) {
  std::set<std::string> model_keys;
  for (const StudyKey& k : study_keys())
    if (k.scope == KeyScope::model) model_keys.insert(k.path());
  std::set<std::string> taken;
  for (const ModelDescription* m : model_descriptions())
    for (const std::string& key : m->keys) {
      EXPECT_EQ(model_keys.count(key), 1u) << m->name << " lists " << key << ", which is not a model key of the table";
      taken.insert(key);
    }
  // A model's own keys (ModelDescription::own_keys) are model keys of the table that it takes.
  for (const ModelDescription* m : model_descriptions())
    for (const StudyKey& k : m->own_keys) {
      EXPECT_EQ(model_keys.count(k.path()), 1u) << m->name << " declares " << k.path() << ", not in the table";
      EXPECT_TRUE(m->takes(k.path())) << m->name << " does not take its own " << k.path();
      taken.insert(k.path());
    }
  for (const std::string& key : model_keys) EXPECT_EQ(taken.count(key), 1u) << key << ": no model takes it";
  // summary.json prints one mass per body of the models that take model.masses: each has its
  // function for them (a model's own keys print themselves).
  for (const ModelDescription* m : model_descriptions()) {
    EXPECT_EQ(m->takes("model.masses"), m->body_masses != nullptr) << m->name;
  }
}

// A model's own keys join the table after the last key of their section (a new section's at
// the end), as model keys; a key declared twice, by the table or another model, is refused.
TEST(ModelRegistry, OwnKeysJoinTheTableAtTheEndOfTheirSection) {
  auto key = [](const char* section, const char* name) {
    return StudyKey{.section = section, .name = name, .type = own_numbers("x.y", "an array", "", nullptr)};
  };
  const std::vector<StudyKey> table = {key("model", "kind"), key("model", "mass"), key("integrator", "h")};
  ModelDescription a = *model_descriptions().front(), b = a;  // a copy, to be given other keys
  a.name = "a";
  b.name = "b";
  a.own_keys = {key("model", "springs"), key("output", "tension")};
  b.own_keys = {key("model", "charges")};
  const std::vector<StudyKey> all = with_own_keys(table, {&a, &b});
  std::vector<std::string> paths;
  for (const StudyKey& k : all) paths.push_back(k.path());
  EXPECT_EQ(paths, (std::vector<std::string>{"model.kind", "model.mass", "model.springs", "model.charges", "integrator.h",
                                             "output.tension"}));
  EXPECT_EQ(all[2].scope, KeyScope::model);
  EXPECT_EQ(all[5].scope, KeyScope::model);
  b.own_keys = {key("model", "mass")};
  try {
    (void)with_own_keys(table, {&b});
    ADD_FAILURE() << "model.mass declared twice was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "study key model.mass is declared twice (model b)");
  }
  b.own_keys = {key("model", "springs")};
  EXPECT_THROW((void)with_own_keys(table, {&a, &b}), std::logic_error);
  // The registered models' table: the double pendulum's model.lengths last of [model].
  const std::vector<StudyKey>& keys = study_keys();
  const auto lengths = std::find_if(keys.begin(), keys.end(), [](const StudyKey& k) { return k.path() == "model.lengths"; });
  ASSERT_NE(lengths, keys.end());
  EXPECT_EQ(std::string((lengths + 1)->section), "integrator");
  EXPECT_EQ(lengths->scope, KeyScope::model);
}

// An own key joins its section after the section's last model key, where it has one: the
// [parameters] laws of a model stay before group_by (every study's), as the table had them.
TEST(ModelRegistry, OwnKeysJoinAfterTheLastModelKeyOfTheirSection) {
  auto key = [](const char* section, const char* name, KeyScope scope) {
    return StudyKey{.section = section, .name = name, .type = own_numbers("x.y", "an array", "", nullptr), .scope = scope};
  };
  const std::vector<StudyKey> table = {key("parameters", "mass", KeyScope::model),
                                       key("parameters", "h", KeyScope::every_study),
                                       key("parameters", "group_by", KeyScope::every_study)};
  ModelDescription a = *model_descriptions().front(), b = a;
  a.name = "a";
  b.name = "b";
  a.own_keys = {key("parameters", "stiffness", KeyScope::every_study)};
  b.own_keys = {key("parameters", "charge", KeyScope::every_study)};
  std::vector<std::string> paths;
  for (const StudyKey& k : with_own_keys(table, {&a, &b})) paths.push_back(k.path());
  EXPECT_EQ(paths, (std::vector<std::string>{"parameters.mass", "parameters.stiffness", "parameters.charge", "parameters.h",
                                             "parameters.group_by"}));
  // The registered models' [parameters]: the chain's and the penalty pendulum's laws before h.
  std::vector<std::string> registered;
  for (const StudyKey* k : section_keys("parameters")) registered.push_back(k->name);
  EXPECT_EQ(registered, (std::vector<std::string>{"mass", "length", "gravity", "bond_length", "lj_epsilon", "penalty", "h",
                                                  "group_by", "group_bins", "group_edges"}));
}

// A model's own keys of one value (OwnKey): their defaults where not given, the values set_key
// gives them as --set does (and refuses as --set does), and what the model's system_args hands
// its units: the nominal parameters the engines read by ParameterId.
TEST(ModelRegistry, OwnKeysOfOneValueReachTheSystemArgs) {
  Study chain = study_of(*find_built_in_model("chain"));
  const RunParams<double> rp = resolve(chain);
  SystemArgs a = system_args(chain, rp);
  EXPECT_EQ(model_key(chain).atoms, 7);  // the declared defaults
  EXPECT_EQ(a[ParameterId::bond_length], 1.0);
  EXPECT_EQ(a[ParameterId::lj_epsilon], 0.1);
  set_key(chain, "model.atoms = 12");
  set_key(chain, "model.bond_length=1.25");
  set_key(chain, "model.lj_epsilon=0");
  EXPECT_TRUE(chain.has("model.atoms"));
  EXPECT_EQ(std::get<std::int64_t>(chain.model_values.at("model.atoms")), 12);
  EXPECT_EQ(model_key(chain).atoms, 12);
  EXPECT_EQ(initial_state(chain).size(), 48u);
  a = system_args(chain, resolve(chain));
  EXPECT_EQ(a[ParameterId::bond_length], 1.25);
  EXPECT_EQ(a[ParameterId::lj_epsilon], 0.0);
  EXPECT_EQ(a.inverse_masses.size(), 12u);
  // Refused as --set refuses them, the value unchanged.
  for (const auto& [set, message] : std::vector<std::pair<std::string, std::string>>{
           {"model.atoms=1", "model.atoms = 1: must be an integer in [2, "},
           {"model.bond_length=-1", "model.bond_length = -1: must be a finite number > 0"},
           {"model.spring=1", "unknown key model.spring"}}) {
    try {
      set_key(chain, set);
      ADD_FAILURE() << set << " was accepted";
    } catch (const StudyError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(model_key(chain).atoms, 12);

  Study penalty = study_of(*find_built_in_model("penalty-pendulum"));
  penalty.given.erase("integrator.h");
  a = system_args(penalty, resolve(penalty));
  EXPECT_EQ(a[ParameterId::penalty], 1000.0);
  EXPECT_FALSE(a.penalty_g1);
  set_key(penalty, "model.penalty=250");
  set_key(penalty, "model.constraint=G1");
  a = system_args(penalty, resolve(penalty));
  EXPECT_EQ(a[ParameterId::penalty], 250.0);
  EXPECT_TRUE(a.penalty_g1);
  set_key(penalty, "integrator.steps_per_oscillation=40");
  set_key(penalty, "integrator.h=0.001");
  EXPECT_THROW(resolve(penalty), StudyError);  // one of the two (the model's own rule)
}

TEST(ModelRegistry, StateNamesAndDefaultInitialStateHaveTheModelsSize) {
  for (const ModelDescription* m : built_in_models()) {
    const Study s = study_of(*m);
    const std::vector<std::string> names = m->state_names(s);
    EXPECT_EQ(static_cast<int>(names.size()), compiled(m->kind).state_size) << m->name;
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size()) << m->name << ": a name twice";
    EXPECT_EQ(static_cast<int>(initial_state(s).size()), compiled(m->kind).state_size) << m->name;
    // The default study of every model resolves: its default initial state passes its own rules.
    EXPECT_NO_THROW(resolve(s)) << m->name;
  }
}

TEST(ModelRegistry, TheReferenceDefaultIsTheTraitsClosedForm) {
  for (const ModelDescription* m : built_in_models()) {
    EXPECT_EQ(m->closed_form_reference, compiled(m->kind).closed_form) << m->name;
    EXPECT_EQ(reference_on(study_of(*m)), compiled(m->kind).closed_form) << m->name;
  }
}

// The compiler's name of a type ("chens::Chain<double, 7>").
template <class T>
std::string type_name() {
  int status = 0;
  char* name = abi::__cxa_demangle(typeid(T).name(), nullptr, nullptr, &status);
  std::string out = name ? name : "";
  std::free(name);
  return out;
}

// The C++ type a unit compiled on first use instantiates for a model is the type of its
// entries in the systems list, by the compiler's own name of those types.
TEST(ModelRegistry, TheTypeCompiledOnFirstUseIsTheSystemsListsModelType) {
  std::set<std::string> listed;
  for_each_system<CpuBackend>([&](auto e) {
    listed.insert(type_name<typename decltype(e)::Model>());
    return false;
  });
  for (const ModelDescription* m : built_in_models()) {
    Study s = study_of(*m);
    EXPECT_EQ(listed.count("chens::" + m->cpp_type(s)), 1u) << m->cpp_type(s) << " is not a model of the systems list";
    if (!m->single_precision) continue;
    s.precision = Precision::single_precision;
    set_key(s, "model.atoms=" + std::to_string(float_chain_atoms));
    EXPECT_EQ(listed.count("chens::" + m->cpp_type(s)), 1u) << m->cpp_type(s) << " is not a model of the systems list";
  }
}

TEST(ModelRegistry, AKeyGivenToAModelThatDoesNotTakeItIsRefusedNamingThoseThatDo) {
  for (const ModelDescription* m : built_in_models())
    for (const StudyKey& k : study_keys()) {
      if (k.scope != KeyScope::model || m->takes(k.path())) continue;
      Study s = study_of(*m);
      s.given.insert(k.path());
      try {
        refuse_keys_out_of_scope(s, k.section);
        ADD_FAILURE() << k.path() << " accepted for " << m->name;
      } catch (const StudyError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find(k.path() + " applies to " + models_taking(k.path()) + " only"), std::string::npos) << message;
        const std::string why = k.scope_note ? k.scope_note : std::string("model.kind is \"") + m->name + "\"";
        EXPECT_NE(message.find(why + ")"), std::string::npos) << message;
      }
    }
  EXPECT_EQ(models_taking("model.masses"), "model.kind = \"chain\" and \"double-pendulum\"");
  EXPECT_EQ(models_taking("model.source"), "user models");
}

// The block `chens models` prints for one model (from its title line to the blank line).
std::string block_of(const std::string& out, const std::string& title) {
  const std::size_t at = out.find(title + "\n");
  if (at == std::string::npos) return "";
  return out.substr(at, out.find("\n\n", at) - at);
}

TEST(ModelRegistry, ChensModelsListsEveryModelWithWhatItTakes) {
  const test::CliResult r = test::run_cli({"models"});
  ASSERT_EQ(r.code, exit_ok) << r.err;
  for (const ModelDescription* m : built_in_models()) {
    const std::string block = block_of(r.out, std::string("model.kind = \"") + m->name + "\"");
    ASSERT_FALSE(block.empty()) << m->name << " is not listed:\n" << r.out;
    for (const std::string& key : m->keys) EXPECT_NE(block.find(key), std::string::npos) << m->name << ": " << key;
  }
  // The states at the keys' defaults: the models' own sizes (a chain of Study{}'s 7 atoms).
  EXPECT_NE(block_of(r.out, "model.kind = \"pendulum\"").find("  state         x, y, px, py\n"), std::string::npos);
  EXPECT_NE(block_of(r.out, "model.kind = \"chain\"").find("x0, y0, x1, y1, ..., py6 (28 numbers)"), std::string::npos);
  EXPECT_NE(block_of(r.out, "model.kind = \"double-pendulum\"").find("x1, y1, x2, y2, px1, py1, px2, py2"),
            std::string::npos);
  EXPECT_NE(block_of(r.out, "model.kind = \"penalty-pendulum\"").find("integrator.method = \"verlet\""), std::string::npos);
  // The user models this suite builds in (tests/CMakeLists.txt: planar pendulum with naive,
  // dirac, constrained; parameters m, l, g of examples/custom_model/models/planar_pendulum.hpp).
  const std::string planar = block_of(r.out, "model.kind = \"planar-pendulum\" (a user model: " + test::source_dir() +
                                                 "/examples/custom_model/models/planar_pendulum.hpp, chens_add_model)");
  ASSERT_FALSE(planar.empty()) << r.out;
  EXPECT_NE(planar.find("  formulations  naive, dirac, constrained (methods rattle, rattle4, rattle4-suzuki, rattle6, "
                        "rattle8, lobatto3)\n"),
            std::string::npos)
      << planar;
  EXPECT_EQ(planar.find("model.source"), std::string::npos) << planar;
  EXPECT_EQ(test::run_cli({"models", "--bogus"}).code, exit_bad_input);
  EXPECT_EQ(test::run_cli({"models", "--help"}).code, exit_ok);
  const test::CliResult missing = test::run_cli({"models", "--source", "/nonexistent/x.hpp"});
  EXPECT_EQ(missing.code, exit_bad_input);
  EXPECT_NE(missing.err.find("model.source = \"/nonexistent/x.hpp\": no such file"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace chens
