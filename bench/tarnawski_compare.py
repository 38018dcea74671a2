#!/usr/bin/env python3
"""Compares `autoshard solve` with the DP of Tarnawski et al. (NeurIPS 2020,
github.com/msr-fiddle/dnn-partitioning, throughput-dp/dp.cpp) on their
throughput inference inputs as published, their CPU included (issue 31):

    bench/tarnawski_compare.py REPO AUTOSHARD DP_EXE [WORKDIR] [--training]

REPO is a checkout of dnn-partitioning; DP_EXE their DP built with
`g++ -O2 throughput-dp/dp.cpp -o dp.exe` (their README has no table of
optima: their DP's answer is the optimum compared with). Each input is
converted by bench/tarnawski_to_problem.py (colorClass as colocate groups,
maxCPUs as host devices, cpuLatency as host_compute_s, memory as bytes)
and solved with the default budgets. Their DP's answer is kept in WORKDIR
(<name>.dp.json) and reused; it is given DP_TIMEOUT seconds (env, default
600): "timeout" when it does not finish. Prints one markdown row per
input: nodes, IPUs, CPUs, colocate groups, their optimum, solve's
bottleneck, its certified bound and gap, solve's distance from theirs,
solve's seconds and the nodes it put on the host.
With --training, their training inputs too (their DP may take minutes).
"""
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def their_optimum(dp_exe, path, cache):
    if not os.path.exists(cache):
        try:
            with open(path) as f:
                out = subprocess.run(
                    [dp_exe], stdin=f, capture_output=True, text=True,
                    timeout=float(os.environ.get("DP_TIMEOUT", 600)),
                    check=True)
        except subprocess.TimeoutExpired:
            return None
        with open(cache + ".tmp", "w") as f:
            f.write(out.stdout)
        os.replace(cache + ".tmp", cache)
    with open(cache) as f:
        text = f.read()
    if not text.strip():
        return None
    result = json.loads(text)
    return max(d["load"] for d in result["fpgas"] + result.get("cpus", []))


def main():
    args = [a for a in sys.argv[1:] if a != "--training"]
    kinds = "*.json" if "--training" in sys.argv else "*inference.json"
    if len(args) not in (3, 4):
        sys.exit(__doc__)
    repo, autoshard, dp_exe = args[:3]
    work = args[3] if len(args) == 4 else "/tmp/tarnawski_compare"
    os.makedirs(work, exist_ok=True)
    print("| input | nodes | IPUs | CPUs | groups | theirs | solve | "
          "certified bound | gap | solve vs theirs | solve s | on host |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(
            repo, "throughput-inputs", "*", kinds))):
        name = "%s/%s" % (os.path.basename(os.path.dirname(path))[:5],
                          os.path.basename(path)[:-len(".json")])
        stem = os.path.join(work, name.replace("/", "_"))
        with open(path) as f:
            src = json.load(f)
        subprocess.run([sys.executable,
                        os.path.join(HERE, "tarnawski_to_problem.py"), path,
                        stem + ".problem.json"], check=True)
        with open(stem + ".problem.json") as f:
            groups = len(json.load(f).get("colocate", []))
        theirs = their_optimum(dp_exe, path, stem + ".dp.json")
        start = time.time()
        out = subprocess.run([autoshard, "solve", stem + ".problem.json",
                              "--report", "json", "-q"],
                             capture_output=True, text=True)
        seconds = time.time() - start
        if out.returncode not in (0, 3):
            row = ["refused: " + out.stderr.strip().splitlines()[-1]] + [""] * 5
        else:
            plan = json.loads(out.stdout)
            perf = plan.get("performance", plan)
            ours = perf["bottleneck_s"]
            bound = perf.get("certified_bound_s", 0)
            on_host = sum(c.get("num_nodes", 0)
                          for c in plan.get("ipus", []) if c.get("host"))
            row = ["%.6g" % ours, "%.6g" % bound,
                   "%.2f%%" % perf.get("certified_gap_percent", 0),
                   "%+.3f%%" % (100 * (ours / theirs - 1)) if theirs else "",
                   "%.2f" % seconds, str(on_host)]
        print("| %s | %d | %d | %d | %d | %s | %s |" % (
            name, len(src["nodes"]), src["maxFPGAs"], src.get("maxCPUs", 0),
            groups, "%.6g" % theirs if theirs else "timeout",
            " | ".join(row)), flush=True)


if __name__ == "__main__":
    main()
