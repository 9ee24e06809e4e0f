#!/usr/bin/env python3
"""Whole-process timing for meshcap's benchmarks: runs the given commands alternately (A, B, A, B, ...)
so machine noise hits them alike, and reports each one's median wall time and median peak RSS (from wait4).

stdin: {"runs": N, "warmup": W, "commands": [{"name": ..., "argv": [...], "env": {...}, "stdin": "...",
         "setup": [argv...] | null, "teardown": [argv...] | null}]}
stdout: {"<name>": {"wall_ms": median, "rss_kib": median, "walls": [...]}}
Setup/teardown commands run outside the timed region (e.g. `ip netns add` / `ip netns del`).
"""
import json
import os
import statistics
import subprocess
import sys
import time


def run_once(cmd):
    if cmd.get("setup"):
        subprocess.run(cmd["setup"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        env = dict(os.environ, **cmd.get("env", {}))
        stdin_data = cmd.get("stdin")
        start = time.perf_counter()
        proc = subprocess.Popen(cmd["argv"], env=env, stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if stdin_data is not None:
            try:
                proc.stdin.write(stdin_data.encode())
                proc.stdin.close()
            except BrokenPipeError:
                pass  # a program may answer without reading all of its stdin
        _, status, usage = os.wait4(proc.pid, 0)
        wall = (time.perf_counter() - start) * 1000
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise SystemExit(f"{cmd['name']} exited {code}: {' '.join(cmd['argv'])}")
        return wall, usage.ru_maxrss
    finally:
        if cmd.get("teardown"):
            subprocess.run(cmd["teardown"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    spec = json.load(sys.stdin)
    cmds = spec["commands"]
    for _ in range(spec.get("warmup", 2)):
        for c in cmds:
            run_once(c)
    samples = {c["name"]: ([], []) for c in cmds}
    for _ in range(spec["runs"]):
        for c in cmds:
            wall, rss = run_once(c)
            samples[c["name"]][0].append(wall)
            samples[c["name"]][1].append(rss)
    out = {name: {"wall_ms": statistics.median(w), "rss_kib": statistics.median(r), "walls": w} for name, (w, r) in samples.items()}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
