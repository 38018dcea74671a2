#include "solver/strategies/max_flow.h"

#include <pthread.h>

#include "gtest/gtest.h"

namespace autoshard {
namespace {

// s -> a (3), s -> b (2), a -> b (1), a -> t (2), b -> t (3): the cut
// {s} | {a, b, t} carries 3 + 2 = 5, as does {s, a, b} | {t}: 2 + 3.
TEST(MaxFlowTest, FindsTheSmallestCut) {
  MaxFlow flow(4);  // s = 0, a = 1, b = 2, t = 3
  flow.AddArc(0, 1, 3);
  flow.AddArc(0, 2, 2);
  flow.AddArc(1, 2, 1);
  flow.AddArc(1, 3, 2);
  flow.AddArc(2, 3, 3);
  int64_t work = 0;
  EXPECT_EQ(flow.Solve(0, 3, 100, &work), 5);
  EXPECT_GT(work, 0);
  // Both of s's arcs are full (3 into a, 2 into b): the smallest source side
  // is {s}.
  EXPECT_TRUE(flow.SourceSide(0));
  EXPECT_FALSE(flow.SourceSide(1));
  EXPECT_FALSE(flow.SourceSide(2));
  EXPECT_FALSE(flow.SourceSide(3));
}

// s -> a (5), a -> b (2), b -> t (4): 2 flows, a -> b is the cut, and the
// source side is {s, a}.
TEST(MaxFlowTest, TellsTheSourceSide) {
  MaxFlow flow(4);  // s = 0, a = 1, b = 2, t = 3
  flow.AddArc(0, 1, 5);
  flow.AddArc(1, 2, 2);
  flow.AddArc(2, 3, 4);
  int64_t work = 0;
  EXPECT_EQ(flow.Solve(0, 3, 100, &work), 2);
  EXPECT_TRUE(flow.SourceSide(0));
  EXPECT_TRUE(flow.SourceSide(1));
  EXPECT_FALSE(flow.SourceSide(2));
  EXPECT_FALSE(flow.SourceSide(3));
}

// The limit stops the flow early: 5 can flow, 4 is asked, and the answer is
// at least the limit.
TEST(MaxFlowTest, StopsAtTheLimit) {
  MaxFlow flow(3);
  flow.AddArc(0, 1, 5);
  flow.AddArc(1, 2, 5);
  int64_t work = 0;
  EXPECT_GE(flow.Solve(0, 2, 4, &work), 4);
}

// A chain of 100,000 vertices (as the cut bound builds for a long model):
// every arc 7 but one of 3, so 3 flows. The augmenting path has 99,999
// arcs; a recursive search needs as many stack frames (at least 3.2 MB at
// 32 bytes a frame), so it runs on a thread of 256 KiB of stack, where
// such a search overflows (a fault fixed: Push recursed along the path).
TEST(MaxFlowTest, LongChainNeedsNoDeepStack) {
  struct Run {
    int64_t flow = -1;
    static void* Solve(void* arg) {
      constexpr int32_t kVertices = 100000;
      MaxFlow flow(kVertices);
      for (int32_t v = 0; v + 1 < kVertices; ++v)
        flow.AddArc(v, v + 1, v == 50000 ? 3 : 7);
      int64_t work = 0;
      static_cast<Run*>(arg)->flow = flow.Solve(0, kVertices - 1, 1000, &work);
      return nullptr;
    }
  } run;
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, &attr, &Run::Solve, &run), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  pthread_attr_destroy(&attr);
  EXPECT_EQ(run.flow, 3);
}

}  // namespace
}  // namespace autoshard
