# Type hints for the autoshard package (python/autoshard/__init__.py and the
# extension autoshard._autoshard, python/module.cc). Units are in the names:
# _bytes, _s (seconds), _flops (2 per multiply-accumulate).
import os
from typing import (Any, Callable, Dict, List, Mapping, Optional, Sequence,
                    Tuple, Union)

__version__: str
DEVICES: Tuple[str, ...]

# A path (external data beside it), serialized bytes, or an onnx.ModelProto.
ModelLike = Any
_Path = Union[str, "os.PathLike[str]"]

class AutoshardWarning(UserWarning): ...

class Memory:
    """One IPU's memory under the tile-memory model, in bytes."""
    @property
    def weight_bytes(self) -> int: ...
    @property
    def code_bytes(self) -> int:
        """Code and vertex state."""
    @property
    def exchange_bytes(self) -> int:
        """Buffers of cut tensors received and sent."""
    @property
    def activation_bytes(self) -> int:
        """Live activations at the peak step."""
    @property
    def temporary_bytes(self) -> int:
        """MatMul/Conv temporaries then, capped by the memory proportion."""
    @property
    def total_bytes(self) -> int: ...
    @property
    def max_tile_bytes(self) -> int:
        """Bytes on the fullest tile."""
    @property
    def max_tile(self) -> int:
        """Its global index: IPU x tiles per IPU + tile."""
    @property
    def fits(self) -> bool:
        """max_tile_bytes <= the device's bytes per tile."""
    def to_dict(self) -> Dict[str, Any]: ...

class Ipu:
    """What a plan puts on one IPU and what it costs there."""
    @property
    def ipu(self) -> int: ...
    @property
    def num_nodes(self) -> int: ...
    @property
    def weight_bytes(self) -> int:
        """Distinct weights its nodes read."""
    @property
    def activation_bytes(self) -> int:
        """The sum of its nodes' output tensors."""
    @property
    def flops(self) -> float: ...
    @property
    def cut_tensor_in_bytes(self) -> int: ...
    @property
    def cut_tensor_out_bytes(self) -> int: ...
    @property
    def memory(self) -> Memory: ...
    @property
    def fits(self) -> bool:
        """memory.fits"""
    @property
    def max_tile_bytes(self) -> int:
        """memory.max_tile_bytes"""
    @property
    def stage_time_s(self) -> float:
        """The performance model's time of its pipeline stage."""
    def to_dict(self) -> Dict[str, Any]: ...

class Plan:
    """A split and its estimated costs (proto/plan.proto)."""
    @property
    def model(self) -> str:
        """The model's path as given ("" for bytes and ModelProto)."""
    @property
    def strategy(self) -> str:
        """raw, search, optimal, auto, or apply (a given split)."""
    @property
    def num_ipus(self) -> int: ...
    @property
    def num_ipus_tried(self) -> List[int]:
        """num_ipus="auto": the counts tried, in order."""
    @property
    def batch_size(self) -> int: ...
    @property
    def precision(self) -> str: ...
    @property
    def device(self) -> str: ...
    @property
    def available_memory_proportion(self) -> float: ...
    @property
    def fits(self) -> bool:
        """Every IPU fits the tile-memory model."""
    @property
    def out_of_memory(self) -> str:
        """The compiler-style message for the first IPU that overflows."""
    @property
    def ipus(self) -> List[Ipu]: ...
    @property
    def bottleneck_s(self) -> float:
        """The slowest stage's time."""
    @property
    def throughput_per_s(self) -> float:
        """Samples per second: batch_size / bottleneck_s."""
    @property
    def latency_s(self) -> float: ...
    @property
    def lower_bound_s(self) -> float:
        """No split of the model has a smaller bottleneck."""
    @property
    def gap_percent(self) -> float:
        """(bottleneck_s / lower_bound_s - 1) x 100."""
    @property
    def num_nodes(self) -> int: ...
    @property
    def total_flops(self) -> float: ...
    @property
    def total_weight_bytes(self) -> int: ...
    @property
    def nodes_named(self) -> int:
        """Nodes with empty or repeated names that autoshard named."""
    @property
    def ops_without_rule(self) -> List[str]: ...
    @property
    def planning_s(self) -> float: ...
    @property
    def warnings(self) -> List[str]:
        """What the CLI prints as warnings (unknown ops, symbolic dims, the
        data-dependent dims assumed...)."""
    @property
    def placement(self) -> Dict[str, Tuple[int, int]]:
        """Node name (after autoshard's naming) -> (ipu, pipeline_stage)."""
    @property
    def sharding_points(self) -> List[Tuple[str, int, int]]:
        """PopRT's (node, ipu, stage) points that reproduce the plan."""
    def to_json(self) -> str:
        """The plan file (`shard --plan`), protobuf's JSON mapping."""
    def sharding_config(self) -> str:
        """The PopRT sharding config (`shard --sharding-config`), YAML."""
    def report(self) -> str:
        """The text report `autoshard shard` prints."""
    def to_dict(self) -> Dict[str, Any]: ...

