#!/usr/bin/python3
"""onnxruntime as the oracle of autoshard's dims (issue 25, point 1).

For each case (a model and autoshard's options) it runs `autoshard inspect
MODEL OPTIONS --nodes-csv` (the dims autoshard costs, per node output), and
the model as the options make it in onnxruntime with every node output
exposed (expose_outputs.py, check_dims.js), then compares:
- both run: every output onnxruntime returns equals autoshard's dims, except
  at nodes autoshard reports as data-dependent (counted apart); an output
  autoshard does not know ("?") is a mismatch;
- autoshard refuses (exit 2) and onnxruntime refuses: agreed;
- one refuses and the other runs: a failure, unless onnxruntime's reason is
  an op it lacks (no verdict).

Usage: dims_check.py AUTOSHARD_BINARY SOURCE_DIR [--corpus DIR] [--all]
                     [--table FILE]
Cases: the hand-made models of make_shape_models.py with their options;
with --corpus, the corpus models of SAMPLE (or every .onnx below DIR with
--all), each as declared and at --batch-size 1, 2 and 8, on top of its
options in dims_models.tsv. Prints a Markdown table (one row a case) and a
total line; --table writes the same. Exit 0 when no case fails.
"""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import expose_outputs  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# A fixed sample of corpus models for the ctest (seconds, not minutes).
# IS-Net's and SSDlite's refusals are tests/trust_cli_test.sh's.
SAMPLE = ["llm_tiny_random_gpt2_fp32_past", "vad_silero_v5", "oww_melspectrogram",
          "cnn_light_resnet50"]
# onnxruntime's reasons that are no verdict on dims: an op it lacks.
NO_VERDICT = ("NOT_IMPLEMENTED", "Could not find an implementation",
              "is not a registered function/op")


def model_options(key):
    """(autoshard's options, check_dims.js's) of a corpus model."""
    auto, ort = [], []
    path = os.path.join(HERE, "dims_models.tsv")
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            if fields[0] != key:
                continue
            words = fields[1].split() if len(fields) > 1 else []
            for flag, value in zip(words[::2], words[1::2]):
                (ort if flag in ("--value", "--int-max") else auto).extend([flag, value])
    return auto, ort


def autoshard_dims(binary, model, options, tmp):
    """(exit code, stderr's last line, {node index: (shapes, dependent)})."""
    out = os.path.join(tmp, "nodes.csv")
    if os.path.exists(out):
        os.remove(out)
    run = subprocess.run([binary, "inspect", model, *options, "--nodes-csv", out, "-q"],
                         capture_output=True, text=True)
    rows = {}
    if run.returncode in (0, 3) and os.path.exists(out):
        with open(out) as f:
            for i, row in enumerate(csv.DictReader(f)):
                rows[i] = (row["name"], row["output_shapes"].split(";"),
                           row["data_dependent"] == "1")
    lines = run.stderr.strip().splitlines()
    return run.returncode, lines[-1] if lines else "", rows


def expose(model, options, ort_options, work):
    """Writes `work` (expose_outputs.py) or returns its error."""
    values = {}
    for flag, value in zip(ort_options[::2], ort_options[1::2]):
        if flag == "--value":
            name, v = value.split("=")
            values[name] = float(v)
    try:
        expose_outputs.main(model, work, options, values)
        return None
    except Exception as e:  # the model as onnx reads it: no verdict of ours
        return f"expose_outputs: {e}"[:300]


def ort_runs(works):
    """onnxruntime's {"ok", "outputs" | "error"} of every directory, in one
    node process."""
    if not works:
        return []
    run = subprocess.run(["node", os.path.join(HERE, "check_dims.js"), *works],
                         capture_output=True, text=True)
    results = []
    for line in run.stdout.splitlines():
        try:
            results.append(json.loads(line))
        except ValueError:
            pass
    while len(results) < len(works):
        results.append({"ok": False, "error": "check_dims: " + run.stderr.strip()[-300:]})
    return results


def compare(spec, got, rows):
    """(outputs compared, data-dependent skipped, mismatch texts)."""
    compared, dependent, mismatches = 0, 0, []
    for i, node in enumerate(spec["nodes"]):
        if i not in rows:
            mismatches.append(f"node {i} '{node['name']}' missing from the CSV")
            continue
        name, shapes, is_dependent = rows[i]
        for j, out in enumerate(node["outputs"]):
            if not out or out not in got:
                continue
            if is_dependent:
                dependent += 1
                continue
            compared += 1
            want = "x".join(str(d) for d in got[out])
            have = shapes[j] if j < len(shapes) else "(none)"
            if have != want:
                mismatches.append(f"{name} ({node['op_type']}) output '{out}': "
                                  f"autoshard {have or '[]'}, onnxruntime {want or '[]'}")
    return compared, dependent, mismatches


