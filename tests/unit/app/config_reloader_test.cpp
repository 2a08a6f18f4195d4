#include "app/config_reloader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "metrics_adapter/app/backend_pool.h"

namespace metrics_adapter::app {
namespace {

namespace fs = std::filesystem;

// One custom rule naming its metrics "<series><suffix>".
std::string ruleYaml(const std::string& suffix) {
  return "rules:\n"
         "- seriesQuery: '{namespace!=\"\"}'\n"
         "  resources:\n"
         "    overrides:\n"
         "      namespace: {resource: \"namespace\"}\n"
         "  name:\n"
         "    matches: ^(.*)$\n"
         "    as: \"${1}" +
         suffix +
         "\"\n"
         "  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>})\n";
}

// Parses (strict YAML) but the regex does not compile: rejected by parseConfig.
const char* const kBadRegex =
    "rules:\n"
    "- seriesQuery: 'up'\n"
    "  name: {matches: '^(.*$'}\n"
    "  metricsQuery: sum(<<.Series>>)\n";
// Parses but the template names an unknown field: rejected when compiled.
const char* const kBadTemplate =
    "rules:\n"
    "- seriesQuery: 'up'\n"
    "  resources: {template: '<<.Resource>>'}\n"
    "  metricsQuery: sum(<<.Nonsense>>)\n";

void writeConfigFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

std::shared_ptr<const kube::RestMapper> builtinMapper() {
  return std::make_shared<const kube::RestMapper>(kube::RestMapper::builtin().resources());
}

class ReloaderDir {
 public:
  ReloaderDir() {
    std::string pattern = (fs::temp_directory_path() / "config_reloader_XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~ReloaderDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The layout of a mounted ConfigMap: config.yaml -> ..data/config.yaml, ..data -> <version dir>.
class ConfigMapDir {
 public:
  explicit ConfigMapDir(const std::string& first) {
    addVersion(first);
    fs::create_symlink("..data/config.yaml", dir_.path() / "config.yaml");
  }
  std::string file() const { return (dir_.path() / "config.yaml").string(); }
  // Writes a new version directory and swaps ..data to it atomically, as the kubelet does.
  void addVersion(const std::string& text) {
    std::string name = "ts" + std::to_string(++versions_);
    fs::create_directory(dir_.path() / name);
    writeConfigFile(dir_.path() / name / "config.yaml", text);
    fs::create_symlink(name, dir_.path() / "..data_tmp");
    fs::rename(dir_.path() / "..data_tmp", dir_.path() / "..data");
  }

 private:
  ReloaderDir dir_;
  int versions_ = 0;
};

struct Recorder {
  std::vector<std::shared_ptr<const discovery::RuleSet>> applied;
  std::vector<bool> results;
};

// Backends as the server builds them, the flags' default at a port nothing listens on (nothing
// here calls it: building a client does not connect).
std::shared_ptr<BackendPool> testPool() {
  prometheus::PrometheusClientOptions flags;
  flags.url = "http://127.0.0.1:9";
  return std::make_shared<BackendPool>(flags, prometheus::CoalescingOptions{}, nullptr);
}

std::shared_ptr<ConfigState> makeState(const std::string& yaml, Recorder* recorder,
                                       std::shared_ptr<BackendPool> pool = testPool()) {
  config::AdapterConfig config = config::parseConfig(yaml, "initial.yaml");
  auto backends = pool->build(config);
  return std::make_shared<ConfigState>(
      std::move(config), builtinMapper(), std::move(backends),
      [pool](const config::AdapterConfig& next) { return pool->build(next); },
      [recorder](std::shared_ptr<const discovery::RuleSet> rules) {
        recorder->applied.push_back(std::move(rules));
      });
}

// ruleYaml(suffix) served by the backend "gpu" at `url`, with `extra` lines under it.
std::string gpuBackendYaml(const std::string& url, const std::string& extra = "") {
  return "backends:\n  gpu:\n    url: " + url + "\n" + extra + ruleYaml("") + "  backend: gpu\n";
}

TEST(ConfigStateTest, AChangedBackendUrlIsANewClientAndUnchangedOnesAreKept) {
  Recorder recorder;
  auto state = makeState(gpuBackendYaml("http://thanos:10902"), &recorder);
  const auto before = state->backends();
  ASSERT_TRUE(before->find("gpu"));
  EXPECT_EQ(before->find("gpu")->url, "http://thanos:10902");
  ASSERT_TRUE(before->find("default"));
  EXPECT_EQ(before->find("default")->url, "http://127.0.0.1:9");

  state->replaceConfig(config::parseConfig(gpuBackendYaml("http://mimir:8080/prometheus"), "b"));
  const auto after = state->backends();
  EXPECT_EQ(after->find("gpu")->url, "http://mimir:8080/prometheus");
  EXPECT_NE(after->find("gpu")->api, before->find("gpu")->api);
  EXPECT_EQ(after->find("default")->api, before->find("default")->api);  // cache and pool kept
  ASSERT_EQ(recorder.applied.size(), 1u);
  EXPECT_EQ(recorder.applied.back()->backends, after);
  EXPECT_EQ(recorder.applied.back()->rules[0]->source.backend, "gpu");
}

TEST(ConfigStateTest, AnUnreadableCredentialKeepsTheLastGoodBackends) {
  Recorder recorder;
  auto state = makeState(gpuBackendYaml("http://thanos:10902"), &recorder);
  const auto before = state->backends();
  try {
    state->replaceConfig(config::parseConfig(
        gpuBackendYaml("http://thanos:10902", "    tokenFile: /nonexistent/token\n"),
        "broken.yaml"));
    FAIL() << "no error";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.yaml: backends.gpu.tokenFile: cannot read "
                                         "\"/nonexistent/token\""),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(state->backends(), before);
  EXPECT_TRUE(recorder.applied.empty());
}

TEST(ConfigStateTest, NewConfigIsCompiledAgainstTheCurrentMapping) {
  Recorder recorder;
  auto state = makeState(ruleYaml("_a"), &recorder);
  auto mapper = state->mapper();
  state->replaceConfig(config::parseConfig(ruleYaml("_now"), "new.yaml"));
  ASSERT_EQ(recorder.applied.size(), 1u);
  EXPECT_EQ(recorder.applied[0]->mapper, mapper);
  ASSERT_EQ(recorder.applied[0]->rules.size(), 1u);
  EXPECT_EQ(state->config()->rules[0].name.as, "${1}_now");
}

TEST(ConfigStateTest, NewMappingIsAppliedToTheCurrentConfigNotTheFirst) {
  Recorder recorder;
  auto state = makeState(ruleYaml("_a"), &recorder);
  state->replaceConfig(config::parseConfig(ruleYaml("_now") + "externalRules:\n" +
                                               "- seriesQuery: 'up'\n" +
                                               "  metricsQuery: sum(<<.Series>>)\n",
                                           "new.yaml"));
  auto mapper = builtinMapper();
  state->replaceMapper(mapper);
  ASSERT_EQ(recorder.applied.size(), 2u);
  EXPECT_EQ(recorder.applied[1]->mapper, mapper);
  EXPECT_EQ(state->mapper(), mapper);
  // The config given at construction had one rule; the current one has two.
  EXPECT_EQ(recorder.applied[1]->rules.size(), 2u);
}

TEST(ConfigStateTest, ConfigThatDoesNotCompileChangesNothing) {
  Recorder recorder;
  auto state = makeState(ruleYaml("_a"), &recorder);
  EXPECT_THROW(state->replaceConfig(config::parseConfig(kBadTemplate, "bad.yaml")),
               config::ConfigError);
  EXPECT_TRUE(recorder.applied.empty());
  EXPECT_EQ(state->config()->rules[0].name.as, "${1}_a");
}

TEST(FileIdentityTest, SymlinkSwapChangesTheIdentityEvenWithEqualContent) {
  ConfigMapDir dir(ruleYaml("_a"));
  auto before = fileIdentity(dir.file());
  ASSERT_TRUE(before);
  EXPECT_EQ(fileIdentity(dir.file()), before);
  dir.addVersion(ruleYaml("_a"));  // same bytes, same size: only the resolved path differs
  auto after = fileIdentity(dir.file());
  ASSERT_TRUE(after);
  EXPECT_NE(after->resolved_path, before->resolved_path);
  EXPECT_NE(after, before);
  EXPECT_FALSE(fileIdentity(dir.file() + ".missing"));
}

class ConfigReloaderTest : public ::testing::Test {
 protected:
  ConfigReloader makeReloaderOn(const std::string& path) {
    auto loaded = fileIdentity(path);
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    state_ = makeState(text, &recorder_);
    // Interval irrelevant: the tests call checkOnce()/reloadNow() and never start the task.
    return ConfigReloader(path, loaded, state_, std::chrono::hours(1),
                          [this](bool success) { recorder_.results.push_back(success); });
  }
  std::string currentSuffix() const { return state_->config()->rules[0].name.as; }

  Recorder recorder_;
  std::shared_ptr<ConfigState> state_;
};

TEST_F(ConfigReloaderTest, UnchangedFileIsNotReloaded) {
  ConfigMapDir dir(ruleYaml("_a"));
  auto reloader = makeReloaderOn(dir.file());
  EXPECT_EQ(reloader.checkOnce(), std::nullopt);
  EXPECT_TRUE(recorder_.results.empty());
  EXPECT_TRUE(recorder_.applied.empty());
}

TEST_F(ConfigReloaderTest, InPlaceRewriteIsPickedUp) {
  ReloaderDir dir;
  auto path = (dir.path() / "config.yaml").string();
  writeConfigFile(path, ruleYaml("_a"));
  auto reloader = makeReloaderOn(path);
  writeConfigFile(path,
                  ruleYaml("_rewritten"));  // different size, so detected even within one tick
  EXPECT_EQ(reloader.checkOnce(), std::optional<bool>(true));
  EXPECT_EQ(currentSuffix(), "${1}_rewritten");
  EXPECT_EQ(recorder_.results, (std::vector<bool>{true}));
}

TEST_F(ConfigReloaderTest, ConfigMapSwapIsPickedUpAndBrokenVersionsKeepTheLastGood) {
  ConfigMapDir dir(ruleYaml("_a"));
  auto reloader = makeReloaderOn(dir.file());

  dir.addVersion(ruleYaml("_now"));
  EXPECT_EQ(reloader.checkOnce(), std::optional<bool>(true));
  EXPECT_EQ(currentSuffix(), "${1}_now");
  ASSERT_EQ(recorder_.applied.size(), 1u);

  for (const char* broken : {kBadRegex, kBadTemplate}) {
    dir.addVersion(broken);
    EXPECT_EQ(reloader.checkOnce(), std::optional<bool>(false)) << broken;
    EXPECT_EQ(currentSuffix(), "${1}_now") << broken;
    // A broken version is reported once, not on every poll.
    EXPECT_EQ(reloader.checkOnce(), std::nullopt);
  }
  EXPECT_EQ(recorder_.applied.size(), 1u);
  // SIGHUP retries even an unchanged file, and counts the failure again.
  EXPECT_FALSE(reloader.reloadNow());
  EXPECT_EQ(recorder_.results, (std::vector<bool>{true, false, false, false}));

  dir.addVersion(ruleYaml("_fixed"));
  EXPECT_EQ(reloader.checkOnce(), std::optional<bool>(true));
  EXPECT_EQ(currentSuffix(), "${1}_fixed");
}

TEST_F(ConfigReloaderTest, DeletedFileIsAFailureAndReappearingIsReloaded) {
  ReloaderDir dir;
  auto path = (dir.path() / "config.yaml").string();
  writeConfigFile(path, ruleYaml("_a"));
  auto reloader = makeReloaderOn(path);
  fs::remove(path);
  EXPECT_EQ(reloader.checkOnce(), std::optional<bool>(false));
  EXPECT_EQ(currentSuffix(), "${1}_a");
  writeConfigFile(path, ruleYaml("_back"));
  EXPECT_EQ(reloader.checkOnce(), std::optional<bool>(true));
  EXPECT_EQ(currentSuffix(), "${1}_back");
}

TEST_F(ConfigReloaderTest, SighupReloadsAnUnchangedFile) {
  ConfigMapDir dir(ruleYaml("_a"));
  auto reloader = makeReloaderOn(dir.file());
  EXPECT_TRUE(reloader.reloadNow());
  EXPECT_EQ(recorder_.applied.size(), 1u);
  EXPECT_EQ(recorder_.results, (std::vector<bool>{true}));
}

}  // namespace
}  // namespace metrics_adapter::app
