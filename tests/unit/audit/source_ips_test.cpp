#include "audit/source_ips.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace metrics_adapter::audit {
namespace {

using Ips = std::vector<std::string>;

// Cases from upstream's utilnet.SourceIPs and net.IP.String(): order, trimming, dropping,
// and the two places duplicates are removed.
TEST(SourceIpsTest, ListsForwardedForThenRealIpThenTheConnection) {
  struct Case {
    std::string name;
    std::string forwarded_for;
    std::string real_ip;
    std::string remote;
    Ips expected;
  };
  for (const Case& c : std::vector<Case>{
           {"the connection alone", "", "", "10.1.2.3:51234", {"10.1.2.3"}},
           {"the aggregator's client first",
            "192.168.0.7",
            "",
            "10.0.0.1:443",
            {"192.168.0.7", "10.0.0.1"}},
           {"a chain, trimmed, in order",
            " 1.1.1.1 ,2.2.2.2,\t3.3.3.3 ",
            "",
            "10.0.0.1:1",
            {"1.1.1.1", "2.2.2.2", "3.3.3.3", "10.0.0.1"}},
           {"duplicates in the chain are kept",
            "1.1.1.1,1.1.1.1",
            "",
            "10.0.0.1:1",
            {"1.1.1.1", "1.1.1.1", "10.0.0.1"}},
           {"invalid entries dropped",
            "junk,1.1.1.1,,1.1.1.1.1,300.1.1.1,1.1.1.1:80",
            "bad",
            "10.0.0.1:1",
            {"1.1.1.1", "10.0.0.1"}},
           {"real ip after the chain",
            "1.1.1.1",
            "2.2.2.2",
            "10.0.0.1:1",
            {"1.1.1.1", "2.2.2.2", "10.0.0.1"}},
           {"real ip already in the chain",
            "1.1.1.1,2.2.2.2",
            "1.1.1.1",
            "10.0.0.1:1",
            {"1.1.1.1", "2.2.2.2", "10.0.0.1"}},
           {"real ip in the chain in another spelling",
            "::ffff:1.1.1.1",
            "001.1.1.1",
            "10.0.0.1:1",
            {"1.1.1.1", "10.0.0.1"}},
           {"real ip alone", "", "2.2.2.2", "10.0.0.1:1", {"2.2.2.2", "10.0.0.1"}},
           {"the connection last in the chain is not repeated",
            "1.1.1.1,10.0.0.1",
            "",
            "10.0.0.1:1",
            {"1.1.1.1", "10.0.0.1"}},
           {"the connection equal to the real ip is not repeated",
            "",
            "10.0.0.1",
            "10.0.0.1:1",
            {"10.0.0.1"}},
           {"the connection earlier in the chain is repeated",
            "10.0.0.1,1.1.1.1",
            "",
            "10.0.0.1:1",
            {"10.0.0.1", "1.1.1.1", "10.0.0.1"}},
           {"IPv6 connection", "", "", "[::1]:443", {"::1"}},
           {"IPv4-mapped connection", "", "", "[::ffff:127.0.0.1]:443", {"127.0.0.1"}},
           {"unknown connection", "1.1.1.1", "", "unknown", {"1.1.1.1"}},
           {"nothing known", "", "", "", {}},
       }) {
    Ips out = {"left over"};
    sourceIps(c.forwarded_for, c.real_ip, c.remote, out);
    EXPECT_EQ(out, c.expected) << c.name;
  }
}

TEST(SourceIpsTest, AddressesAreWrittenAsGoWritesThem) {
  struct Case {
    std::string text;
    std::string canonical;  // "" when not an address
  };
  for (const Case& c : std::vector<Case>{
           {"10.0.0.1", "10.0.0.1"},
           {"010.000.000.001", "10.0.0.1"},  // ParseIPSloppy: leading zeros are decimal
           {"255.255.255.255", "255.255.255.255"},
           {"256.0.0.1", ""},
           {"1.2.3", ""},
           {"1.2.3.4.", ""},
           {" 1.2.3.4", ""},  // only the chain's entries are trimmed
           {"::1", "::1"},
           {"2001:DB8:0:0:0:0:0:1", "2001:db8::1"},
           {"2001:db8:0:1:0:0:0:1", "2001:db8:0:1::1"},       // the longest zero run
           {"2001:0:0:1:0:0:1:1", "2001::1:0:0:1:1"},         // the first of equal runs
           {"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"},  // one zero group stays
           {"0:0:0:0:0:0:0:0", "::"},
           {"1::", "1::"},
           {"::ffff:192.168.0.1", "192.168.0.1"},
           {"::192.168.0.1", "::c0a8:1"},
           {"fe80::1%eth0", ""},
           {"[::1]", ""},
           {"localhost", ""},
           {"", ""},
       }) {
    std::string out;
    const bool parsed = appendCanonicalIp(c.text, out);
    EXPECT_EQ(parsed, !c.canonical.empty()) << c.text;
    EXPECT_EQ(out, c.canonical) << c.text;
  }
}

TEST(SourceIpTest, StripsThePort) {
  EXPECT_EQ(sourceIp("10.0.0.1:5443"), "10.0.0.1");
  EXPECT_EQ(sourceIp("[::1]:443"), "::1");
  EXPECT_EQ(sourceIp("fd00::1"), "fd00::1");
  EXPECT_EQ(sourceIp("unknown"), "");
  EXPECT_EQ(sourceIp(""), "");
}

}  // namespace
}  // namespace metrics_adapter::audit
