#!/usr/bin/env python3
"""kernelloop-cli model's helper: captures a model's operator graph at its own sizes, and writes problems
from chosen operators.

    python3 model_capture.py REQUEST.json OUT_DIR        (run by core/model_capture/capture_run.cpp)

REQUEST {"action": "capture", "file", "seed", "eval"}:
    {"ok": true, "model": {...}, "capture": {"method", "note"}, "operators": [...], "fusion": [[op ids]]}
REQUEST {"action": "problems", "file", "seed", "eval", "groups": [{"name", "ops": [op ids]}]}:
    {"ok": true, "capture": {...}, "problems": [...], "refused": [{"name", "category", "message"}]}
or {"ok": false, "error": {"category", "message"}}. The categories are kl::Error's "model.<category>".
"""
import json
import os
import sys
import time
import traceback


def _meta_list(torch, value):
    from model_load import flat_tensors
    from model_record import meta
    tensors, _ = flat_tensors(torch, value)
    return [meta(torch, t) for t in tensors]


def _model_reply(torch, loaded, output, forward_ms):
    return {"name": os.path.splitext(os.path.basename(loaded.path))[0], "file": loaded.path, "spec": loaded.spec,
            "weights": loaded.weights, "mode": loaded.mode, "seed": loaded.seed, "torch": torch.__version__,
            "inputs": [m for item in loaded.inputs for m in _meta_list(torch, item)],
            "outputs": _meta_list(torch, output), "forward_ms": forward_ms,
            "parameters": int(sum(p.numel() for p in loaded.model.parameters()))}


def _forward_ms(loaded):
    """CPU call time of one forward pass (median of three after one warm-up): context, not a GPU figure."""
    times = []
    for _ in range(4):
        start = time.perf_counter()
        loaded.forward(loaded.model, loaded.inputs)
        times.append((time.perf_counter() - start) * 1000.0)
    return sorted(times[1:])[1]


def capture(torch, request):
    from model_load import LoadedModel
    from model_record import Captured
    loaded = LoadedModel(torch, request["file"], int(request.get("seed", 0)), request.get("eval"))
    captured = Captured(torch, loaded)
    return loaded, captured


def action_capture(torch, request):
    loaded, captured = capture(torch, request)
    return {"ok": True, "model": _model_reply(torch, loaded, captured.model_output, _forward_ms(loaded)),
            "capture": {"method": captured.method, "note": captured.note},
            "operators": [op.reply() for op in captured.ops], "fusion": captured.chains}


def action_problems(torch, request):
    import model_reference as mr
    from model_load import Refusal
    loaded, captured = capture(torch, request)
    if request.get("expect_method") and request["expect_method"] != captured.method:
        raise Refusal("capture-changed", "the model was captured by %s before and by %s now"
                      % (request["expect_method"], captured.method))
    records = {op.id: op for op in captured.ops}
    groups = request["groups"]
    keep = set()
    if captured.fx is not None:
        nodes = {n.name: n for n in captured.fx.gm.graph.nodes}
        for g in groups:
            for op_id in g["ops"]:
                if op_id in nodes:
                    keep.add(op_id)
                    keep.update(x.name for x in nodes[op_id].all_input_nodes)
    else:
        keep = {op_id for g in groups for op_id in g["ops"]}
    _, values, _ = captured.run(keep)
    problems, refused = [], []
    for g in groups:
        try:
            missing = [i for i in g["ops"] if i not in records]
            if missing:
                raise Refusal("unknown-operator", "no operator %s in this capture" % ", ".join(missing))
            ops = [records[i] for i in g["ops"]]
            random = [r for o in ops for r in o.random]
            if random:
                raise Refusal("random-ops", "draws random numbers (%s): no kernel can match it"
                              % ", ".join(sorted(set(random))))
            if not any(i.get("role") == "activation" for o in ops for i in o.inputs):
                raise Refusal("no-inputs", "makes its tensors from nothing (no activation inputs): nothing to "
                                           "compute faster")
            if captured.fx is not None:
                draft = mr.fx_problem(torch, captured, g["ops"], g["name"], values, records)
            elif ops[0].aten is not None:
                draft = mr.aten_problem(torch, captured, ops[0], g["name"], values[ops[0].id])
            else:
                draft = mr.module_problem(torch, captured, ops[0], g["name"], values[ops[0].id])
            problems.append(mr.problem_reply(torch, draft, mr.check_reference(torch, draft)))
        except Refusal as refusal:
            refused.append({"name": g["name"], "category": refusal.category, "message": refusal.message})
    return {"ok": True, "capture": {"method": captured.method, "note": captured.note}, "problems": problems,
            "refused": refused}


def main():
    request_path, out_dir = sys.argv[1], sys.argv[2]
    sys.setrecursionlimit(10000)
    from model_load import Refusal
    try:
        with open(request_path) as handle:
            request = json.load(handle)
        try:
            import torch
        except Exception as error:  # noqa: BLE001
            raise Refusal("missing-package", "needs PyTorch: %s cannot import torch (%s); set KL_PYTHON to a "
                                             "Python with PyTorch" % (sys.executable, error))
        try:
            import torch.fx  # noqa: F401
        except Exception as error:  # noqa: BLE001
            raise Refusal("missing-package", "needs torch.fx (PyTorch 1.8 or later): %s" % error)
        action = request.get("action")
        if action == "capture":
            reply = action_capture(torch, request)
        elif action == "problems":
            reply = action_problems(torch, request)
        elif action == "check":
            import model_check
            reply = model_check.action_check(torch, request)
        else:
            raise Refusal("bad-request", "unknown action %r" % action)
    except Refusal as refusal:
        reply = {"ok": False, "error": {"category": refusal.category, "message": refusal.message}}
    except MemoryError:
        reply = {"ok": False, "error": {"category": "out-of-memory", "message": "ran out of memory"}}
    except Exception as error:  # noqa: BLE001 - the user's model failing in a way we did not foresee
        reply = {"ok": False, "error": {"category": "forward-failed", "message": "%s: %s" % (type(error).__name__,
                                                                                           error),
                                        "traceback": traceback.format_exc(limit=8)}}
    with open(os.path.join(out_dir, "reply.json"), "w") as out:
        json.dump(reply, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
