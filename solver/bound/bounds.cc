// The Bound adapters of the certified bound's cascade (bound.h): each runs
// one method with its share of the budget and says what it proved.
#include <algorithm>
#include <chrono>
#include <optional>

#include "absl/strings/str_cat.h"
#include "base/deadline.h"
#include "solver/bound/block_bound.h"
#include "solver/bound/bound.h"
#include "solver/bound/certify.h"
#include "solver/bound/cut_bound.h"
#include "solver/bound/filler_bound.h"
#include "solver/bound/heavy_bound.h"
#include "solver/bound/lp_bound.h"
#include "solver/strategies/constraints.h"
#include "solver/strategies/ideal_dp.h"

namespace autoshard {
namespace {

// Note [Cut bound]: a work budget, and a clock only for Note
// [Chain-directed window cuts]. Note [Late branches] runs later, after the
// heavy-node bound (LateBranchesBound).
class MinCutBound : public Bound {
 public:
  absl::string_view name() const override { return "min-cut"; }
  BoundValue Run(const BoundProblem& p,
                 const BoundBudget& budget) const override {
    CutBoundOptions options;
    options.late_share = 0;
    // Note [Chain-directed window cuts]: the one clocked part, by
    // kBranchedCutShare of the budget.
    options.branched_sides = 16;
    options.branched_deadline = budget.Until(kBranchedCutShare);
    const CutBoundResult r = CutBound(*p.problem, *p.model, p.num_ipus,
                                      p.plan_bottleneck_s, options);
    BoundValue v;
    if (r.improved) v.bound_s = r.bound_s;
    v.method = r.branched ? "min-cut, branched windows" : "min-cut";
    v.stop = r.out_of_work ? BoundStop::kOutOfBudget : BoundStop::kDone;
    return v;
  }
};

// Note [Late branches]: the min-cut bound without the late branches, its
// costly pass only when its first beats the bounds before it.
class LateBranchesBound : public Bound {
 public:
  absl::string_view name() const override {
    return "min-cut without late branches";
  }
  BoundValue Run(const BoundProblem& p, const BoundBudget&) const override {
    CutBoundOptions options;
    options.late_only = true;
    options.known_s = p.lower_s;
    const CutBoundResult r = CutBound(*p.problem, *p.model, p.num_ipus,
                                      p.plan_bottleneck_s, options);
    BoundValue v;
    if (r.improved) v.bound_s = r.bound_s;
    v.method = "min-cut without late branches";
    v.stop = r.out_of_work ? BoundStop::kOutOfBudget : BoundStop::kDone;
    return v;
  }
};

// Note [Heavy-node bound]: deterministic, a work budget and no clock.
class HeavyBound : public Bound {
 public:
  absl::string_view name() const override { return "heavy node"; }
  BoundValue Run(const BoundProblem& p, const BoundBudget&) const override {
    HeavyBoundOptions options;
    // Within kCertifiedEnoughPercent of the plan the cascade stops anyway.
    options.enough_s =
        p.plan_bottleneck_s / (1 + kCertifiedEnoughPercent / 100);
    const HeavyBoundResult r =
        HeavyNodeBound(*p.problem, *p.model, p.num_ipus, p.lower_s, options);
    BoundValue v;
    if (r.node >= 0) {
      v.bound_s = r.bound_s;
      v.method = "heavy node";
    }
    v.stop = r.out_of_work ? BoundStop::kOutOfBudget : BoundStop::kDone;
    return v;
  }
};

// The ideal DP's relaxation for half the budget, until kIdealDpShare of it at
// the latest, exact when
// it completes; when the graph has too many ideals, the same DP on a
// problem with fillers (Note [Filler bound]) by the same deadline.
class IdealDpLowerBound : public Bound {
 public:
  absl::string_view name() const override { return "ideal DP"; }
  BoundValue Run(const BoundProblem& p,
                 const BoundBudget& budget) const override {
    IdealDpOptions ideal;
    ideal.max_ideals = 20000;  // no fit evaluations here: a larger lattice
    // Half the budget from its own start, and no later than 80% of it (the
    // block DP before it stops at 40%, block_bound.h): when the block DP
    // did not run, CBC keeps the half it had before the block DP existed.
    ideal.deadline = std::min(
        budget.Until(kIdealDpShare),
        SecondsAfter(std::chrono::steady_clock::now(), budget.max_seconds / 2));
    const IdealDpResult dp = IdealDpBound(*p.problem, *p.model, p.num_ipus,
                                          p.plan_bottleneck_s, ideal);
    BoundValue v;
    v.note = absl::StrCat("ideal DP: ", dp.ideals, dp.ran ? "" : "+", " ideals",
                          dp.ran && !dp.complete ? ", out of time" : "");
    if (dp.complete && dp.found) {
      v.bound_s = dp.bottleneck_s;
      v.method = "ideal DP";
      v.stop = BoundStop::kExact;
      return v;
    }
    v.stop = dp.complete ? BoundStop::kDone : BoundStop::kOutOfBudget;
    if (dp.ran) return v;
    // Colocation groups merged (strategies/constraints.h): the same plans,
    // so the DP there bounds them, from fewer ideals. Its node times are
    // the nodes' (no FLOPs are costed: any precision).
    if (const std::optional<Coarsened> merged =
            ContractGroups(*p.problem, *p.model, p.num_ipus)) {
      const DeviceModel merged_model(merged->problem, p.model->profile(),
                                     Precision::kFp32);
      const IdealDpResult g =
          IdealDpBound(merged->problem, merged_model, p.num_ipus,
                       p.plan_bottleneck_s, ideal);
      if (g.complete && g.found) {
        v.bound_s = g.bottleneck_s;
        v.method = "ideal DP, colocate groups merged";
        v.stop = BoundStop::kExact;
        return v;
      }
    }
    // The block DP completed over every ideal: the filler bound relaxes
    // that same relaxation further (IPUs may be empty there too, and it
    // drops tensors and pools compute), so it cannot prove more (beyond
    // the block DP's 1e-4 bisection precision). The ideal DP above still
    // runs: it wants every IPU to hold a node, which may prove more.
    if (p.at_most_k_relaxation_solved) {
      v.note += ", fillers not run (the block DP solved their relaxation)";
      return v;
    }
    FillerBoundOptions filler;
    filler.deadline = ideal.deadline;
    const FillerBoundResult fr =
        FillerBound(*p.problem, *p.model, p.num_ipus, p.lower_s,
                    p.plan_bottleneck_s, filler);
    if (fr.ran) {
      v.bound_s = fr.bound_s;
      v.method = "ideal DP with fillers";
      v.stop = BoundStop::kDone;
    }
    return v;
  }
};

// Note [MIP bound] with what is left of the budget (at least 0.1 s).
class CbcMipBound : public Bound {
 public:
  absl::string_view name() const override { return "CBC MIP"; }
  BoundValue Run(const BoundProblem& p,
                 const BoundBudget& budget) const override {
    MipBoundOptions mip;
    mip.max_seconds = std::max(0.1, budget.max_seconds - budget.Spent());
    mip.memory = p.plan_fits;
    mip.lower_s = p.lower_s;
    const MipBoundResult r =
        MipBound(*p.problem, *p.model, p.num_ipus, *p.plan_ipu, mip);
    BoundValue v;
    v.stop = r.stopped_by_clock ? BoundStop::kOutOfBudget : BoundStop::kDone;
    v.note = absl::StrCat(
        "CBC: ", r.solved
                     ? absl::StrCat("no better in ", r.nodes, " nodes, ",
                                    r.columns, " columns",
                                    r.stopped_by_clock ? ", stopped by the "
                                                         "clock"
                                                       : "")
                     : r.note);
    if (!r.solved) return v;
    v.bound_s = r.bound_s;
    v.method = r.proven_optimal ? "CBC MIP, optimal" : "CBC MIP";
    if (r.stopped_by_clock) v.method += ", stopped by the clock";
    return v;
  }
};

}  // namespace

const std::vector<const Bound*>& CertifyBounds() {
  static const MinCutBound* const cut = new MinCutBound;
  static const HeavyBound* const heavy = new HeavyBound;
  static const LateBranchesBound* const late = new LateBranchesBound;
  static const IdealDpLowerBound* const ideal = new IdealDpLowerBound;
  static const CbcMipBound* const mip = new CbcMipBound;
  static const std::vector<const Bound*>* const bounds =
      new std::vector<const Bound*>{heavy, cut, late, &BlockDpBoundInstance(),
                                    ideal, mip};
  return *bounds;
}

}  // namespace autoshard
