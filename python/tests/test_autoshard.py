"""The Python module against the CLI: the same files byte for byte, the same
error messages, every way of passing a model, threads, progress.

Run by ctest (python_test) with Debian's python3-pytest, PYTHONPATH set to
the build tree's package and AUTOSHARD_BINARY to the CLI built beside it.
The bundled model is SqueezeNet 1.1: 65 nodes, input `input` of shape
[batch, 3, 224, 224] (models/README.md).
"""

import inspect
import json
import os
import pathlib
import re
import subprocess
import threading

import onnx
import onnx.parser
import pytest

import autoshard

SOURCE = pathlib.Path(os.environ.get(
    "AUTOSHARD_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
MODEL = str(SOURCE / "models" / "squeezenet1_1.onnx")
BINARY = os.environ.get("AUTOSHARD_BINARY", str(SOURCE / "build" / "autoshard"))


def cli(*args):
    return subprocess.run([BINARY, *map(str, args)], capture_output=True,
                          text=True, check=False)


def cli_error(*args):
    """The CLI's error message (exit 2), without "autoshard: error: "."""
    run = cli(*args)
    assert run.returncode == 2, run.stderr
    lines = [l for l in run.stderr.splitlines() if l.startswith("autoshard: error: ")]
    return lines[0][len("autoshard: error: "):] if lines else run.stderr.strip()


def untimed(json_text):
    """A plan file without its timings (seconds of this run)."""
    return re.sub(r'"(planning_s|seconds|bound_seconds)": [0-9.e+-]+', r'"\1": 0',
                  json_text)


def test_plan_apply_round_trip_equals_the_cli_byte_for_byte(tmp_path):
    run = cli("shard", MODEL, "--num-ipus", 4, "--batch-size", 1, "-q",
              "-o", tmp_path / "sq.onnx", "--sharding-config", tmp_path / "s.yaml",
              "--plan", tmp_path / "plan.json")
    assert run.returncode == 0, run.stderr
    plan = autoshard.plan(MODEL, 4, batch_size=1)
    assert autoshard.apply(MODEL, plan) == (tmp_path / "sq.onnx").read_bytes()
    assert plan.sharding_config() == (tmp_path / "s.yaml").read_text()
    assert untimed(plan.to_json()) == untimed((tmp_path / "plan.json").read_text())
    # 65 nodes over 4 IPUs, each node on the stage of its IPU.
    assert plan.num_ipus == 4 and plan.model == MODEL and plan.batch_size == 1
    assert len(plan.placement) == 65
    assert sum(ipu.num_nodes for ipu in plan.ipus) == 65
    assert all(ipu == stage for ipu, stage in plan.placement.values())
    assert [ipu.ipu for ipu in plan.ipus] == [0, 1, 2, 3]
    assert plan.fits == all(ipu.fits for ipu in plan.ipus)
    assert plan.bottleneck_s == max(ipu.stage_time_s for ipu in plan.ipus)
    # throughput = batch / bottleneck (proto/plan.proto).
    # The step's fixed time (issue 33) is in the throughput and the latency,
    # not in the stages: latency - Σ stage times.
    step_s = plan.latency_s - sum(ipu.stage_time_s for ipu in plan.ipus)
    assert step_s > 0
    assert plan.throughput_per_s == pytest.approx(1 / (plan.bottleneck_s + step_s))
    as_dict = plan.to_dict()
    assert as_dict["summary"]["num_nodes"] == 65 and len(as_dict["nodes"]) == 65
    assert as_dict["ipus"][3]["memory"]["total_bytes"] == plan.ipus[3].memory.total_bytes
    assert as_dict["strategy"] == "auto" and as_dict["search"] is not None

    # The config back (`autoshard apply`): the same annotated model.
    run = cli("apply", MODEL, "--sharding-config", tmp_path / "s.yaml",
              "--batch-size", 1, "-q", "-o", tmp_path / "sq2.onnx")
    assert run.returncode == 0, run.stderr
    given = autoshard.evaluate(MODEL, tmp_path / "s.yaml", batch_size=1)
    assert given.strategy == "apply"
    assert given.placement == plan.placement
    assert autoshard.apply(MODEL, given) == (tmp_path / "sq2.onnx").read_bytes()
    as_tuples = autoshard.evaluate(MODEL, plan.sharding_points, batch_size=1)
    assert as_tuples.placement == plan.placement
    assert autoshard.evaluate(MODEL, plan, batch_size=1).placement == plan.placement


def test_path_bytes_and_model_proto_agree():
    data = pathlib.Path(MODEL).read_bytes()
    proto = onnx.load(MODEL)
    by_path = autoshard.plan(pathlib.Path(MODEL), 2, batch_size=1)
    by_bytes = autoshard.plan(data, 2, batch_size=1)
    by_proto = autoshard.plan(proto, 2, batch_size=1)
    assert by_path.model == MODEL and by_bytes.model == "" and by_proto.model == ""
    expected = untimed(by_bytes.to_json())
    assert untimed(by_proto.to_json()) == expected
    assert untimed(by_path.to_json()).replace(f'"model": "{MODEL}"', '"model": ""') == expected
    annotated = autoshard.apply(data, by_bytes)
    assert isinstance(annotated, bytes)
    assert autoshard.apply(MODEL, by_path) == annotated
    back = autoshard.apply(proto, by_proto)
    assert isinstance(back, onnx.ModelProto)
    assert back.SerializeToString() == annotated
    assert proto.graph.node[0].attribute == onnx.load(MODEL).graph.node[0].attribute


def test_a_corrupt_model_raises_with_the_files_reason(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not an ONNX model")
    message = cli_error("shard", bad, "--num-ipus", 2)
    assert message.startswith(f"{bad}: not an ONNX model")
    with pytest.raises(ValueError) as e:
        autoshard.plan(bad, 2)
    assert str(e.value) == message
    with pytest.raises(ValueError, match="^model bytes: not an ONNX model"):
        autoshard.plan(b"this is not an ONNX model", 2)
    with pytest.raises(FileNotFoundError) as e:
        autoshard.inspect(tmp_path / "missing.onnx")
    assert str(e.value) == f"{tmp_path / 'missing.onnx'}: no such file"
    with pytest.raises(TypeError, match="model must be a path, bytes or an onnx.ModelProto"):
        autoshard.plan(42, 2)


@pytest.mark.parametrize("kwargs, flags", [
    ({"num_ipus": 0}, ["--num-ipus", "0"]),
    ({"batch_size": 0}, ["--batch-size", "0"]),
    ({"precision": "fp64"}, ["--precision", "fp64"]),
    ({"strategy": "best"}, ["--strategy", "best"]),
    ({"available_memory_proportion": 1.5}, ["--available-memory-proportion", "1.5"]),
    ({"input_shapes": {"input": [1, 0, 224, 224]}}, ["--input-shape", "input:1,0,224,224"]),
    ({"input_shapes": {"nope": [1]}}, ["--input-shape", "nope:1"]),
    ({"device": "ipu9"}, ["--device", "ipu9"]),
    ({"max_search_seconds": 0}, ["--max-search-seconds", "0"]),
    ({"strategy": "raw", "optimal_perf": True}, ["--strategy", "raw", "--optimal-perf"]),
])
def test_bad_options_raise_the_clis_messages(tmp_path, kwargs, flags):
    kwargs = {"num_ipus": 2, **kwargs}
    cli_flags = flags if "--num-ipus" in flags else ["--num-ipus", "2", *flags]
    message = cli_error("shard", MODEL, *cli_flags, "-o", tmp_path / "out.onnx")
    error = FileNotFoundError if kwargs.get("device") == "ipu9" else ValueError
    with pytest.raises(error) as e:
        autoshard.plan(MODEL, **kwargs)
    # The CLI's message, naming plan()'s keywords where it names flags.
    keywords = {"--input-shape": "input_shapes"}
    for flag in sorted((f for f in flags if f.startswith("--")), key=len,
                       reverse=True):
        message = message.replace(
            flag, keywords.get(flag, flag[2:].replace("-", "_")))
    assert str(e.value) == message
    assert "--" not in str(e.value)
    assert not (tmp_path / "out.onnx").exists()


def test_plan_defaults_are_the_clis():
    defaults = inspect.signature(autoshard.plan).parameters
    assert defaults["max_ipus"].default == 256  # shard --max-ipus' default
    assert defaults["bound_seconds"].default == 10
    assert defaults["max_search_seconds"].default == 60
    assert autoshard.OPTION_DEFAULTS["max_ipus"] == 256
    with pytest.raises(ValueError, match="^max_ipus must be from 1 to 1024, got 2048$"):
        autoshard.plan(MODEL, "auto", max_ipus=2048)
    with pytest.raises(ValueError, match="^replica_grouping needs total_ipus$"):
        autoshard.plan(MODEL, 2, replica_grouping=(1, 2))


def test_plan_for_a_pod_as_the_cli(tmp_path):
    # 16 IPUs / 4 per replica = 4 replicas, as tests/pod_cli_test.sh.
    plan = autoshard.plan(MODEL, 4, total_ipus=16, batch_size=1)
    run = cli("shard", MODEL, "-n", "4", "--total-ipus", "16", "--batch-size",
              "1", "-o", tmp_path / "a.onnx", "--plan", tmp_path / "a.json")
    assert run.returncode == 0, run.stderr
    cli_plan = json.loads((tmp_path / "a.json").read_text())
    replication = json.loads(plan.to_json())["replication"]
    assert replication["replicas"] == 4
    assert replication == cli_plan["replication"]


def test_plan_lists_the_dims_it_assumed():
    # SqueezeNet's input is [batch, 3, 224, 224]: without an option, batch is 1.
    assumed = autoshard.plan(MODEL, 2).assumptions
    assert [(a["tensor"], a["dim"], a["dim_name"], a["value"]) for a in assumed] == [
        ("input", 0, "batch", 1)]
    assert autoshard.plan(MODEL, 2, batch_size=1).assumptions == []


def test_the_shapes_verdict_and_strict():
    # Without an option SqueezeNet's batch is assumed: the flag to paste.
    shapes = autoshard.plan(MODEL, 2).shapes
    assert shapes["verdict"] == "assumed"
    assert shapes["dim_flags"] == ["--dim batch=1"]
    assert autoshard.inspect(MODEL).shapes["verdict"] == "assumed"
    # The CLI's flags are named as Python's keywords in the message.
    with pytest.raises(ValueError, match="strict: the figures assume dims "
                       "that are not the model's own: batch=1; to plan with "
                       "them, pass dims batch=1"):
        autoshard.plan(MODEL, 2, strict=True)
    exact = autoshard.plan(MODEL, 2, batch_size=1, strict=True)
    assert exact.shapes["verdict"] == "exact"
    assert exact.shapes["unresolved_node_count"] == 0


def test_dims_set_symbolic_input_dims_by_name():
    by_dims = autoshard.plan(MODEL, 2, dims={"batch": 8})
    by_batch = autoshard.plan(MODEL, 2, batch_size=8)
    assert by_dims.batch_size == 8
    assert untimed(by_dims.to_json()) == untimed(by_batch.to_json())
    by_shape = autoshard.plan(MODEL, 2, input_shapes={"input": [8, 3, 224, 224]})
    assert untimed(by_shape.to_json()) == untimed(by_batch.to_json())
    with pytest.raises(ValueError, match="dims: no graph input has a dim named 'seq'"):
        autoshard.plan(MODEL, 2, dims={"seq": 128})
    with pytest.raises(ValueError, match=r"dims\['batch'\] = -1 is not an integer"):
        autoshard.plan(MODEL, 2, dims={"batch": -1})
    # 0 is a dim (an empty KV cache) but not a batch.
    with pytest.raises(ValueError, match="input 'input' has batch 0"):
        autoshard.plan(MODEL, 2, dims={"batch": 0})


def test_a_plan_that_does_not_fit_is_returned(tmp_path):
    # Tiles of 100 bytes: 1472 x 100 = 147,200 bytes an IPU, less than
    # SqueezeNet's weights alone (1,235,496 parameters x 4 = 4,941,984 bytes).
    device = tmp_path / "tiny.textproto"
    device.write_text('base: "ipu2"\nname: "tiny"\nbytes_per_tile: 100\n')
    plan = autoshard.plan(MODEL, 1, batch_size=1, device=device, strategy="raw")
    assert not plan.fits
    assert plan.device == "tiny"
    assert plan.out_of_memory.startswith("Out of memory on tile ")
    assert plan.ipus[0].memory.weight_bytes >= 4941984
    assert plan.ipus[0].max_tile_bytes > 100 and not plan.ipus[0].fits


def test_apply_refuses_another_model():
    plan = autoshard.plan(MODEL, 2, batch_size=1)
    other = onnx.load(MODEL)
    del other.graph.node[-1]
    with pytest.raises(ValueError, match="the plan is for a graph of 65 nodes; this one has 64"):
        autoshard.apply(other, plan)


def test_split_equals_the_cli_byte_for_byte(tmp_path):
    plan = autoshard.plan(MODEL, 4, batch_size=1)
    annotated = tmp_path / "sq.onnx"
    annotated.write_bytes(autoshard.apply(MODEL, plan))
    run = cli("split", annotated, "--out-dir", tmp_path / "cli", "-q")
    assert run.returncode == 0, run.stderr
    manifest = autoshard.split(annotated, tmp_path / "py")
    # The model's path relative to the manifest's folder, as the CLI writes it.
    assert manifest["model"] == "../sq.onnx"
    assert [s["file"] for s in manifest["stages"]] == [f"stage_{s}.onnx" for s in range(4)]
    assert sum(s["num_nodes"] for s in manifest["stages"]) >= 65
    for name in ["manifest.json"] + [s["file"] for s in manifest["stages"]]:
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    # From bytes: the same stages, the manifest naming no file.
    from_bytes = autoshard.split(annotated.read_bytes(), tmp_path / "py2")
    assert from_bytes["model"] == ""
    assert (tmp_path / "py2" / "stage_3.onnx").read_bytes() == (tmp_path / "cli" / "stage_3.onnx").read_bytes()
    with pytest.raises(ValueError, match="no node annotated|__ipu_number"):
        autoshard.split(MODEL, tmp_path / "none")


def test_external_data_stays_beside_the_model(tmp_path):
    model = onnx.load(MODEL)
    onnx.save_model(model, str(tmp_path / "ext.onnx"), save_as_external_data=True,
                    location="ext.data", size_threshold=0)
    plan = autoshard.plan(tmp_path / "ext.onnx", 2, batch_size=1)
    assert plan.num_nodes == 65
    # The annotated model refers to ext.data by a relative path: beside it,
    # it splits, the stages hard-linking the data file.
    (tmp_path / "ext.sharded.onnx").write_bytes(autoshard.apply(tmp_path / "ext.onnx", plan))
    manifest = autoshard.split(tmp_path / "ext.sharded.onnx", tmp_path / "stages")
    assert manifest["data_files"] == ["ext.data"]
    assert os.path.samefile(tmp_path / "stages" / "ext.data", tmp_path / "ext.data")
    # As bytes it has no folder, so no data: the error names the bytes.
    with pytest.raises(ValueError, match="^model bytes: .*external data file 'ext.data' is missing"):
        autoshard.split((tmp_path / "ext.sharded.onnx").read_bytes(), tmp_path / "stages2")


def test_inspect_equals_the_cli():
    # The Python report keeps the per-node rows: the CLI's --nodes.
    run = cli("inspect", MODEL, "--batch-size", 1, "--json", "--nodes")
    assert run.returncode == 0, run.stderr
    report = autoshard.inspect(MODEL, batch_size=1)
    assert report.to_json() == run.stdout
    assert report.text() == cli("inspect", MODEL, "--batch-size", 1).stdout
    # 1,235,496 parameters of 4 bytes (models/README.md).
    assert report.num_nodes == 65 and report.parameters == 1235496
    assert report.total_weight_bytes == 4 * 1235496
    assert report.to_dict()["num_nodes"] == 65


def rendezvous_command(tmp_path, me, other):
    """A compile command that says "fits" only once `other`'s has started too,
    so two plans finish only if they run at once (else, after 60 s, it says
    so in `late`)."""
    script = tmp_path / "rendezvous.sh"
    script.write_text(
        'touch "$1"; i=0\n'
        'while [ ! -e "$2" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done\n'
        '[ -e "$2" ] || touch "$3"\n')
    return f"sh {script} {tmp_path / me} {tmp_path / other} {tmp_path / 'late'} #"


def test_two_threads_plan_at_once(tmp_path):
    alone = autoshard.plan(MODEL, 2, batch_size=1, strategy="search", compile_cmd="true")
    results = {}

    def run(me, other):
        results[me] = autoshard.plan(MODEL, 2, batch_size=1, strategy="search",
                                     compile_cmd=rendezvous_command(tmp_path, me, other))

    threads = [threading.Thread(target=run, args=("a", "b")),
               threading.Thread(target=run, args=("b", "a"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not (tmp_path / "late").exists(), "the two plans did not run at once"
    for plan in results.values():
        assert plan.placement == alone.placement
        assert untimed(plan.to_json()) == untimed(alone.to_json())


def test_progress_is_called_and_its_exception_raised(tmp_path):
    # The search reports once it has run a second; a compile that takes 1.2 s
    # makes sure it has when it ends.
    calls = []
    plan = autoshard.plan(MODEL, 2, batch_size=1, strategy="search",
                          compile_cmd="sleep 1.2 #",
                          progress=lambda n, tile: calls.append((n, tile)))
    assert plan.fits
    assert calls and calls[-1][0] >= 1

    def fail(n, tile):
        raise KeyError("stop")

    with pytest.raises(KeyError, match="stop"):
        autoshard.plan(MODEL, 2, batch_size=1, strategy="search",
                       compile_cmd="sleep 1.2 #", progress=fail)


def test_progress_sees_the_load_and_the_search():
    # Issue 27 point 4: one-argument callables get autoshard.Progress for
    # every step. Loading reports bytes of the file (the bundled model's
    # size, os.stat) in order; a search that runs over a second (a compile
    # of 1.2 s) reports splits costed of max_candidates (100,000 default).
    events = []
    autoshard.plan(MODEL, 2, batch_size=1, progress=events.append)
    loads = [e for e in events if e.step == "load"]
    size = os.stat(MODEL).st_size
    assert loads and all(e.total == size for e in loads)
    assert [e.done for e in loads] == sorted(e.done for e in loads)
    assert 0 < loads[-1].done <= size
    assert all(e.best_max_tile_bytes is None for e in loads)

    events.clear()
    autoshard.plan(MODEL, 2, batch_size=1, strategy="search",
                   compile_cmd="sleep 1.2 #", progress=events.append)
    plans = [e for e in events if e.step == "plan"]
    assert plans and plans[-1].done >= 1
    assert plans[-1].total == autoshard.OPTION_DEFAULTS["max_candidates"]

    events.clear()
    autoshard.inspect(MODEL, batch_size=1, progress=events.append)
    assert events and events[0].step == "load"

    def fail(p):
        raise KeyError("stop at " + p.step)

    with pytest.raises(KeyError, match="stop at load"):
        autoshard.plan(MODEL, 2, batch_size=1, progress=fail)


def test_dims_an_op_cannot_take_raise_naming_the_node():
    # Issue 25 point 2: x[N,16] expanded to the constant shape [2,16] cannot
    # run at batch 4; the error is the CLI's, with the keyword for the flag.
    model = onnx.parser.parse_model("""
        <ir_version: 8, opset_import: ["" : 13]>
        g (float[N,16] x) => (float[2,16] y) {
          s = Constant<value = int64[2] {2, 16}>()
          e = Expand(x, s)
          y = Relu(e)
        }""")
    for i, node in enumerate(model.graph.node):
        node.name = f"n{i}"
    with pytest.raises(ValueError, match=r"batch_size 4: node 'n1' \(Expand\) "
                       r"cannot take the dims it makes: its inputs 'x' \[4,16\], "
                       r"'s' = \{2,16\}; ONNX's shape inference: Incompatible dimensions"):
        autoshard.plan(model, 1, batch_size=4)
    assert autoshard.plan(model, 1, batch_size=2).batch_size == 2


def test_pins_place_a_node_as_the_cli(tmp_path):
    # Issue 31: pins={"NODE": IPU} is shard's --pin NODE=IPU.
    free = autoshard.plan(MODEL, 2, batch_size=1)
    last = list(free.placement)[-1]
    first = list(free.placement)[0]
    # The first node the free plan runs on IPU 1 (placement is in
    # topological order), pinned to IPU 0, runs there.
    moved = next(n for n, (ipu, _) in free.placement.items() if ipu == 1)
    pinned = autoshard.plan(MODEL, 2, batch_size=1, pins={moved: 0})
    assert pinned.placement[moved][0] == 0
    run = cli("shard", MODEL, "--num-ipus", 2, "--batch-size", 1, "-q",
              "-o", tmp_path / "sq.onnx", "--pin", f"{moved}=0",
              "--plan", tmp_path / "plan.json")
    assert run.returncode == 0, run.stderr
    assert untimed(pinned.to_json()) == untimed(
        (tmp_path / "plan.json").read_text())
    # The last node on IPU 0 leaves IPU 1 empty: refused, as the CLI's exit 2.
    with pytest.raises(ValueError, match="keeps the constraints"):
        autoshard.plan(MODEL, 2, batch_size=1, pins={last: 0})
    with pytest.raises(TypeError, match="pins"):
        autoshard.plan(MODEL, 2, pins={first: "0"})


def test_weights_location_remote_as_the_cli(tmp_path):
    # Issue 30: every weight in Streaming Memory, as shard --weights-location.
    plan = autoshard.plan(MODEL, 1, weights_location="remote",
                          retrieval_mode="all_replicas")
    run = cli("shard", MODEL, "-n", "1", "--weights-location", "remote",
              "--retrieval-mode", "all_replicas", "--plan", tmp_path / "r.json")
    assert run.returncode == 0, run.stderr
    ours = json.loads(plan.to_json())["weight_locations"]
    assert ours == json.loads((tmp_path / "r.json").read_text())["weight_locations"]
    assert ours["chosen"] == "remote"
    assert ours["retrieval_mode"] == "all_replicas"
    with pytest.raises(ValueError, match="has no Streaming Memory"):
        autoshard.plan(MODEL, 1, weights_location="remote", device="c600")
    with pytest.raises(ValueError, match="^weights_location: disk not in"):
        autoshard.plan(MODEL, 1, weights_location="disk")
