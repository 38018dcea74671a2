"""autoshard: split ONNX models across Graphcore IPUs, from Python.

The same library as the ``autoshard`` command (README.md): ``plan`` splits a
model, ``apply`` annotates it with ``__ipu_number`` and ``__pipeline_stage``,
``evaluate`` costs a given split, ``split`` writes one model per pipeline
stage, ``inspect`` costs a model without splitting it.

A model is a path (``str`` or ``os.PathLike``; external data is read beside
it), ``bytes``, or an ``onnx.ModelProto`` (serialized to bytes: the module
never touches the caller's protobuf). Errors raise ``ValueError`` for a bad
model, option or sharding config (the CLI's messages; ``plan`` names its
keywords, ``max_ipus``, where the CLI names its flags), ``FileNotFoundError`` for a missing
file, ``PermissionError``, ``TypeError`` for an argument of the wrong type,
and ``RuntimeError`` for an internal error. A plan that does not fit is
returned with ``fits == False``, not raised. Planning releases the GIL, so
threads plan at once.
"""

import functools
import os
import re
import tempfile
import warnings
from inspect import signature as _signature
from typing import (Any, Callable, Mapping, NamedTuple, Optional, Sequence,
                    Tuple, Union)

from . import _autoshard
from ._autoshard import InspectReport, Ipu, Memory, Plan

__version__ = _autoshard.__version__
__all__ = [
    "AutoshardWarning", "DEVICES", "InspectReport", "Ipu", "Memory",
    "OPTION_DEFAULTS", "Plan", "Progress",
    "apply", "evaluate", "inspect", "plan", "split",
]

#: The built-in device profiles (DESIGN.md 3.2); ``device=`` also takes a
#: DeviceProfile text-proto file.
DEVICES = tuple(_autoshard.builtin_devices())


class AutoshardWarning(UserWarning):
    """A warning of ``split`` (what ``autoshard split`` prints on stderr)."""


def _check(name: str, value: Any, types: Tuple[type, ...], what: str) -> None:
    if isinstance(value, bool) and bool not in types:
        raise TypeError(f"{name} must be {what}, not bool")
    if not isinstance(value, types):
        raise TypeError(f"{name} must be {what}, not {type(value).__name__}")


