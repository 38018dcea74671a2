#include "pod/pod_options.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace autoshard::pod {
namespace {

using ::testing::ElementsAre;

TEST(PodOptionsTest, ParsesBatchSizes) {
  EXPECT_THAT(*ParseBatchSizes("auto"), ElementsAre(1, 2, 4, 8, 16, 32, 64));
  EXPECT_THAT(*ParseBatchSizes("8,1,8"), ElementsAre(1, 8));
  EXPECT_FALSE(ParseBatchSizes("0").ok());
  EXPECT_FALSE(ParseBatchSizes("1,,2").ok());
  EXPECT_FALSE(ParseBatchSizes("x").ok());
}

TEST(PodOptionsTest, ValidateNamesTheFlag) {
  PodOptions pod;
  pod.total_ipus = kMaxPodIpus + 1;  // 1025 > 1024
  EXPECT_EQ(pod.Validate().message(),
            "--total-ipus must be from 1 to 1024, got 1025");
  pod.total_ipus = 8;
  pod.batch_sizes = {4, 0};
  EXPECT_EQ(pod.Validate().message(), "--batch-size must be at least 1, got 0");
  pod.batch_sizes = {4};
  EXPECT_TRUE(pod.Validate().ok());
}

}  // namespace
}  // namespace autoshard::pod
