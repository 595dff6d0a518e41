"""Engine ``dbfs``: breadth-first search partitioned by key hash over workers, spilling to disk,
checkpointed at every layer (docs/distributed.md).

Modules: ``keys`` (the 64-bit hash that picks a state's shard), ``shard`` (one partition's
states and its part of a layer), ``spill`` (sorted runs on disk, delayed duplicate detection),
``checkpoint`` (per-layer deltas and the manifest), ``executors`` (shards in this process or as
Ray actors), ``coordinator`` (the layer loop, limits, progress, the plan).  Ray is imported only
when a run asks for it.
"""

from __future__ import annotations

from .coordinator import solve

__all__ = ["solve"]
