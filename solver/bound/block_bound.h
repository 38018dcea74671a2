// The block DP's bound (solver/strategies/blocks/block_dp.h, Note [Block
// DP]) as a member of the certified bound's cascade (bound.h): on a graph
// that is a chain of repeated identical segments (a transformer's layers),
// the exact optimum of the ideal DP's relaxation over every monotone split
// (memory not counted), found per segment rather than over the whole
// lattice.
#ifndef AUTOSHARD_SOLVER_BOUND_BLOCK_BOUND_H_
#define AUTOSHARD_SOLVER_BOUND_BLOCK_BOUND_H_

#include "solver/bound/bound.h"

namespace autoshard {

// The cascade's "block DP" bound: within half the budget, from its own
// start; proves nothing (bound_s 0) on a graph without repetition.
const Bound& BlockDpBoundInstance();

}  // namespace autoshard

#endif  // AUTOSHARD_SOLVER_BOUND_BLOCK_BOUND_H_
