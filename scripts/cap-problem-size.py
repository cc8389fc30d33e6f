#!/usr/bin/env python3
"""Caps the main size of imported problems for a GPU script: the largest tensor of each main size set at CAP
elements, by halving the biggest size symbol until it fits; the size's label then names what runs.
KernelBench's level-1 sizes move 1-13 GB a call, which a time-limited GPU call cannot tune (issue 27).

    scripts/cap-problem-size.py CAP problem.json...      (CAP 0: leave them as they are)
"""
import json
import sys


def largest(problem, size):
    symbols = {k: v for k, v in size.items() if k != "label"}
    out = 0
    for tensor in problem["inputs"] + problem["outputs"]:
        n = 1
        for dim in tensor["shape"]:
            n *= int(eval(str(dim), {}, dict(symbols)))  # the problem's own shape expressions
        out = max(out, n)
    return out


def main():
    cap = int(sys.argv[1])
    for path in sys.argv[2:]:
        if cap <= 0:
            continue
        problem = json.load(open(path))
        main_size = problem["sizes"]["main"][0]
        if largest(problem, main_size) <= cap:
            continue
        while largest(problem, main_size) > cap:
            key = max((k for k in main_size if k != "label"), key=lambda k: main_size[k])
            main_size[key] //= 2
        main_size["label"] = "x".join(str(main_size[k]) for k in problem["sizes"]["symbols"])
        json.dump(problem, open(path, "w"), indent=2)
        print("scaled", path, "to", main_size["label"])


if __name__ == "__main__":
    main()
