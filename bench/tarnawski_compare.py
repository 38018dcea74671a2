#!/usr/bin/env python3
"""Compares `autoshard solve` with the DP of Tarnawski et al. (NeurIPS 2020,
github.com/msr-fiddle/dnn-partitioning, throughput-dp/dp.cpp) on their
throughput inference inputs (issue 31):

    bench/tarnawski_compare.py REPO AUTOSHARD DP_EXE [WORKDIR] [--training]

REPO is a checkout of dnn-partitioning; DP_EXE their DP built with
`g++ -O2 throughput-dp/dp.cpp -o dp.exe`. Each input is converted by
bench/tarnawski_to_problem.py (colorClass as colocate groups) and solved;
their DP runs on the input with maxCPUs set to 0 (problem files have no
host device, so their CPU is left out on both sides) and, for reference, as
published (their CPU included). Prints one markdown row per input: their
optimum without and with the CPU, solve's bottleneck, its certified bound
and gap, and solve's distance from their optimum without the CPU.
With --training, their training inputs too (their DP may take minutes).
"""
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def their_optimum(dp_exe, path):
    with open(path) as f:
        out = subprocess.run([dp_exe], stdin=f, capture_output=True, text=True,
                             timeout=1800, check=True)
    return max(d["load"] for d in json.loads(out.stdout)["fpgas"])


def main():
    args = [a for a in sys.argv[1:] if a != "--training"]
    kinds = "*.json" if "--training" in sys.argv else "*inference.json"
    if len(args) not in (3, 4):
        sys.exit(__doc__)
    repo, autoshard, dp_exe = args[:3]
    work = args[3] if len(args) == 4 else "/tmp/tarnawski_compare"
    os.makedirs(work, exist_ok=True)
    print("| input | nodes | IPUs | groups | theirs, no CPU | theirs, CPU | "
          "solve | certified bound | gap | solve vs theirs | solve s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(
            repo, "throughput-inputs", "*", kinds))):
        name = "%s/%s" % (os.path.basename(os.path.dirname(path))[:5],
                          os.path.basename(path)[:-len(".json")])
        stem = os.path.join(work, name.replace("/", "_"))
        with open(path) as f:
            src = json.load(f)
        nocpu = dict(src, maxCPUs=0)
        with open(stem + ".nocpu.json", "w") as f:
            json.dump(nocpu, f)
        subprocess.run([sys.executable,
                        os.path.join(HERE, "tarnawski_to_problem.py"), path,
                        stem + ".problem.json"], check=True)
        with open(stem + ".problem.json") as f:
            groups = len(json.load(f).get("colocate", []))
        theirs = their_optimum(dp_exe, stem + ".nocpu.json")
        theirs_cpu = their_optimum(dp_exe, path)
        start = time.time()
        out = subprocess.run([autoshard, "solve", stem + ".problem.json",
                              "--report", "json", "-q"],
                             capture_output=True, text=True)
        seconds = time.time() - start
        if out.returncode not in (0, 3):
            row = ["refused: " + out.stderr.strip().splitlines()[-1]] + [""] * 4
        else:
            plan = json.loads(out.stdout)
            ours = plan["bottleneck_s"]
            bound = plan.get("certified_bound_s", 0)
            row = ["%.6g" % ours, "%.6g" % bound,
                   "%.2f%%" % plan.get("certified_gap_percent", 0),
                   "%+.3f%%" % (100 * (ours / theirs - 1)), "%.2f" % seconds]
        print("| %s | %d | %d | %d | %.6g | %.6g | %s |" % (
            name, len(src["nodes"]), src["maxFPGAs"], groups, theirs,
            theirs_cpu, " | ".join(row)))


if __name__ == "__main__":
    main()
