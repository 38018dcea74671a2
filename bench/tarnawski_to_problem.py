#!/usr/bin/env python3
"""Converts an input of Tarnawski et al., "Efficient Algorithms for Device
Placement of DNN Graph Operators" (NeurIPS 2020; github.com/msr-fiddle/
dnn-partitioning, throughput-inputs/*/*.json) to an autoshard problem file
(proto/problem.proto), for `autoshard solve`:

    bench/tarnawski_to_problem.py IN.json OUT.json [plain|tiles] [nocpu]

What it keeps: each node's fpgaLatency as its compute_s (0 kept as 0), each
edge's cost as its source's tensor's copy_s, copied through host
(COPY_MODEL_HOST: sent once, received once by each other device that reads
it, as their max-load counts it), maxFPGAs as num_ipus, and each node's
`size` as a weight of its own. Memory: `plain` (default) gives
capacity_bytes = maxSizePerFPGA counting weights only; `tiles` gives a
1-tile profile of 2^40 bytes that never binds (for builds without
capacity_bytes). The profile's link is 1e6 bytes/s, so a copy's bytes are
its cost x 1e6 (rounded: 1e-6 of the file's time unit).

Constraints (issue 31): each colorClass of two or more nodes becomes a
colocate group (its nodes on one device). Their CPU: maxCPUs becomes
num_host_devices, each node's cpuLatency its host_compute_s, and a node
not supportedOnFpga is host_only (the IPUs cannot run it); the host pays
no copies and has no memory limit, as in their model (a copy between the
host and an accelerator is the accelerator's time). With `nocpu` as a
fourth argument the CPU is left out (num_host_devices 0), as before.
Training inputs colocate each backward node with its forward one; their
backward edges run in the forward direction, so monotone splits keep them
(bert24_training: 41.7458, their DP's).
"""
import json
import os
import sys


def convert(src, mode, cpu=True):
    cpus = int(src.get("maxCPUs", 0)) if cpu else 0
    index = {n["id"]: i for i, n in enumerate(src["nodes"])}
    nodes, weights = [], []
    for n in src["nodes"]:
        node = {"name": "%s#%d" % (n.get("name", n["id"]), n["id"]),
                "compute_s": float(n["fpgaLatency"])}
        if cpus > 0:
            node["host_compute_s"] = float(n["cpuLatency"])
            if not n.get("supportedOnFpga", 1):
                node["host_only"] = True
        if n.get("size", 0) > 0:
            node["weights"] = [len(weights)]
            weights.append({"name": "size%d" % n["id"], "bytes": int(n["size"])})
        nodes.append(node)
    tensors = {}
    for e in src["edges"]:
        s, d = index[e["sourceId"]], index[e["destId"]]
        t = tensors.setdefault(
            s, {"producer": s, "consumers": [], "copy_s": float(e["cost"])})
        if d not in t["consumers"]:
            t["consumers"].append(d)
    unsupported = [n["id"] for n in src["nodes"]
                   if not n.get("supportedOnFpga", 1)]
    if unsupported and cpus == 0:
        sys.exit("node %d is not supportedOnFpga and there is no CPU to run "
                 "it" % unsupported[0])
    classes = {}
    for i, n in enumerate(src["nodes"]):
        if "colorClass" in n:
            classes.setdefault(n["colorClass"], []).append(i)
    colocate = [{"name": "color%d" % c, "nodes": members}
                for c, members in sorted(classes.items()) if len(members) > 1]
    profile = {"name": "tarnawski", "tiles_per_ipu": 1,
               "bytes_per_tile": 1 << 40, "peak_fp16_flops_per_s": 1e12,
               "peak_fp32_flops_per_s": 1e12, "link_bytes_per_s": 1e6,
               "available_memory_proportion": 1, "op_overhead_s": 0,
               "grain_bytes": 1,
               "op_classes": [{"op_class": "other", "efficiency": 1}]}
    problem = {"nodes": nodes, "tensors": list(tensors.values()),
               "weights": weights, "num_ipus": src["maxFPGAs"],
               "device_profile": profile, "copy_model": "COPY_MODEL_HOST"}
    if colocate:
        problem["colocate"] = colocate
    if cpus > 0:
        problem["num_host_devices"] = cpus
    if mode == "plain":
        problem["capacity_bytes"] = int(src["maxSizePerFPGA"])
        problem["memory_counts"] = "MEMORY_COUNTS_WEIGHTS"
    return problem


def main():
    args = [a for a in sys.argv[1:] if a != "nocpu"]
    if len(args) not in (2, 3) or (len(args) == 3 and
                                   args[2] not in ("plain", "tiles")):
        sys.exit(__doc__)
    with open(args[0]) as f:
        problem = convert(json.load(f), args[2] if len(args) == 3
                          else "plain", cpu="nocpu" not in sys.argv)
    tmp = args[1] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(problem, f)
    os.replace(tmp, args[1])


if __name__ == "__main__":
    main()