def _source(model: Any, name: str = "model") -> Tuple[bytes, bool]:
    """(data, is_path): a path's bytes, or the serialized model."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), False
    if isinstance(model, (str, os.PathLike)):
        return os.fsencode(os.fspath(model)), True
    serialize = getattr(model, "SerializeToString", None)
    if callable(serialize):
        return serialize(), False
    raise TypeError(f"{name} must be a path, bytes or an onnx.ModelProto, "
                    f"not {type(model).__name__}")


def _model_options(*,
                   batch_size: Optional[int] = None,
                   dims: Optional[Mapping[str, int]] = None,
                   input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
                   precision: str = "fp32",
                   device: Union[str, "os.PathLike[str]"] = "ipu2",
                   available_memory_proportion: Optional[float] = None,
                   strict_names: bool = False,
                   strict: bool = False,
                   weights: str = "constant",
                   weights_location: str = "on-chip",
                   retrieval_mode: str = "one_per_group") -> dict:
    """The options every call takes (plan, evaluate and inspect: the
    keywords of this signature), checked as the CLI checks its flags; the
    library checks the ranges of the rest (Options::Validate)."""
    if batch_size is not None:
        _check("batch_size", batch_size, (int,), "an int")
        if batch_size < 1:
            raise ValueError(
                f"--batch-size must be at least 1, got {batch_size}")
    shapes = {}
    for name, shape in (input_shapes or {}).items():
        _check("input_shapes' keys", name, (str,), "str")
        spec = f"{name}:{','.join(str(d) for d in shape)}"
        if not name or not shape:
            raise ValueError(f"--input-shape '{spec}': expected NAME:D1,D2,..."
                             " (e.g. input:1,3,224,224)")
        for d in shape:
            if isinstance(d, bool) or not isinstance(d, int) or not (
                    1 <= d <= 2**31 - 1):
                raise ValueError(f"--input-shape '{spec}': '{d}' is not an "
                                 "integer from 1 to 2^31-1")
        shapes[name] = list(shape)
    for name, value in (dims or {}).items():
        _check("dims' keys", name, (str,), "str")
        _check(f"dims['{name}']", value, (int,), "an int")
    _check("precision", precision, (str,), "'fp32' or 'fp16'")
    if precision not in ("fp32", "fp16"):
        raise ValueError(f"--precision: {precision} not in {{fp32,fp16}}")
    _check("device", device, (str, os.PathLike), "a name or a path")
    _check("weights", weights, (str,), "'constant' or 'variable'")
    if weights not in ("constant", "variable"):
        raise ValueError(f"--weights: {weights} not in {{constant,variable}}")
    _check("weights_location", weights_location, (str,),
           "'auto', 'on-chip' or 'remote'")
    if weights_location not in ("auto", "on-chip", "remote"):
        raise ValueError(f"--weights-location: {weights_location} not in "
                         "{auto,on-chip,remote}")
    _check("retrieval_mode", retrieval_mode, (str,),
           "'one_per_group' or 'all_replicas'")
    if retrieval_mode not in ("one_per_group", "all_replicas"):
        raise ValueError(f"--retrieval-mode: {retrieval_mode} not in "
                         "{one_per_group,all_replicas}")
    amp = available_memory_proportion
    if amp is not None:
        _check("available_memory_proportion", amp, (int, float), "a number")
    return {
        "batch_size": batch_size,
        "dims": dict(dims or {}),
        "input_shapes": shapes,
        "precision": precision,
        "device": os.fspath(device),
        "available_memory_proportion": None if amp is None else float(amp),
        "strict_names": bool(strict_names),
        "strict": bool(strict),
        "weights": weights,
        "weights_location": weights_location,
        "retrieval_mode": retrieval_mode,
    }


_MODEL_KEYWORDS = tuple(
    _signature(_model_options).parameters.values())


def _takes_model_options(call):
    """``call`` with _model_options' keywords added to its signature: they
    are checked (_model_options) and passed on as ``options``, a dict."""
    names = {p.name for p in _MODEL_KEYWORDS}

    @functools.wraps(call)
    def with_options(*args, **kwargs):
        model = {k: kwargs.pop(k) for k in list(kwargs) if k in names}
        return call(*args, options=_model_options(**model), **kwargs)

    own = [p for p in _signature(call).parameters.values()
           if p.name != "options"]
    last = [p for p in own if p.kind is p.VAR_KEYWORD]
    own = [p for p in own if p.kind is not p.VAR_KEYWORD]
    with_options.__signature__ = _signature(call).replace(
        parameters=own + list(_MODEL_KEYWORDS) + last)
    return with_options


class Progress(NamedTuple):
    """One report of a long call's progress, given to ``progress=``.

    ``step`` is ``"load"`` while a model file is read (``done`` and
    ``total`` in bytes of the file; about once per percent and at its end)
    or ``"plan"`` during a search (``done`` splits costed of ``total``, the
    ``max_candidates`` budget; about once a second once it has run one).
    ``best_max_tile_bytes`` is the closest split's fullest tile, None until
    a split was costed and for ``"load"``.
    """
    step: str
    done: int
    total: int
    best_max_tile_bytes: Optional[int]


def _takes_one_argument(call: Callable[..., Any]) -> bool:
    """Whether ``call`` can be called with one positional argument (else it
    is taken as the two-argument form of ``progress``)."""
    try:
        sig = _signature(call)
    except (TypeError, ValueError):  # a builtin without a signature
        return True
    try:
        sig.bind(None)
        return True
    except TypeError:
        return False


def _progress_relay(progress: Any) -> Optional[Callable[..., Any]]:
    """The callback the library calls, (step, done, total, best), made from
    the user's ``progress``: ``f(Progress)``, or the older
    ``f(candidates, best_max_tile_bytes)`` which sees the search only."""
    if progress is None:
        return None
    if not callable(progress):
        raise TypeError("progress must be callable")
    if _takes_one_argument(progress):
        return lambda step, done, total, best: progress(
            Progress(step, done, total, best))

    def search_only(step, done, total, best):
        if step == "plan":
            progress(done, best)
    return search_only


#: The library's defaults (autoshard::Options, which ``autoshard shard``'s
#: flags bind to): plan()'s keywords default to the same values.
OPTION_DEFAULTS = dict(_autoshard.option_defaults())


def _keyword_errors(call):
    """``call`` with the CLI flags (``--max-ipus``) its ValueErrors and
    FileNotFoundErrors name renamed to its keywords (``max_ipus``): every
    keyword of its signature, and the CLI's --input-shape and --dim."""
    names = [p for p in _signature(call).parameters]
    flags = {f"--{n.replace('_', '-')}": n for n in names}
    flags.update({"--input-shape": "input_shapes", "--dim": "dims"})

    @functools.wraps(call)
    def renamed(*args, **kwargs):
        try:
            return call(*args, **kwargs)
        except (ValueError, FileNotFoundError) as e:
            message = str(e)
            # Longest first: --max-search-seconds before --max-s...
            for flag in sorted(flags, key=len, reverse=True):
                message = re.sub(re.escape(flag) + r"(?![\w-])", flags[flag],
                                 message)
            if message == str(e):
                raise
            raise type(e)(message) from None
    return renamed


