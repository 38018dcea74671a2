#include "solver/bound/block_bound.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "base/plural.h"
#include "solver/strategies/blocks/block_dp.h"

namespace autoshard {
namespace {

class BlockDpBound : public Bound {
 public:
  absl::string_view name() const override { return "block DP"; }
  BoundValue Run(const BoundProblem& p,
                 const BoundBudget& budget) const override {
    BlockDpOptions options;
    // Until 40% of the cascade's budget (the ideal DP then has until 80%,
    // CBC the rest).
    options.deadline = budget.Until(kBlockDpShare);
    const BlockDpResult r = BlockDp(*p.problem, *p.model, p.num_ipus, p.lower_s,
                                    p.plan_bottleneck_s, options);
    BoundValue v;
    // Never a segment chain (options.segmented is off): only an exact
    // chain's value is a bound.
    if (!r.ran || !r.exact) {
      v.note = r.note;
      return v;
    }
    v.note = absl::StrCat("block DP: ", Plural(r.segments, "segment"), ", ",
                          r.longest_run, " repeated, ",
                          Plural(r.positions, "position"),
                          r.complete ? "" : ", out of time");
    if (r.bound_s > p.lower_s) {
      v.bound_s = r.bound_s;
      v.method =
          absl::StrCat("block DP (", r.longest_run, " repeated segments)");
    }
    v.stop = r.complete ? BoundStop::kDone : BoundStop::kOutOfBudget;
    v.solved_at_most_k_relaxation = r.complete;
    return v;
  }
};

}  // namespace

const Bound& BlockDpBoundInstance() {
  static const BlockDpBound* const bound = new BlockDpBound;
  return *bound;
}

}  // namespace autoshard
