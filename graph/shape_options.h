// Input-shape options of a model (--input-shape, --batch-size). A public
// header: sharder/autoshard.h includes it and `cmake --install` installs it,
// so it includes nothing of the project's.
#ifndef AUTOSHARD_GRAPH_SHAPE_OPTIONS_H_
#define AUTOSHARD_GRAPH_SHAPE_OPTIONS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace autoshard {

// Options that fix symbolic dims before inference.
struct ShapeOptions {
  // Graph input name -> full shape. Every listed input must exist and the
  // rank must match the model's, else InvalidArgument.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // When > 0, the first dim of every graph input whose first dim is symbolic
  // or unknown is set to this value.
  int64_t batch_size = 0;
  // Symbolic dim name (dim_param) -> value, for every graph-input dim of
  // that name (--dim seq_len=128); wins over batch_size for those dims. A
  // name no graph input has is InvalidArgument. Values are >= 1.
  std::map<std::string, int64_t> dims;
};

}  // namespace autoshard

#endif  // AUTOSHARD_GRAPH_SHAPE_OPTIONS_H_