@_keyword_errors
@_takes_model_options
def plan(model: Any,
         num_ipus: Union[int, str] = 4,
         *,
         strategy: str = OPTION_DEFAULTS["strategy"],
         max_ipus: int = OPTION_DEFAULTS["max_ipus"],
         optimal_perf: bool = False,
         max_candidates: int = OPTION_DEFAULTS["max_candidates"],
         max_search_seconds: float = OPTION_DEFAULTS["max_search_seconds"],
         bound_seconds: float = OPTION_DEFAULTS["bound_seconds"],
         compile_cmd: Optional[str] = None,
         compile_timeout: float = OPTION_DEFAULTS["compile_timeout"],
         jobs: int = OPTION_DEFAULTS["jobs"],
         pins: Optional[Mapping[str, int]] = None,
         total_ipus: Optional[int] = None,
         batch_sizes: Optional[Sequence[int]] = None,
         replica_grouping: Optional[Tuple[int, int]] = None,
         shard_over: Optional[Union[int, str]] = None,
         progress: Optional[Callable[..., Any]] = None,
         options: dict) -> Plan:
    """Plans a split of ``model`` over ``num_ipus`` IPUs (``autoshard shard``).

    ``num_ipus`` is a count, or ``"auto"``: the smallest power of two up to
    ``max_ipus`` whose split fits. ``strategy``: ``"auto"`` (the best of the
    others), ``"optimal"`` (dynamic programming), ``"search"`` (raw, then
    boundary moves until every IPU fits) or ``"raw"`` (PopRT's split).
    ``batch_size`` sets the symbolic first dim of every input; ``dims`` sets
    symbolic input dims by name (``{"seq": 128}``); ``input_shapes`` fixes
    whole input shapes (``{"input": [1, 3, 224, 224]}``). ``precision`` is
    ``"fp32"`` or ``"fp16"``; ``device`` a built-in profile (``DEVICES``) or
    a DeviceProfile text-proto file. ``max_search_seconds`` bounds the
    search and the optimal DPs; ``bound_seconds`` the certified bound (0:
    the cheap bound). ``compile_cmd`` lets a real compiler judge the split
    (``{model}`` is the candidate's path): search compiles each candidate,
    ``jobs`` at once; the other strategies compile their chosen split, then
    auto's other candidates in order; ``compile_timeout`` bounds one compile.
    ``weights`` is ``"constant"`` (PopRT's inference default) or
    ``"variable"``: every reader of a weight then runs on one IPU (PopART's
    rule when pipelining), so the last stage may return to IPU 0.
    ``pins`` maps node names to the IPU each must run on (``shard --pin
    NODE=IPU``), e.g. ``{"embedding": 0}``.
    ``weights_location`` is ``"on-chip"`` (default), ``"remote"`` (every
    floating-point weight in Streaming Memory, loaded each step, sharded
    over ``shard_over`` replicas with ``total_ipus``) or ``"auto"`` (both
    planned, the faster that fits kept); ``retrieval_mode`` PopXL's
    ``"one_per_group"`` or ``"all_replicas"``, written into the plan.

    A POD (``shard --total-ipus``): ``total_ipus`` IPUs, replicas of the
    plan's pipeline; ``batch_sizes`` the micro-batches to try (the highest
    POD throughput wins); ``replica_grouping`` ``(stride, size)``;
    ``shard_over`` an int or ``"group"``. Defaults are the CLI's
    (``OPTION_DEFAULTS``); errors name the keyword (``max_ipus``).

    ``progress(p)`` is called with a ``Progress`` while the model file
    loads (``p.step == "load"``, bytes of the file) and about once a second
    by a search that runs longer than one (``"plan"``, splits costed), on
    the calling thread with the GIL held; a callable of two arguments is
    called as ``progress(candidates, best_max_tile_bytes)`` by the search
    only (the older form). An exception it raises is raised when the step
    ends (the work is not cut short; the callback is not called again).
    Likewise Ctrl-C takes effect when planning ends; ``max_search_seconds``
    bounds the wait. A model given as a path is read without its inline
    weights' bytes (as the CLI's ``shard``), unless ``compile_cmd`` is set.

    Returns the Plan (``plan.fits`` is False when no split fits). Raises
    ValueError for a bad model or option, FileNotFoundError for a missing
    file.
    """
    data, is_path = _source(model)
    if num_ipus == "auto":
        count = 0
    elif isinstance(num_ipus, int) and not isinstance(num_ipus,
                                                      bool) and num_ipus >= 1:
        count = num_ipus
    else:
        raise ValueError("--num-ipus must be a count of at least 1 or auto, "
                         f"got '{num_ipus}'")
    for name, value, types, what in (
        ("strategy", strategy, (str,), "str"),
        ("max_ipus", max_ipus, (int,), "an int"),
        ("max_candidates", max_candidates, (int,), "an int"),
        ("max_search_seconds", max_search_seconds, (int, float), "a number"),
        ("bound_seconds", bound_seconds, (int, float), "a number"),
        ("compile_timeout", compile_timeout, (int, float), "a number"),
        ("jobs", jobs, (int,), "an int"),
    ):
        _check(name, value, types, what)
    strategies = _autoshard.strategy_names()  # the registry's, as the CLI's
    if strategy not in strategies:
        raise ValueError(
            f"--strategy: {strategy} not in {{{','.join(strategies)}}}")
    if compile_cmd is not None:
        _check("compile_cmd", compile_cmd, (str,), "str")
    for name, ipu in (pins or {}).items():
        _check("pins' keys", name, (str,), "str")
        _check(f"pins['{name}']", ipu, (int,), "an int")
    relay = _progress_relay(progress)
    options.update(
        num_ipus=count,
        strategy=strategy,
        max_ipus=max_ipus,
        optimal_perf=bool(optimal_perf),
        max_candidates=max_candidates,
        max_search_seconds=float(max_search_seconds),
        bound_seconds=float(bound_seconds),
        compile_cmd=compile_cmd or "",
        compile_timeout=float(compile_timeout),
        # As the CLI: with one model, jobs counts compiles.
        jobs=jobs if compile_cmd else 1,
        pins=[f"{name}={ipu}" for name, ipu in (pins or {}).items()],
    )
    options.update(_pod_options(total_ipus, batch_sizes, replica_grouping,
                                shard_over))
    return _autoshard.plan(data, is_path, options, relay)


