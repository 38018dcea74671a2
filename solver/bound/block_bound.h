// The block DP's bound (solver/strategies/blocks/block_dp.h, Note [Block
// DP]) as a member of the certified bound's cascade (bound.h): on a graph
// that is a chain of repeated identical segments (a transformer's layers),
// the optimum (to 1e-4) of a relaxation over every monotone split (memory
// not counted, at most num_ipus stages), found per segment rather than over
// the whole lattice.
#ifndef AUTOSHARD_SOLVER_BOUND_BLOCK_BOUND_H_
#define AUTOSHARD_SOLVER_BOUND_BLOCK_BOUND_H_

#include "solver/bound/bound.h"

namespace autoshard {

// The cascade's "block DP" bound: until kBlockDpShare of the cascade's
// budget from its start (bound.h); proves nothing (bound_s 0) on a graph
// without repetition. Completed, it sets solved_at_most_k_relaxation.
const Bound& BlockDpBoundInstance();

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_BOUND_BLOCK_BOUND_H_
