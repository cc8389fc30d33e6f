"""Runs a problem folder's reference.py on its own, on inputs drawn as problem.json says (run by
test_model_capture): the reference must load without the model capture and give outputs of the declared
shapes, finite. Prints "ok N" with N outputs."""
import importlib.util
import json
import sys

import torch

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64,
          "i8": torch.int8, "u8": torch.uint8, "i32": torch.int32, "i64": torch.int64}


def draw(spec):
    shape = [int(s) for s in spec["shape"]]
    d = spec.get("distribution", {"kind": "normal", "mean": 0.0, "std": 1.0})
    if d["kind"] == "integers":
        return torch.randint(int(d["low"]), int(d["high"]) + 1, shape).to(DTYPES[spec["dtype"]])
    if d["kind"] == "uniform":
        return torch.empty(shape).uniform_(d["low"], d["high"]).to(DTYPES[spec["dtype"]])
    return (torch.randn(shape) * d["std"] + d["mean"]).to(DTYPES[spec["dtype"]])


def main(folder):
    problem = json.load(open(folder + "/problem.json"))
    spec = importlib.util.spec_from_file_location("reference_under_test", folder + "/reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(3)
    with torch.no_grad():
        out = module.reference(**{t["name"]: draw(t) for t in problem["inputs"]})
    outs = list(out) if isinstance(out, tuple) else [out]
    want = [[int(s) for s in t["shape"]] for t in problem["outputs"]]
    got = [list(o.shape) for o in outs]
    if got != want:
        raise SystemExit("outputs %s, problem.json says %s" % (got, want))
    for o in outs:
        if o.is_floating_point() and not bool(torch.isfinite(o).all()):
            raise SystemExit("an output is not finite")
    print("ok", len(outs))


if __name__ == "__main__":
    main(sys.argv[1])