def _pod_options(total_ipus, batch_sizes, replica_grouping,
                 shard_over) -> dict:
    """plan()'s POD keywords, checked as the CLI checks its POD flags."""
    if total_ipus is None:
        for name, value in (("batch_sizes", batch_sizes),
                            ("replica_grouping", replica_grouping),
                            ("shard_over", shard_over)):
            if value is not None:
                raise ValueError(f"{name} needs total_ipus")
        return {}
    _check("total_ipus", total_ipus, (int,), "an int")
    sizes = None
    if batch_sizes is not None:
        sizes = sorted(set(batch_sizes))
        for b in sizes:
            _check("batch_sizes' items", b, (int,), "an int")
    grouping = None
    if replica_grouping is not None:
        stride, size = replica_grouping
        _check("replica_grouping's stride", stride, (int,), "an int")
        _check("replica_grouping's size", size, (int,), "an int")
        if stride < 1 or size < 1:
            raise ValueError("replica_grouping (stride, size) must be at "
                             f"least 1 each, got {replica_grouping}")
        grouping = (stride, size)
    over = None
    if shard_over is not None:
        if shard_over == "group":
            over = 0
        else:
            _check("shard_over", shard_over, (int,), "an int or 'group'")
            if shard_over < 1:
                raise ValueError(
                    f"shard_over must be at least 1 or 'group', got "
                    f"{shard_over}")
            over = shard_over
    return {"total_ipus": total_ipus, "batch_sizes": sizes,
            "replica_grouping": grouping, "shard_over": over}


