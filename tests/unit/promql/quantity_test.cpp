#include "metrics_adapter/promql/quantity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <string>

namespace metrics_adapter::promql {
namespace {

struct MilliCase {
  std::int64_t milli;
  std::string text;
};

void PrintTo(const MilliCase& c, std::ostream* os) { *os << testing::PrintToString(c.milli); }

class FormatMilliQuantityTest : public testing::TestWithParam<MilliCase> {};

TEST_P(FormatMilliQuantityTest, MatchesApimachinery) {
  EXPECT_EQ(formatMilliQuantity(GetParam().milli), GetParam().text);
}

// docs/api-contract.md "Quantities" test vectors, all of them.
INSTANTIATE_TEST_SUITE_P(
    SpecVectors, FormatMilliQuantityTest,
    testing::Values(MilliCase{0, "0"}, MilliCase{1, "1m"}, MilliCase{250, "250m"},
                    MilliCase{500, "500m"}, MilliCase{999, "999m"}, MilliCase{1000, "1"},
                    MilliCase{1001, "1001m"}, MilliCase{1500, "1500m"}, MilliCase{12345, "12345m"},
                    MilliCase{100000, "100"}, MilliCase{120000, "120"}, MilliCase{1230000, "1230"},
                    MilliCase{1000000, "1k"}, MilliCase{2500000, "2500"},
                    MilliCase{1234567, "1234567m"}, MilliCase{1000000000, "1M"},
                    MilliCase{1000000000000, "1G"}, MilliCase{1500000000000, "1500M"},
                    MilliCase{10000000000000000, "10T"}, MilliCase{1000000000000000000, "1P"},
                    MilliCase{9223372036854775807, "9223372036854775807m"},
                    MilliCase{-500, "-500m"}, MilliCase{-1500, "-1500m"},
                    MilliCase{std::numeric_limits<std::int64_t>::min(), "-9223372036854775808m"}));

struct SampleCase {
  double value;
  std::optional<std::string> quantity;
};

void PrintTo(const SampleCase& c, std::ostream* os) { *os << testing::PrintToString(c.value); }

class SampleToQuantityTest : public testing::TestWithParam<SampleCase> {};

TEST_P(SampleToQuantityTest, Converts) {
  EXPECT_EQ(sampleToQuantity(GetParam().value), GetParam().quantity) << GetParam().value;
}

// docs/api-contract.md "Quantities" "Adapter mapping examples": trunc(value*1000) toward
// zero. 12.345*1000 is 12344.99999999999975 exactly, which rounds to the double 12345.0 (half an
// ulp there is 9e-13), so both Go and C++ truncate it to 12345.
INSTANTIATE_TEST_SUITE_P(
    SpecMapping, SampleToQuantityTest,
    testing::Values(SampleCase{0.5, "500m"}, SampleCase{12.345, "12345m"}, SampleCase{1e9, "1G"},
                    SampleCase{0.0005, "0"}, SampleCase{12.3456, "12345m"},
                    SampleCase{-0.0005, "0"}, SampleCase{99.9999, "99999m"},
                    SampleCase{1.0 / 3.0, "333m"}, SampleCase{20.5, "20500m"},
                    SampleCase{2000, "2k"}, SampleCase{0, "0"}, SampleCase{-0.0, "0"},
                    SampleCase{-2.5, "-2500m"}, SampleCase{1e-300, "0"},
                    SampleCase{std::numeric_limits<double>::denorm_min(), "0"}));

// docs/api-contract.md "Decisions: better on purpose" 2: no NaN->0, no int64 overflow, DCGM blanks
// are missing.
INSTANTIATE_TEST_SUITE_P(
    Edges, SampleToQuantityTest,
    testing::Values(
        SampleCase{std::numeric_limits<double>::quiet_NaN(), std::nullopt},
        SampleCase{std::numeric_limits<double>::infinity(), std::nullopt},
        SampleCase{-std::numeric_limits<double>::infinity(), std::nullopt},
        SampleCase{9223372036854775808.0, std::nullopt},
        SampleCase{static_cast<double>(9223372036854775792LL), std::nullopt},
        SampleCase{static_cast<double>(9223372036854775794LL), std::nullopt},
        SampleCase{static_cast<double>(9223372036854775807LL), std::nullopt},
        // Still below 2^63 milli: the int64 path (9.2e18 m = 9200e12).
        SampleCase{9.2e15, "9200T"}, SampleCase{9e15, "9P"},
        // Go's float64 product 9223372036854774.0*1000 rounds to 9223372036854773760
        // (doubles are 1024 apart there); truncation keeps that, as upstream does.
        SampleCase{9223372036854774.0, "9223372036854773760m"},
        // From here value*1000 >= 2^63: exact integer of the double, zeros folded into suffixes.
        SampleCase{9223372036854776.0, "9223372036854776"}, SampleCase{9.3e15, "9300T"},
        SampleCase{1e16, "10P"}, SampleCase{1e18, "1E"}, SampleCase{1e20, "100E"},
        SampleCase{-1e20, "-100E"}, SampleCase{1e22, "10000E"},
        SampleCase{-9223372036854775808.0, "-9223372036854775808"},
        SampleCase{18446744073709551616.0, "18446744073709551616"},
        // int(1e300) in Python: the double's exact value has a single trailing zero.
        SampleCase{1e300,
                   "1000000000000000052504760255204420248704468581108159154915854115511802457988"
                   "9081957863713750804478640437044438328838781769425232353604305756447921847867"
                   "0698284838720092657580373783023379478809005936895323497079994508111903896764"
                   "0880074652742780142494579258788820056842838115669472196386865459400540160"}));

// metrics-server's CPU form: NewScaledQuantity(nanocores, -9) in DecimalSI. Expected strings
// follow apimachinery's AsCanonicalBytes by hand: strip trailing zeros into the exponent
// (starting at -9), lower it to a multiple of 3, pick the suffix n u m "" k M G.
struct NanoCase {
  std::int64_t nanos;
  std::string text;
};

void PrintTo(const NanoCase& c, std::ostream* os) { *os << testing::PrintToString(c.nanos); }

class FormatNanoQuantityTest : public testing::TestWithParam<NanoCase> {};

TEST_P(FormatNanoQuantityTest, MatchesApimachinery) {
  EXPECT_EQ(formatNanoQuantity(GetParam().nanos), GetParam().text);
}

INSTANTIATE_TEST_SUITE_P(
    Canonical, FormatNanoQuantityTest,
    testing::Values(NanoCase{0, "0"}, NanoCase{1, "1n"}, NanoCase{999, "999n"},
                    NanoCase{1000, "1u"}, NanoCase{1500, "1500n"}, NanoCase{1500000, "1500u"},
                    NanoCase{5000000, "5m"}, NanoCase{120000000, "120m"},
                    NanoCase{250000000, "250m"}, NanoCase{123456789, "123456789n"},
                    NanoCase{1000000000, "1"}, NanoCase{1500000000, "1500m"},
                    NanoCase{2000000000, "2"}, NanoCase{12345678900, "12345678900n"},
                    NanoCase{1000000000000, "1k"}, NanoCase{9000000000000000000, "9G"},
                    NanoCase{9223372036854775807, "9223372036854775807n"},
                    NanoCase{-5000000, "-5m"}, NanoCase{-1500, "-1500n"},
                    NanoCase{std::numeric_limits<std::int64_t>::min(), "-9223372036854775808n"}));

// metrics-server's memory form: bytes in BinarySI (apimachinery's CanonicalizeBytes): below
// 1024 in magnitude DecimalSI, else factors of 1024 become Ki..Ei, else plain digits.
struct ByteCase {
  std::int64_t bytes;
  std::string text;
};

void PrintTo(const ByteCase& c, std::ostream* os) { *os << testing::PrintToString(c.bytes); }

class FormatByteQuantityTest : public testing::TestWithParam<ByteCase> {};

TEST_P(FormatByteQuantityTest, MatchesApimachinery) {
  EXPECT_EQ(formatByteQuantity(GetParam().bytes), GetParam().text);
}

constexpr std::int64_t kKi = 1024;

INSTANTIATE_TEST_SUITE_P(
    Canonical, FormatByteQuantityTest,
    testing::Values(ByteCase{0, "0"}, ByteCase{1, "1"}, ByteCase{100, "100"}, ByteCase{120, "120"},
                    ByteCase{1000, "1k"}, ByteCase{1023, "1023"}, ByteCase{-1000, "-1k"},
                    ByteCase{-1023, "-1023"}, ByteCase{kKi, "1Ki"}, ByteCase{1025, "1025"},
                    ByteCase{1536, "1536"}, ByteCase{2048, "2Ki"}, ByteCase{3100, "3100"},
                    ByteCase{10 * kKi, "10Ki"}, ByteCase{1536 * kKi, "1536Ki"},
                    ByteCase{1000000, "1000000"}, ByteCase{kKi * kKi, "1Mi"},
                    ByteCase{128 * kKi * kKi, "128Mi"}, ByteCase{2 * kKi * kKi * kKi, "2Gi"},
                    ByteCase{3 * kKi * kKi * kKi, "3Gi"}, ByteCase{123456789, "123456789"},
                    ByteCase{kKi * kKi * kKi * kKi, "1Ti"}, ByteCase{std::int64_t{1} << 50, "1Pi"},
                    ByteCase{std::int64_t{7} << 60, "7Ei"},
                    ByteCase{9223372036854775807, "9223372036854775807"}, ByteCase{-2048, "-2Ki"},
                    ByteCase{std::numeric_limits<std::int64_t>::min(), "-9223372036854775808"}));

TEST(TruncateToInt64Test, TruncatesTowardZeroAndRefusesWhatDoesNotFit) {
  EXPECT_EQ(truncateToInt64(0), 0);
  EXPECT_EQ(truncateToInt64(1.9), 1);
  EXPECT_EQ(truncateToInt64(-1.9), -1);
  EXPECT_EQ(truncateToInt64(0.25 * 1e9), 250000000);
  EXPECT_EQ(truncateToInt64(9223372036854774784.0), 9223372036854774784);  // largest below 2^63
  EXPECT_EQ(truncateToInt64(-9223372036854775808.0), std::nullopt);
  EXPECT_EQ(truncateToInt64(9223372036854775808.0), std::nullopt);
  EXPECT_EQ(truncateToInt64(std::numeric_limits<double>::quiet_NaN()), std::nullopt);
  EXPECT_EQ(truncateToInt64(std::numeric_limits<double>::infinity()), std::nullopt);
  EXPECT_EQ(truncateToInt64(-std::numeric_limits<double>::infinity()), std::nullopt);
}

TEST(SampleToQuantityTest, LargestDoubleIsPrintedInFull) {
  const auto quantity = sampleToQuantity(std::numeric_limits<double>::max());
  ASSERT_TRUE(quantity.has_value());
  EXPECT_EQ(quantity->size(), 309U);  // 1.797...e308 has 309 integer digits
  EXPECT_EQ(quantity->substr(0, 17), "17976931348623157");
  EXPECT_EQ(sampleToQuantity(-std::numeric_limits<double>::max())->front(), '-');
}

struct ParseMilliQuantityCase {
  const char* text;
  std::optional<std::int64_t> milli;
};

class ParseMilliQuantityTest : public ::testing::TestWithParam<ParseMilliQuantityCase> {};

TEST_P(ParseMilliQuantityTest, ReadsAsMilliValueDoes) {
  EXPECT_EQ(parseMilliQuantity(GetParam().text), GetParam().milli) << GetParam().text;
}

// The HPA's targets as users write them; MilliValue() rounds up (1n -> 1m).
INSTANTIATE_TEST_SUITE_P(
    Targets, ParseMilliQuantityTest,
    ::testing::Values(
        ParseMilliQuantityCase{"40", 40000}, ParseMilliQuantityCase{"500m", 500},
        ParseMilliQuantityCase{"1.5k", 1500000}, ParseMilliQuantityCase{"2Ki", 2048000},
        ParseMilliQuantityCase{"1e3", 1000000}, ParseMilliQuantityCase{"1E-3", 1},
        ParseMilliQuantityCase{"1n", 1}, ParseMilliQuantityCase{"-250m", -250},
        ParseMilliQuantityCase{"0.1", 100}, ParseMilliQuantityCase{"1Ei", std::nullopt},
        ParseMilliQuantityCase{"", std::nullopt}, ParseMilliQuantityCase{"abc", std::nullopt},
        ParseMilliQuantityCase{"5x", std::nullopt}, ParseMilliQuantityCase{".", std::nullopt},
        // Decimal arithmetic, exact: floating point made 1E-3 two milli-units and -250m -249.
        ParseMilliQuantityCase{"0.29", 290}, ParseMilliQuantityCase{"1.001", 1001},
        ParseMilliQuantityCase{"1.5Ki", 1536000},
        ParseMilliQuantityCase{"9223372036854775807", std::nullopt}));

}  // namespace
}  // namespace metrics_adapter::promql
