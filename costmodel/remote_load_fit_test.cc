// Fitting the Streaming Memory bandwidth to measured remote loads
// (Note [Remote-load facts], costmodel/remote_load_fit.h).
#include "costmodel/remote_load_fit.h"

#include <limits>
#include <string>
#include <vector>

#include "costmodel/device_profile.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace autoshard {
namespace {

TEST(RemoteLoadFitTest, LeastSquaresOfOneOverBandwidth) {
  // 1e9 B in 0.05 s and 2e9 B in 0.1 s: both 20 GB/s.
  EXPECT_NEAR(
      *FitStreamingBandwidth({{1000000000, 0.05, "a"}, {2000000000, 0.1, "b"}}),
      20e9, 1e-3);
  // 1e9 B in 0.04 s, 2e9 B in 0.1 s: Σ B² = 1e18 + 4e18 = 5e18,
  // Σ B S = 0.04e9 + 0.2e9 = 0.24e9: 5e18 / 0.24e9 = 20.8333 GB/s (between
  // the two loads' own 25 and 20 GB/s, nearer the larger load's).
  EXPECT_NEAR(
      *FitStreamingBandwidth({{1000000000, 0.04, "a"}, {2000000000, 0.1, "b"}}),
      5e18 / 0.24e9, 1e-3);
  EXPECT_FALSE(FitStreamingBandwidth({}).ok());
  EXPECT_FALSE(FitStreamingBandwidth({{0, 0.1, "zero"}}).ok());
}

TEST(RemoteLoadFitTest, ParsesTheFlag) {
  const absl::StatusOr<RemoteLoadFact> f = ParseRemoteLoad("268435456,0.01");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->bytes, 268435456);
  EXPECT_DOUBLE_EQ(f->seconds, 0.01);
  for (const char* bad : {"", "1e9", "1e9,0", "-5,0.1", "1e9,x", "1,2,3"}) {
    const absl::StatusOr<RemoteLoadFact> b = ParseRemoteLoad(bad);
    EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(b.status().message().find("BYTES,SECONDS"), std::string::npos);
  }
}

TEST(RemoteLoadFitTest, FactsOfKindRemoteLoad) {
  proto::CalibrationFacts facts;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(facts {
             id: "load_1gb"
             kind: "remote_load"
             device: "ipu2"
             figure: 0.08
             memory { category: "loaded" bytes: 1000000000 }
           }
           facts {
             id: "bow"
             kind: "remote_load"
             device: "ipu21"
             figure: 0.01
             memory { category: "loaded" bytes: 1000000000 }
           }
           facts { id: "t" kind: "throughput" figure: 100 })pb",
      &facts));
  const auto ipu2 = RemoteLoadFactsOf(facts, "ipu2");
  ASSERT_TRUE(ipu2.ok()) << ipu2.status();
  ASSERT_EQ(ipu2->size(), 1u);
  EXPECT_EQ((*ipu2)[0].bytes, 1000000000);
  // 1e9 B in 0.08 s: 12.5 GB/s, into the profile.
  proto::DeviceProfile p = *LoadDeviceProfile("ipu2");
  ASSERT_TRUE(CalibrateStreamingBandwidth(*ipu2, &p).ok());
  EXPECT_NEAR(p.streaming_memory_bytes_per_s(), 12.5e9, 1e-3);
  EXPECT_NE(p.calibration().status().find(
                "Streaming Memory 12.5 GB/s per IPU fitted to 1 remote load"),
            std::string::npos);
  EXPECT_EQ(p.streaming_memory_source().find("bandwidth 12.5 GB/s per IPU "
                                             "fitted by autoshard calibrate"),
            0u);
  // A fact without its bytes is refused, naming it.
  facts.mutable_facts(0)->clear_memory();
  const auto bad = RemoteLoadFactsOf(facts, "ipu2");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("fact 'load_1gb'"), std::string::npos);
  // An infinite figure (it fitted 0 B/s, which turned Streaming Memory off)
  // and two "loaded" figures in one fact are refused too.
  facts.mutable_facts(0)->add_memory()->set_category("loaded");
  facts.mutable_facts(0)->mutable_memory(0)->set_bytes(1000000000);
  facts.mutable_facts(0)->set_figure(std::numeric_limits<double>::infinity());
  EXPECT_FALSE(RemoteLoadFactsOf(facts, "ipu2").ok());
  facts.mutable_facts(0)->set_figure(0.08);
  ASSERT_TRUE(RemoteLoadFactsOf(facts, "ipu2").ok());
  *facts.mutable_facts(0)->add_memory() = facts.facts(0).memory(0);
  EXPECT_FALSE(RemoteLoadFactsOf(facts, "ipu2").ok());
  // A profile without Streaming Memory has nothing to fit.
  proto::DeviceProfile c600 = *LoadDeviceProfile("c600");
  EXPECT_FALSE(CalibrateStreamingBandwidth(*ipu2, &c600).ok());
}

}  // namespace
}  // namespace autoshard