def _points(sharding_points: Any):
    """(points, YAML text or None, what) for _autoshard.evaluate."""
    if isinstance(sharding_points, Plan):
        return sharding_points.sharding_points, None, ""
    if isinstance(sharding_points, str):
        return [], sharding_points, "sharding config"
    if isinstance(sharding_points, os.PathLike):
        path = os.fspath(sharding_points)
        with open(path, encoding="utf-8") as f:
            return [], f.read(), path
    points = []
    for p in sharding_points:
        if isinstance(p, Mapping):
            point = (p["node"], p["device"], p.get("stage", p["device"]))
        else:
            point = tuple(p) if len(p) == 3 else (p[0], p[1], p[1])
        _check("a sharding point's node", point[0], (str,), "str")
        _check("a sharding point's device", point[1], (int,), "an int")
        _check("a sharding point's stage", point[2], (int,), "an int")
        points.append(point)
    return points, None, ""


@_takes_model_options
def evaluate(model: Any, sharding_points: Any, *, options: dict) -> Plan:
    """Costs a given split (``autoshard apply``'s plan).

    ``sharding_points`` are PopRT's: a list of ``(node, ipu, stage)`` or
    ``(node, ipu)`` tuples or ``{"node", "device", "stage"}`` dicts, a
    Plan (its points), the text of a sharding config (YAML), or an
    ``os.PathLike`` naming a sharding-config file. Each point claims its
    node and unclaimed ancestors; no points put every node on IPU 0. The
    other options are ``plan``'s. Raises ValueError for an unknown node, a
    point that is an ancestor of an earlier stage's, or a bad config.
    """
    data, is_path = _source(model)
    points, yaml_text, what = _points(sharding_points)
    return _autoshard.evaluate(data, is_path, points, yaml_text, what,
                               options)


def apply(model: Any, plan: Plan) -> Any:
    """Annotates ``model`` with ``plan``: every node of the main graph gets
    ``__ipu_number`` and ``__pipeline_stage`` (what PopART/PopRT read).

    Returns the annotated model as bytes (what ``autoshard shard -o`` writes,
    byte for byte), or as a new ModelProto of the same class when given one.
    Raises ValueError when ``model`` is not the model that was planned.
    """
    _check("plan", plan, (Plan,), "an autoshard.Plan")
    data, is_path = _source(model)
    annotated = _autoshard.apply(data, is_path, plan)
    if isinstance(model, (bytes, bytearray, memoryview, str, os.PathLike)):
        return annotated
    return type(model).FromString(annotated)


def split(annotated_model: Any, out_dir: Union[str, "os.PathLike[str]"]
          ) -> dict:
    """Writes one ONNX model per pipeline stage of an annotated model, and
    ``manifest.json``, into ``out_dir`` (``autoshard split``; README.md).

    ``out_dir`` may be missing, empty or an earlier split (replaced as a
    whole). A model given as bytes or a ModelProto cannot have external
    data. Returns the manifest (proto/split.proto) as a dict; the split's
    warnings are issued as AutoshardWarning. Raises ValueError for a model
    without annotations or with a bad one, and for an ``out_dir`` that holds
    other files.
    """
    _check("out_dir", out_dir, (str, os.PathLike), "a path")
    out = os.fsencode(os.fspath(out_dir))
    data, is_path = _source(annotated_model, "annotated_model")
    if is_path:
        manifest, notes = _autoshard.split(data, out, data)
    else:
        with tempfile.TemporaryDirectory(prefix="autoshard-split-") as tmp:
            path = os.path.join(tmp, "model.onnx")
            with open(path, "wb") as f:
                f.write(data)
            try:
                manifest, notes = _autoshard.split(os.fsencode(path), out, b"")
            except (ValueError, OSError) as e:
                # Name the bytes, not the temporary file.
                message = str(e).replace(path, "model bytes")
                raise type(e)(message.replace(tmp + os.sep, "")) from None
    for note in notes:
        warnings.warn(note, AutoshardWarning, stacklevel=2)
    return manifest


@_takes_model_options
def inspect(model: Any, *,
            progress: Optional[Callable[..., Any]] = None,
            options: dict) -> InspectReport:
    """A model's costs without a split (``autoshard inspect``): FLOPs, MACs,
    weights, its memory on one IPU, the fewest IPUs whose plan fits (as shard --num-ipus auto plans it), a
    per-op-type table and the data-dependent dims assumed. ``report.text()``
    is what the CLI prints, ``report.to_json()`` its ``--json``. Options
    and ``progress`` as ``plan``'s.
    """
    relay = _progress_relay(progress)
    data, is_path = _source(model)
    return _autoshard.inspect(data, is_path, options, relay)
