#include "metrics_adapter/resource/usage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "unit/resource/test_rules.h"

namespace metrics_adapter::resource {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int64_t kNanosPerCore = 1000000000;

prometheus::Sample podSample(const std::string& ns, const std::string& pod,
                             const std::string& container, double value, double timestamp) {
  return prometheus::Sample{
      {{"namespace", ns}, {"pod", pod}, {"container", container}}, value, timestamp};
}

prometheus::Sample nodeSample(const std::string& node, double value, double timestamp) {
  return prometheus::Sample{{{"instance", node}, {"id", "/"}}, value, timestamp};
}

prometheus::QueryResult vector(std::vector<prometheus::Sample> samples) {
  prometheus::QueryResult result;
  result.samples = std::move(samples);
  return result;
}

const discovery::CompiledResourceRules& upstreamRules() {
  static const auto kRules = test::compileResourceRules();
  return *kRules;
}

ContainerUsage container(const std::string& name, double cores, std::int64_t bytes) {
  return ContainerUsage{name, static_cast<std::int64_t>(cores * kNanosPerCore), bytes};
}

// provider_test "should be able to list metrics pods across different namespaces", the
// some-ns half (upstream times are milliseconds; ours seconds).
TEST(DecodePodUsageTest, UpstreamPodsOfOneNamespace) {
  const DecodedPods decoded =
      decodePodUsage(upstreamRules(), "some-ns", {"pod1", "pod3"},
                     vector({podSample("some-ns", "pod1", "cont1", 1100.0, 10),
                             podSample("some-ns", "pod1", "cont2", 1110.0, 20),
                             podSample("some-ns", "pod3", "cont1", 1300.0, 10),
                             podSample("some-ns", "pod3", "cont2", 1310.0, 20)}),
                     vector({podSample("some-ns", "pod1", "cont1", 3100.0, 11),
                             podSample("some-ns", "pod1", "cont2", 3110.0, 21),
                             podSample("some-ns", "pod3", "cont1", 3300.0, 11),
                             podSample("some-ns", "pod3", "cont2", 3310.0, 21)}));
  EXPECT_THAT(decoded.omitted, IsEmpty());
  ASSERT_EQ(decoded.pods.size(), 2U);
  EXPECT_EQ(decoded.pods[0].namespace_name, "some-ns");
  EXPECT_EQ(decoded.pods[0].name, "pod1");
  EXPECT_EQ(decoded.pods[0].timestamp, 10);
  EXPECT_THAT(decoded.pods[0].containers,
              ElementsAre(container("cont1", 1100, 3100), container("cont2", 1110, 3110)));
  EXPECT_EQ(decoded.pods[1].name, "pod3");
  EXPECT_EQ(decoded.pods[1].timestamp, 10);
  EXPECT_THAT(decoded.pods[1].containers,
              ElementsAre(container("cont1", 1300, 3300), container("cont2", 1310, 3310)));
}

// provider_test "should return nil metrics for missing pods, but still return partial results".
TEST(DecodePodUsageTest, UpstreamMissingPodIsOmitted) {
  const DecodedPods decoded =
      decodePodUsage(upstreamRules(), "some-ns", {"pod1", "pod-nonexistant"},
                     vector({podSample("some-ns", "pod1", "cont1", 1100.0, 10),
                             podSample("some-ns", "pod1", "cont2", 1110.0, 20)}),
                     vector({podSample("some-ns", "pod1", "cont1", 3100.0, 11),
                             podSample("some-ns", "pod1", "cont2", 3110.0, 21)}));
  ASSERT_EQ(decoded.pods.size(), 1U);
  EXPECT_EQ(decoded.pods[0].name, "pod1");
  EXPECT_EQ(decoded.pods[0].timestamp, 10);
  ASSERT_EQ(decoded.omitted.size(), 1U);
  EXPECT_EQ(decoded.omitted[0].name, "pod-nonexistant");
  EXPECT_EQ(decoded.omitted[0].namespace_name, "some-ns");
  EXPECT_EQ(decoded.omitted[0].reason, Omission::Reason::kNoData);
  EXPECT_EQ(decoded.omitted[0].detail, "no CPU samples");
}

// provider_test "should return metrics of value zero when pod metrics have NaN or negative
// values": upstream serves 0; we leave such pods out and say why.
TEST(DecodePodUsageTest, UpstreamNaNAndNegativeValuesOmitThePod) {
  const DecodedPods decoded =
      decodePodUsage(upstreamRules(), "some-ns", {"pod1", "pod3", "pod5"},
                     vector({podSample("some-ns", "pod1", "cont1", -1100.0, 10),
                             podSample("some-ns", "pod1", "cont2", kNaN, 20),
                             podSample("some-ns", "pod3", "cont1", 1300.0, 10),
                             podSample("some-ns", "pod3", "cont2", 1310.0, 20),
                             podSample("some-ns", "pod5", "cont1", 0.5, 10)}),
                     vector({podSample("some-ns", "pod1", "cont1", 3100.0, 11),
                             podSample("some-ns", "pod1", "cont2", -3110.0, 21),
                             podSample("some-ns", "pod3", "cont1", kNaN, 11),
                             podSample("some-ns", "pod3", "cont2", -3310.0, 21),
                             podSample("some-ns", "pod5", "cont1", 1024, 10)}));
  ASSERT_EQ(decoded.pods.size(), 1U);
  EXPECT_EQ(decoded.pods[0].name, "pod5");
  EXPECT_THAT(decoded.pods[0].containers, ElementsAre(container("cont1", 0.5, 1024)));
  ASSERT_EQ(decoded.omitted.size(), 2U);
  EXPECT_EQ(decoded.omitted[0].name, "pod1");
  EXPECT_EQ(decoded.omitted[0].reason, Omission::Reason::kBadValue);
  EXPECT_EQ(decoded.omitted[0].detail, "CPU of container \"cont1\" is -1100");
  EXPECT_EQ(decoded.omitted[1].name, "pod3");
  EXPECT_EQ(decoded.omitted[1].detail, "memory of container \"cont1\" is NaN");
}

struct BadValueCase {
  const char* name;
  double cpu;
  double memory;
  const char* detail;
};

class PodBadValueTest : public ::testing::TestWithParam<BadValueCase> {};

TEST_P(PodBadValueTest, OmitsThePod) {
  const DecodedPods decoded = decodePodUsage(
      upstreamRules(), "ns", {"p"}, vector({podSample("ns", "p", "c", GetParam().cpu, 5)}),
      vector({podSample("ns", "p", "c", GetParam().memory, 5)}));
  EXPECT_THAT(decoded.pods, IsEmpty());
  ASSERT_EQ(decoded.omitted.size(), 1U);
  EXPECT_EQ(decoded.omitted[0].reason, Omission::Reason::kBadValue);
  EXPECT_EQ(decoded.omitted[0].detail, GetParam().detail);
}

INSTANTIATE_TEST_SUITE_P(
    Values, PodBadValueTest,
    ::testing::Values(BadValueCase{"CpuNaN", kNaN, 1, "CPU of container \"c\" is NaN"},
                      BadValueCase{"CpuInf", kInf, 1, "CPU of container \"c\" is +Inf"},
                      BadValueCase{"CpuMinusInf", -kInf, 1, "CPU of container \"c\" is -Inf"},
                      BadValueCase{"CpuNegative", -0.5, 1, "CPU of container \"c\" is -0.5"},
                      // 1e10 cores is 1e19 nanocores, beyond int64.
                      BadValueCase{"CpuTooLarge", 1e10, 1, "CPU of container \"c\" is 1e+10"},
                      BadValueCase{"MemoryInf", 1, kInf, "memory of container \"c\" is +Inf"},
                      BadValueCase{"MemoryTooLarge", 1, 1e300,
                                   "memory of container \"c\" is 1e+300"},
                      BadValueCase{"MemoryDcgmBlank", 1, static_cast<double>(9223372036854775794LL),
                                   "memory of container \"c\" is 9223372036854775808"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(DecodePodUsageTest, ContainerWithOnlyOneValueGetsZeroForTheOther) {
  const DecodedPods decoded = decodePodUsage(
      upstreamRules(), "ns", {"p"},
      vector({podSample("ns", "p", "a", 0.25, 5), podSample("ns", "p", "b", 0.5, 5)}),
      vector({podSample("ns", "p", "b", 100, 5), podSample("ns", "p", "c", 200, 5)}));
  ASSERT_EQ(decoded.pods.size(), 1U);
  EXPECT_THAT(
      decoded.pods[0].containers,
      ElementsAre(container("a", 0.25, 0), container("b", 0.5, 100), container("c", 0, 200)));
}

TEST(DecodePodUsageTest, PodWithoutMemorySamplesIsOmitted) {
  const DecodedPods decoded =
      decodePodUsage(upstreamRules(), "ns", {"p", "q"},
                     vector({podSample("ns", "p", "a", 1, 5), podSample("ns", "q", "a", 1, 5)}),
                     vector({podSample("ns", "q", "a", 1, 5)}));
  ASSERT_EQ(decoded.pods.size(), 1U);
  EXPECT_EQ(decoded.pods[0].name, "q");
  ASSERT_EQ(decoded.omitted.size(), 1U);
  EXPECT_EQ(decoded.omitted[0].detail, "no memory samples");
}

TEST(DecodePodUsageTest, DuplicateSamplesOfAContainerLastWins) {
  const DecodedPods decoded = decodePodUsage(
      upstreamRules(), "ns", {"p"},
      vector({podSample("ns", "p", "a", 1, 5), podSample("ns", "p", "a", 2, 6)}),
      vector({podSample("ns", "p", "a", kNaN, 7), podSample("ns", "p", "a", 30, 8)}));
  ASSERT_EQ(decoded.pods.size(), 1U) << "a bad sample that is replaced is not served";
  EXPECT_THAT(decoded.pods[0].containers, ElementsAre(container("a", 2, 30)));
  EXPECT_EQ(decoded.pods[0].timestamp, 5);

  const DecodedPods bad_last =
      decodePodUsage(upstreamRules(), "ns", {"p"}, vector({podSample("ns", "p", "a", 1, 5)}),
                     vector({podSample("ns", "p", "a", 30, 8), podSample("ns", "p", "a", -1, 7)}));
  EXPECT_THAT(bad_last.pods, IsEmpty());
}

TEST(DecodePodUsageTest, TimestampIsTheEarliestOfAllThePodsSamples) {
  const DecodedPods decoded = decodePodUsage(upstreamRules(), "ns", {"p"},
                                             vector({podSample("ns", "p", "a", 1, 1714564830.5),
                                                     podSample("ns", "p", "b", 1, 1714564820)}),
                                             vector({podSample("ns", "p", "a", 1, 1714564810.25),
                                                     podSample("ns", "p", "b", 1, 1714564840)}));
  ASSERT_EQ(decoded.pods.size(), 1U);
  EXPECT_EQ(decoded.pods[0].timestamp, 1714564810.25);
}

TEST(DecodePodUsageTest, IgnoresPodsNotAskedForAndKeepsUnlabelledContainers) {
  prometheus::Sample no_container{{{"namespace", "ns"}, {"pod", "p"}}, 2, 5};
  const DecodedPods decoded = decodePodUsage(
      upstreamRules(), "ns", {"p", "p"},
      vector({no_container, podSample("ns", "other", "a", 1, 1),
              prometheus::Sample{{{"namespace", "ns"}}, 9, 1}}),
      vector({podSample("ns", "p", "", 64, 5), podSample("ns", "other", "a", 1, 1)}));
  ASSERT_EQ(decoded.pods.size(), 1U);
  EXPECT_EQ(decoded.pods[0].timestamp, 5);
  EXPECT_THAT(decoded.pods[0].containers, ElementsAre(container("", 2, 64)));
  EXPECT_THAT(decoded.omitted, IsEmpty());
}

TEST(DecodePodUsageTest, ReadsEachRulesOwnLabels) {
  // cpu maps pods to `pod`, memory to `kube_pod`, and their container labels differ too.
  std::string yaml = test::kUpstreamDefaultRules;
  const std::size_t memory = yaml.find("  memory:");
  yaml.replace(yaml.find("pod: {resource: pod}", memory), 20, "kube_pod: {resource: pod}");
  yaml.replace(yaml.find("containerLabel: container", memory), 25, "containerLabel: c");
  const auto rules = test::compileResourceRules(yaml);
  ASSERT_NE(rules, nullptr);
  const DecodedPods decoded =
      decodePodUsage(*rules, "ns", {"p"}, vector({podSample("ns", "p", "a", 1, 5)}),
                     vector({prometheus::Sample{{{"kube_pod", "p"}, {"c", "a"}}, 7, 5}}));
  ASSERT_EQ(decoded.pods.size(), 1U);
  EXPECT_THAT(decoded.pods[0].containers, ElementsAre(container("a", 1, 7)));
}

// provider_test "should be able to list metrics for nodes".
TEST(DecodeNodeUsageTest, UpstreamNodes) {
  const DecodedNodes decoded =
      decodeNodeUsage(upstreamRules(), {"node1", "node2"},
                      vector({nodeSample("node1", 1100.0, 10), nodeSample("node2", 1200.0, 14)}),
                      vector({nodeSample("node1", 2100.0, 11), nodeSample("node2", 2200.0, 12)}));
  EXPECT_THAT(decoded.omitted, IsEmpty());
  ASSERT_EQ(decoded.nodes.size(), 2U);
  EXPECT_EQ(decoded.nodes[0].name, "node1");
  EXPECT_EQ(decoded.nodes[0].timestamp, 10);
  EXPECT_EQ(decoded.nodes[0].cpu_nanocores, 1100 * kNanosPerCore);
  EXPECT_EQ(decoded.nodes[0].memory_bytes, 2100);
  EXPECT_EQ(decoded.nodes[1].name, "node2");
  EXPECT_EQ(decoded.nodes[1].timestamp, 12);
  EXPECT_EQ(decoded.nodes[1].cpu_nanocores, 1200 * kNanosPerCore);
  EXPECT_EQ(decoded.nodes[1].memory_bytes, 2200);
}

// provider_test "should return nil metrics for missing nodes, but still return partial results".
TEST(DecodeNodeUsageTest, UpstreamMissingNodeIsOmitted) {
  const DecodedNodes decoded =
      decodeNodeUsage(upstreamRules(), {"node1", "node2", "node3"},
                      vector({nodeSample("node1", 1100.0, 10), nodeSample("node2", 1200.0, 14)}),
                      vector({nodeSample("node1", 2100.0, 11), nodeSample("node2", 2200.0, 12),
                              nodeSample("node3", 2300.0, 12)}));
  ASSERT_EQ(decoded.nodes.size(), 2U);
  ASSERT_EQ(decoded.omitted.size(), 1U);
  EXPECT_EQ(decoded.omitted[0].name, "node3");
  EXPECT_EQ(decoded.omitted[0].namespace_name, "");
  EXPECT_EQ(decoded.omitted[0].reason, Omission::Reason::kNoData);
  EXPECT_EQ(decoded.omitted[0].detail, "no CPU samples");
}

// provider_test "should return metrics of value zero when node metrics have NaN or negative
// values": upstream serves 0; we leave the nodes out.
TEST(DecodeNodeUsageTest, UpstreamNaNAndNegativeValuesOmitTheNode) {
  const DecodedNodes decoded =
      decodeNodeUsage(upstreamRules(), {"node1", "node2", "node3"},
                      vector({nodeSample("node1", -1100.0, 10), nodeSample("node2", 1200.0, 14),
                              nodeSample("node3", 0.001, 14)}),
                      vector({nodeSample("node1", 2100.0, 11), nodeSample("node2", kNaN, 12),
                              nodeSample("node3", 4096, 13)}));
  ASSERT_EQ(decoded.nodes.size(), 1U);
  EXPECT_EQ(decoded.nodes[0].name, "node3");
  EXPECT_EQ(decoded.nodes[0].cpu_nanocores, 1000000);
  EXPECT_EQ(decoded.nodes[0].timestamp, 13);
  ASSERT_EQ(decoded.omitted.size(), 2U);
  EXPECT_EQ(decoded.omitted[0].reason, Omission::Reason::kBadValue);
  EXPECT_EQ(decoded.omitted[0].detail, "CPU is -1100");
  EXPECT_EQ(decoded.omitted[1].detail, "memory is NaN");
}

TEST(DecodeNodeUsageTest, FirstSampleWins) {
  const DecodedNodes decoded = decodeNodeUsage(
      upstreamRules(), {"n"}, vector({nodeSample("n", 1, 10), nodeSample("n", kNaN, 5)}),
      vector({nodeSample("n", 100, 20), nodeSample("n", 200, 1)}));
  ASSERT_EQ(decoded.nodes.size(), 1U);
  EXPECT_EQ(decoded.nodes[0].cpu_nanocores, kNanosPerCore);
  EXPECT_EQ(decoded.nodes[0].memory_bytes, 100);
  EXPECT_EQ(decoded.nodes[0].timestamp, 10);
}

TEST(UsageConversionTest, CpuTruncatesToNanocores) {
  EXPECT_EQ(cpuNanocores(0), 0);
  EXPECT_EQ(cpuNanocores(-0.0), 0);
  EXPECT_EQ(cpuNanocores(0.25), 250000000);
  EXPECT_EQ(cpuNanocores(1.5), 1500000000);
  EXPECT_EQ(cpuNanocores(0.0000000015), 1);
  EXPECT_EQ(cpuNanocores(0.0000000005), 0);
  EXPECT_EQ(cpuNanocores(9.2e9), 9200000000000000000);
  EXPECT_EQ(cpuNanocores(9.3e9), std::nullopt);
  EXPECT_EQ(cpuNanocores(-1e-12), std::nullopt);
  EXPECT_EQ(cpuNanocores(kNaN), std::nullopt);
  EXPECT_EQ(cpuNanocores(kInf), std::nullopt);
}

TEST(UsageConversionTest, MemoryTruncatesToBytes) {
  EXPECT_EQ(memoryBytes(0), 0);
  EXPECT_EQ(memoryBytes(3100.9), 3100);
  EXPECT_EQ(memoryBytes(134217728), 134217728);
  EXPECT_EQ(memoryBytes(9.2e18), 9200000000000000000);
  EXPECT_EQ(memoryBytes(9223372036854775808.0), std::nullopt);
  EXPECT_EQ(memoryBytes(-1), std::nullopt);
  EXPECT_EQ(memoryBytes(kNaN), std::nullopt);
  EXPECT_EQ(memoryBytes(-kInf), std::nullopt);
}

}  // namespace
}  // namespace metrics_adapter::resource
