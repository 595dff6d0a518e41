"""Layer-batched breadth-first search; a 0-1 BFS when some actions cost 0.

Layer g holds every state at distance exactly g.  Zero-cost successors join
the layer being expanded (they are at the same distance); cost-1 successors
are collected and become layer g+1 once layer g is closed under zero-cost
moves.  So the first layer holding a goal state gives the optimum, for
unit and for 0/1 costs alike -- the property Hua Rong Dao's "moves" metric
(consecutive steps of one piece are free) needs.

Per layer the work is a handful of compiled calls over whole arrays, never a
Python loop over states: narrow frontiers over hundreds of layers stay cheap.
"""

from __future__ import annotations

import numpy as np

from ..encodings.kernel import Kernel
from ..lang.errors import OptionError
from .plan import chain, concretise
from .result import Clock, Limits, Result
from .visited import Growable, StateTable

CHUNK = 1 << 16


def solve(kernel: Kernel, limits: Limits, enumerate_all: bool = False) -> Result:
    task = kernel.task
    if task.cost_kind == "general":
        raise OptionError("engine bfs is exact for unit and 0/1 action costs only; "
                          "this model has larger costs: use ucs or astar")
    clock = Clock(limits)
    table = StateTable(kernel.n_words)
    parent = Growable(np.int64, -1)
    action = Growable(np.int64, -1)
    root_ids, _ = table.insert(kernel.canon_pack(kernel.init_state()))
    frontier = root_ids
    layers: list[int] = []
    expanded = generated = 0
    goal_id = -1
    goal_cost: int | None = None
    g = 0
    status = None

    def remember(ids: np.ndarray, new: np.ndarray, par: np.ndarray, act: np.ndarray) -> np.ndarray:
        fresh = ids[new]
        parent.ensure(table.size)
        action.ensure(table.size)
        parent.a[fresh] = par[new]
        action.a[fresh] = act[new]
        return fresh

    while frontier.size and status is None:
        layer_size = frontier.size
        work = frontier
        cand_k, cand_p, cand_a = [], [], []
        while work.size and status is None:
            nxt: list[np.ndarray] = []
            for lo in range(0, work.size, CHUNK):
                part = work[lo: lo + CHUNK]
                S = kernel.unpack(table.keys[part])
                if goal_cost is None:
                    hit = np.flatnonzero(kernel.goal(S))
                    if hit.size:
                        goal_id, goal_cost = int(part[hit[0]]), g
                        if not enumerate_all:
                            status = "optimal"
                            break
                if clock.out_of_time() or clock.too_many(table.size):
                    status = "limit"
                    break
                succ, par, act = kernel.expand(S)
                expanded += part.size
                generated += succ.shape[0]
                K = kernel.canon_pack(succ)
                zero = kernel.costs[act] == 0
                if zero.any():
                    ids, new = table.insert(K[zero])
                    fresh = remember(ids, new, part[par[zero]], act[zero])
                    nxt.append(fresh)
                one = ~zero
                cand_k.append(K[one])
                cand_p.append(part[par[one]])
                cand_a.append(act[one])
                clock.note_bytes(table.nbytes + parent.a.nbytes + action.a.nbytes
                                 + sum(k.nbytes for k in cand_k) + succ.nbytes)
            else:
                work = np.concatenate(nxt) if nxt else np.zeros(0, dtype=np.int64)
                layer_size += work.size
                continue
            break
        if status is not None:
            break
        layers.append(layer_size)
        if cand_k:
            ids, new = table.insert(np.concatenate(cand_k))
            frontier = remember(ids, new, np.concatenate(cand_p), np.concatenate(cand_a))
        else:
            frontier = np.zeros(0, dtype=np.int64)
        g += 1

    stats = dict(expanded=expanded, generated=generated, states=table.size, layers=layers)
    if enumerate_all and status is None:
        stats["reachable"] = table.size
        stats["configurations"] = _configurations(kernel, table)
    result = Result(status or ("optimal" if goal_cost is not None else "unsolvable"), "bfs",
                    stats=clock.stats(**stats))
    if goal_cost is not None and result.status != "limit":
        ids, acts = chain(parent.a, action.a, goal_id)
        result.plan = concretise(kernel, table.keys[np.array(ids)], acts)
        result.cost = goal_cost
        result.status = "optimal"
        result.proof = "bfs layers (exhaustive below the optimum)"
    elif result.status == "unsolvable":
        result.proof = "reachable states exhausted"
    return result


def _configurations(kernel: Kernel, table: StateTable) -> int:
    """Distinct reachable states once bookkeeping (aux) variables are ignored."""
    if not any(v.aux for v in kernel.task.variables):
        return table.size
    K = table.keys[: table.size] & kernel.layout.config_mask
    return int(np.unique(K, axis=0).shape[0])
