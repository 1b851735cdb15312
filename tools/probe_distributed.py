#!/usr/bin/env python
"""Measure what Dynamo does with collectives, rank-dependent branches and DDP/FSDP
wrapping on a two-process CPU group (gloo backend), on the installed torch.

Ground truth for the PTC8xx distributed rules: each case is a snippet written to a
file and imported in both ranks, so breaks are reported at real lines. For each case
and rank the probe records

* the graph breaks (``graph_breaks`` log artifact, via :mod:`pt2lint.confirm.dynamo`),
* the graphs Dynamo built (a counting backend) and the collective ops in them
  (``_c10d_functional.*`` when a ``dist.*`` call was traced as a functional collective),
* whether ``fullgraph=True`` compiles, and the first line of its error if not,

and, for the wrapping cases, how many graphs a DDP/FSDP model compiles into and
whether its gradients agree across ranks after ``backward``.

Usage (repository root, torch installed; takes about a minute on two cores)::

    python tools/probe_distributed.py                      # table on stdout
    python tools/probe_distributed.py --write bench/distributed-2.13.md --json bench/distributed-2.13.json

Nothing here is imported by pt2lint; it needs torch with ``torch.distributed``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import textwrap
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

WORLD = 2

#: name -> (snippet defining ``Model``, note). Each model is called on ``torch.ones(4, 8)``.
CASES = {
    "all_reduce": '''
import torch
import torch.distributed as dist
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        y = x * 2
        dist.all_reduce(y)
        return y + 1
''',
    "all_reduce_async": '''
import torch
import torch.distributed as dist
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        y = x * 2
        work = dist.all_reduce(y, async_op=True)
        work.wait()
        return y + 1
''',
    "broadcast": '''
import torch
import torch.distributed as dist
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        y = x * 2
        dist.broadcast(y, src=0)
        return y + 1
''',
    "barrier": '''
import torch
import torch.distributed as dist
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        y = x * 2
        dist.barrier()
        return y + 1
''',
    "all_gather_into_tensor": '''
import torch
import torch.distributed as dist
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        out = x.new_empty((x.shape[0] * dist.get_world_size(),) + tuple(x.shape[1:]))
        dist.all_gather_into_tensor(out, x)
        return out + 1
''',
    "functional_all_reduce": '''
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        y = funcol.all_reduce(x * 2, "sum", dist.group.WORLD)
        return y + 1
''',
    "rank_branch": '''
import torch
import torch.distributed as dist
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        if dist.get_rank() == 0:
            return x * 2
        return torch.sin(x) + 1
''',
    "world_size_scale": '''
import torch
import torch.distributed as dist
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return x / dist.get_world_size()
''',
    "is_initialized_guard": '''
import torch
import torch.distributed as dist
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        if dist.is_available() and dist.is_initialized():
            return x * dist.get_world_size()
        return x
''',
}

#: Every other collective with an ``async_op`` parameter, one call each (graph breaks only):
#: the split between those Dynamo rewrites and those it does not (``collectives`` in
#: pt2lint/data/dynamo_facts.json) is checked call by call.
SWEEP = {
    "reduce": "dist.reduce(y, dst=0)",
    "scatter": "dist.scatter(y, [y.clone() for _ in range(dist.get_world_size())] if dist.get_rank() == 0 else None, src=0)",
    "gather": "dist.gather(y, [torch.empty_like(y) for _ in range(dist.get_world_size())] if dist.get_rank() == 0 else None, dst=0)",
    "all_to_all": "dist.all_to_all([torch.empty_like(y) for _ in range(dist.get_world_size())], [y.clone() for _ in range(dist.get_world_size())])",
    "reduce_scatter": "dist.reduce_scatter(y, [y.clone() for _ in range(dist.get_world_size())])",
    "all_gather": "dist.all_gather([torch.empty_like(y) for _ in range(dist.get_world_size())], y)",
    "all_reduce_coalesced": "dist.all_reduce_coalesced([y])",
    "all_gather_coalesced": "dist.all_gather_coalesced([[torch.empty_like(y) for _ in range(dist.get_world_size())]], [y])",
    "reduce_scatter_tensor": "dist.reduce_scatter_tensor(torch.empty_like(y)[: y.shape[0] // dist.get_world_size()], y)",
    "all_to_all_single": "dist.all_to_all_single(torch.empty_like(y), y)",
}
for _name, _call in SWEEP.items():
    CASES[f"sweep_{_name}"] = f"""