class InspectReport:
    """A model's costs without a split (proto/inspect.proto)."""
    @property
    def model(self) -> str: ...
    @property
    def num_nodes(self) -> int: ...
    @property
    def total_flops(self) -> float: ...
    @property
    def total_macs(self) -> float: ...
    @property
    def total_weight_bytes(self) -> int: ...
    @property
    def parameters(self) -> int: ...
    @property
    def min_ipus(self) -> int:
        """Fewest IPUs (a power of two up to 64) whose raw split fits; 0 if
        none."""
    @property
    def single_ipu_memory(self) -> Memory: ...
    @property
    def warnings(self) -> List[str]: ...
    @property
    def shape_assumptions(self) -> List[Dict[str, Any]]:
        """Data-dependent dims set to the bound the graph implies: node,
        op_type, tensor, dim, value, reason."""
    def to_json(self) -> str:
        """What `autoshard inspect --json` prints."""
    def text(self) -> str:
        """What `autoshard inspect` prints."""
    def to_dict(self) -> Dict[str, Any]: ...

def plan(model: ModelLike,
         num_ipus: Union[int, str] = 4,
         *,
         strategy: str = "auto",
         batch_size: Optional[int] = None,
         dims: Optional[Mapping[str, int]] = None,
         input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
         precision: str = "fp32",
         device: _Path = "ipu2",
         available_memory_proportion: Optional[float] = None,
         strict_names: bool = False,
         max_ipus: int = 64,
         optimal_perf: bool = False,
         max_candidates: int = 100000,
         max_search_seconds: float = 60.0,
         compile_cmd: Optional[str] = None,
         jobs: int = 1,
         progress: Optional[Callable[[int, Optional[int]], Any]] = None
         ) -> Plan: ...
def evaluate(model: ModelLike,
             sharding_points: Union[Plan, str, "os.PathLike[str]",
                                    Sequence[Union[Tuple[str, int],
                                                   Tuple[str, int, int],
                                                   Mapping[str, Any]]]],
             *,
             batch_size: Optional[int] = None,
             dims: Optional[Mapping[str, int]] = None,
             input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
             precision: str = "fp32",
             device: _Path = "ipu2",
             available_memory_proportion: Optional[float] = None,
             strict_names: bool = False) -> Plan: ...
def apply(model: ModelLike, plan: Plan) -> Any:
    """bytes, or a ModelProto of the class given."""
def split(annotated_model: ModelLike, out_dir: _Path) -> Dict[str, Any]: ...
def inspect(model: ModelLike,
            *,
            batch_size: Optional[int] = None,
            dims: Optional[Mapping[str, int]] = None,
            input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
            precision: str = "fp32",
            device: _Path = "ipu2",
            available_memory_proportion: Optional[float] = None,
            strict_names: bool = False) -> InspectReport: ...
