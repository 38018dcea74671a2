# Type hints for the extension autoshard._autoshard (python/module.cc and
# python/py_classes.cc). The classes' attributes are read-only; their
# meanings are in help(autoshard.Plan) and the like. Units are in the
# names: _bytes, _s (seconds), flops (2 per multiply-accumulate). The
# functions are autoshard.plan & co.'s back ends (python/autoshard/
# __init__.py, typed there): a model is (data, is_path), a path's bytes or
# the serialized model.
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

__version__: str

class Memory:
    weight_bytes: int
    code_bytes: int
    exchange_bytes: int
    activation_bytes: int
    temporary_bytes: int
    total_bytes: int
    max_tile_bytes: int
    max_tile: int
    fits: bool
    def to_dict(self) -> Dict[str, Any]: ...

class Ipu:
    ipu: int
    num_nodes: int
    weight_bytes: int
    activation_bytes: int
    flops: float
    cut_tensor_in_bytes: int
    cut_tensor_out_bytes: int
    memory: Memory
    stage_time_s: float
    fits: bool
    max_tile_bytes: int
    def to_dict(self) -> Dict[str, Any]: ...

class Plan:
    model: str
    strategy: str
    num_ipus: int
    num_ipus_tried: List[int]
    batch_size: int
    precision: str
    device: str
    available_memory_proportion: float
    fits: bool
    out_of_memory: str
    ipus: List[Ipu]
    bottleneck_s: float
    throughput_per_s: float
    latency_s: float
    lower_bound_s: float
    gap_percent: float
    num_nodes: int
    total_flops: float
    total_weight_bytes: int
    nodes_named: int
    ops_without_rule: List[str]
    planning_s: float
    assumptions: List[Dict[str, Any]]
    warnings: List[str]
    placement: Dict[str, Tuple[int, int]]
    sharding_points: List[Tuple[str, int, int]]
    def to_json(self) -> str: ...
    def sharding_config(self) -> str: ...
    def report(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...

class InspectReport:
    model: str
    num_nodes: int
    total_flops: float
    total_macs: float
    total_weight_bytes: int
    parameters: int
    min_ipus: int
    single_ipu_memory: Memory
    warnings: List[str]
    shape_assumptions: List[Dict[str, Any]]
    def to_json(self) -> str: ...
    def text(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...

_Relay = Optional[Callable[[str, int, int, Optional[int]], Any]]

def plan(data: bytes, is_path: bool, options: Dict[str, Any],
         progress: _Relay) -> Plan: ...
def evaluate(data: bytes, is_path: bool,
             points: Sequence[Tuple[str, int, int]],
             config_yaml: Optional[str], config_what: str,
             options: Dict[str, Any]) -> Plan: ...
def apply(data: bytes, is_path: bool, plan: Plan) -> bytes: ...
def inspect(data: bytes, is_path: bool, options: Dict[str, Any],
            progress: _Relay) -> InspectReport: ...
def split(path: bytes, out_dir: bytes,
          manifest_model: bytes) -> Tuple[Dict[str, Any], List[str]]: ...
def builtin_devices() -> List[str]: ...
def strategy_names() -> List[str]: ...