def verdict(r, code, spec, ort, rows):
    r["autoshard"] = "runs" if code in (0, 3) else f"refuses (exit {code})"
    r["ort"] = "runs" if ort["ok"] else "refuses"
    if not ort["ok"]:
        r["ort_reason"] = ort["error"]
    if code in (0, 3) and ort["ok"]:
        r["compared"], r["dependent"], r["mismatches"] = compare(spec, ort["outputs"], rows)
        r["verdict"] = "FAIL" if r["mismatches"] else "pass"
    elif code not in (0, 3) and not ort["ok"]:
        r["verdict"] = "refused by both"
    elif not ort["ok"] and any(s in ort["error"] for s in NO_VERDICT):
        r["verdict"] = "no verdict (an op onnxruntime lacks)"
    else:
        r["verdict"] = "FAIL"


def run_cases(binary, all_cases, tmp):
    """Every case's result: autoshard and the exposures first, then one
    onnxruntime process for all."""
    results, works, pending = [], [], []
    for i, (path, key, options, ort_options) in enumerate(all_cases):
        case_dir = os.path.join(tmp, f"case{i}")
        os.makedirs(case_dir)
        code, reason, rows = autoshard_dims(binary, path, options, case_dir)
        r = {"model": key, "options": " ".join(options) or "(declared)", "compared": 0,
             "dependent": 0, "mismatches": [], "reason": reason}
        work = os.path.join(case_dir, "ort")
        error = expose(path, options, ort_options, work)
        spec = None
        if error is None:
            with open(os.path.join(work, "spec.json")) as f:
                spec = json.load(f)
            works.append(work)
        pending.append((r, code, spec, rows, error))
        results.append(r)
    runs = iter(ort_runs(works))
    for r, code, spec, rows, error in pending:
        ort = {"ok": False, "error": error} if error else next(runs)
        verdict(r, code, spec, ort, rows)
    return results


def cases(src, corpus, everything):
    tmp = tempfile.mkdtemp(prefix="dims_models_")
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_shape_models.py"), tmp],
                   check=True)
    with open(os.path.join(tmp, "cases.tsv")) as f:
        for line in f:
            name, opts = line.rstrip("\n").split("\t")
            yield os.path.join(tmp, name + ".onnx"), "hand-made " + name, opts.split(), []
    if not corpus:
        return
    models = []
    for root, _, files in os.walk(corpus):
        for f in files:
            if f.endswith(".onnx"):
                path = os.path.join(root, f)
                key = os.path.relpath(path, corpus)[:-5]
                key = key[:-len("/model")] if key.endswith("/model") else key
                if everything or key in SAMPLE:
                    models.append((key, path))
    for key, path in sorted(models):
        auto, ort = model_options(key)
        yield path, key, auto, ort
        for batch in (1, 2, 8):
            yield path, key, auto + ["--batch-size", str(batch)], ort


def main(argv):
    binary, src = argv[0], argv[1]
    corpus = everything = table_path = None
    rest = iter(argv[2:])
    for a in rest:
        if a == "--corpus":
            corpus = next(rest)
        elif a == "--all":
            everything = True
        elif a == "--table":
            table_path = next(rest)
    start = time.time()
    lines = ["| model | options | autoshard | onnxruntime | outputs compared | "
             "data-dependent | mismatches | verdict |", "|---|---|---|---|---|---|---|---|"]
    notes, totals, failed = [], [0, 0, 0, 0, 0], 0
    with tempfile.TemporaryDirectory() as tmp:
        for r in run_cases(binary, list(cases(src, corpus, everything)), tmp):
            lines.append(f"| {r['model']} | {r['options']} | {r['autoshard']} | {r['ort']} | "
                         f"{r['compared']} | {r['dependent']} | {len(r['mismatches'])} | "
                         f"{r['verdict']} |")
            totals[0] += 1
            totals[1] += r["compared"]
            totals[2] += len(r["mismatches"])
            totals[3] += r["verdict"] == "refused by both"
            totals[4] += r["dependent"]
            if r["verdict"] == "FAIL":
                failed += 1
            if r["verdict"] != "pass":
                notes.append(f"- {r['model']} {r['options']}: {r['verdict']}; autoshard: "
                             f"{r['reason'] or 'runs'}; onnxruntime: {r.get('ort_reason', 'runs')}")
            for m in r["mismatches"][:5]:
                notes.append(f"  - {m}")
    total = (f"{totals[0]} cases, {totals[1]} outputs compared, {totals[2]} mismatches, "
             f"{totals[4]} data-dependent outputs not compared, {totals[3]} refused by both, "
             f"{failed} failed ({time.time() - start:.0f} s)")
    text = "\n".join(lines + ["", total, ""] + notes) + "\n"
    # Temporary folders out of the text (the table is kept in docs/).
    text = re.sub(r"/tmp/tmp[^/ ]*/case[0-9]+/ort/", "", text)
    text = re.sub(r"/tmp/dims_models_[^/ ]*/", "", text)
    print(text)
    if table_path:
        with open(table_path + ".tmp", "w") as f:
            f.write(text)
        os.replace(table_path + ".tmp", table_path)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