import torch
import torch.distributed as dist
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        y = x * 2
        {_call}
        return y + 1
"""


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:240]


def _counting_backend(store: list):
    import torch

    def backend(gm, example_inputs):
        ops = []
        for node in gm.graph.nodes:
            if node.op == "call_function":
                # an OpOverload prints as its namespace and name (``_c10d_functional.all_reduce_.default``)
                t = node.target
                target = str(t) if isinstance(t, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)) else str(getattr(t, "__name__", t))
                ops.append(target)
        store.append(ops)
        return gm.forward

    return backend


def _measure_case(name: str, path: Path, rank: int) -> dict:
    import torch
    import torch._dynamo

    from pt2lint.confirm import dynamo

    module = _load(path, f"dist_case_{name}")
    x = torch.ones(4, 8)
    out: dict = {"case": name, "rank": rank}
    try:
        out["eager"] = module.Model()(x.clone()).sum().item()
    except Exception as exc:  # noqa: BLE001 - recorded
        out["eager"] = _first_line(exc)
    try:
        breaks = dynamo.graph_breaks(module.Model(), (x.clone(),))
        out["breaks"] = [[b.lineno if b.filename == str(path) else None, b.reason, b.gb_type] for b in breaks]
    except Exception as exc:  # noqa: BLE001
        out["breaks"] = "error: " + _first_line(exc)
    graphs: list = []
    torch._dynamo.reset()
    try:
        res = torch.compile(module.Model(), backend=_counting_backend(graphs))(x.clone())
        out["compiled"] = res.sum().item()
    except Exception as exc:  # noqa: BLE001
        out["compiled"] = "error: " + _first_line(exc)
    out["graphs"] = len(graphs)
    out["graph_ops"] = graphs
    out["collective_ops"] = sorted({op for g in graphs for op in g if "c10d" in op})
    torch._dynamo.reset()
    try:
        torch.compile(module.Model(), backend="eager", fullgraph=True)(x.clone())
        out["fullgraph"] = "ok"
    except Exception as exc:  # noqa: BLE001
        out["fullgraph"] = _first_line(exc)
    torch._dynamo.reset()
    return out


def _grads_agree(model) -> bool:
    import torch
    import torch.distributed as dist

    flat = torch.cat([p.grad.reshape(-1) for p in model.parameters() if p.grad is not None])
    gathered = [torch.empty_like(flat) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, flat)
    return all(torch.allclose(gathered[0], g) for g in gathered)


def _stack(seed: int):
    """A model whose ``forward`` is user code (Dynamo starts no frame in torch's own files,
    so a bare ``nn.Sequential`` inside DDP would show nothing compiled at all)."""
    import torch
    from torch import nn

    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            # three 512x512 layers of 1 MiB each: with bucket_cap_mb=1 DDP puts them in separate buckets
            self.layers = nn.Sequential(
                nn.Linear(8, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 8),
            )

        def forward(self, x):
            return self.layers(x)

    torch.manual_seed(seed)
    return Stack()


def _measure_wrapping(rank: int) -> list:
    import torch
    import torch._dynamo
    from torch.nn.parallel import DistributedDataParallel as DDP

    results = []
    x = torch.randn(16, 8, generator=torch.Generator().manual_seed(rank))

    def run(label, build):
        graphs: list = []
        torch._dynamo.reset()
        entry = {"case": label, "rank": rank}
        try:
            model, compiled = build(_counting_backend(graphs))
            from torch._dynamo.utils import counters

            counters.clear()
            loss = compiled(x).sum()
            loss.backward()
            entry["graphs"] = len(graphs)
            # DDPOptimizer and FSDP compile through their own wrappers: count what Dynamo captured too
            entry["dynamo_unique_graphs"] = int(counters["stats"]["unique_graphs"])
            entry["ddp_split_graphs"] = int(sum(counters["ddp"].values())) if "ddp" in counters else 0
            entry["grads_agree"] = _grads_agree(model) if "FSDP" not in label else "n/a (sharded)"
        except Exception as exc:  # noqa: BLE001
            entry["error"] = _first_line(exc)
            entry["graphs"] = len(graphs)
        torch._dynamo.reset()
        results.append(entry)

        print(f"rank {rank}: wrapping", file=sys.stderr, flush=True)
    run("compile(DDP(model))", lambda be: (lambda m: (m, torch.compile(m, backend=be)))(DDP(_stack(0), bucket_cap_mb=1)))
    run("DDP(compile(model))", lambda be: (lambda m: (m, m))(DDP(torch.compile(_stack(0), backend=be), bucket_cap_mb=1)))
    try:
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

        for orig in (False, True):
            run(
                f"compile(FSDP(model, use_orig_params={orig}))",
                lambda be, orig=orig: (lambda m: (m, torch.compile(m, backend=be)))(
                    FSDP(_stack(0), use_orig_params=orig, device_id=torch.device("cpu"))
                ),
            )
    except Exception as exc:  # noqa: BLE001
        results.append({"case": "FSDP", "rank": rank, "error": _first_line(exc)})
    return results


def _worker(rank: int, init: str, case_dir: str, result_dir: str) -> None:
    import torch.distributed as dist

    import datetime

    # A case that leaves the ranks out of step (a collective one rank skips) must fail, not hang.
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=WORLD, timeout=datetime.timedelta(seconds=60))
    rows = []
    try:
        for name in CASES:
            print(f"rank {rank}: {name}", file=sys.stderr, flush=True)
            try:
                rows.append(_measure_case(name, Path(case_dir) / f"{name}.py", rank))
            except Exception as exc:  # noqa: BLE001
                rows.append({"case": name, "rank": rank, "error": _first_line(exc), "trace": traceback.format_exc()[-800:]})
            dist.barrier()
        rows += _measure_wrapping(rank)
    finally:
        Path(result_dir, f"rank{rank}.json").write_text(json.dumps(rows, indent=1))
        dist.destroy_process_group()


def _table(rows0: list, rows1: list) -> str:
    import torch

    lines = [
        f"Measured by tools/probe_distributed.py on torch {torch.__version__}, CPU, gloo, world size {WORLD}.",
        "",
        "| case | rank | graphs | graph breaks (line: type) | collective ops in the graphs | fullgraph=True |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows0 + rows1:
        if "graph_ops" not in r:
            continue
        br = r["breaks"] if isinstance(r["breaks"], str) else "; ".join(f"{ln}: {reason} ({gb})" for ln, reason, gb in r["breaks"]) or "none"
        lines.append(f"| {r['case']} | {r['rank']} | {r['graphs']} | {br} | {', '.join(r['collective_ops']) or '-'} | {r['fullgraph']} |")
    lines += ["", "Different graphs per rank (op lists differ between rank 0 and rank 1):", ""]
    by = {(r["case"], r["rank"]): r for r in rows0 + rows1 if "graph_ops" in r}
    for name in CASES:
        a, b = by.get((name, 0)), by.get((name, 1))
        if a and b:
            lines.append(f"- {name}: {'yes' if a['graph_ops'] != b['graph_ops'] else 'no'}")
    lines += [
        "",
        "| wrapping | rank | graphs compiled by the backend | Dynamo unique graphs | gradients agree across ranks | error |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows0 + rows1:
        if "graph_ops" in r:
            continue
        lines.append(
            f"| {r['case']} | {r['rank']} | {r.get('graphs', '-')} | {r.get('dynamo_unique_graphs', '-')} | "
            f"{r.get('grads_agree', '-')} | {r.get('error', '')} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", help="write the markdown table to this file")
    parser.add_argument("--json", help="write the raw per-rank results to this file")
    opts = parser.parse_args(argv)
    import torch.multiprocessing as mp

    from pt2lint.atomic import atomic_write

    with tempfile.TemporaryDirectory() as tmp:
        case_dir = Path(tmp, "cases")
        case_dir.mkdir()
        for name, code in CASES.items():
            (case_dir / f"{name}.py").write_text(textwrap.dedent(code).lstrip("\n"))
        init = "file://" + str(Path(tmp, "rendezvous"))
        mp.spawn(_worker, args=(init, str(case_dir), tmp), nprocs=WORLD, join=True)
        rows = [json.loads(Path(tmp, f"rank{r}.json").read_text()) for r in range(WORLD)]
    table = _table(rows[0], rows[1])
    if opts.write:
        atomic_write(opts.write, table.encode())
    if opts.json:
        atomic_write(opts.json, (json.dumps(rows, indent=1) + "\n").encode())
    sys.stdout.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
