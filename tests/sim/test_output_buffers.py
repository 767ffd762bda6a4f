"""A batch's outputs are written into memory reused from earlier batches (`arrays.ReusedBuffers`), never
into memory a caller still reads: results kept are left as they were, results dropped free it."""

from __future__ import annotations

import numpy as np

from console.bench.sim import scaled_overrides
from console.sim.arrays import ReusedBuffers
from console.sim.engine import Simulation
from console.sim.scenario_loader import load_scenario


def test_a_buffer_comes_back_only_when_no_view_of_it_is_alive() -> None:
    pool = ReusedBuffers(np.float64, room=100)
    first = pool.take((4, 5))
    first[:] = 7.0
    kept = first[1]  # a caller still reading the first batch
    del first
    second = pool.take((4, 5))
    assert not np.shares_memory(second, kept)
    second[:] = 3.0
    assert np.all(kept == 7.0)
    del second  # nobody reads the second batch any more: its memory comes back
    third = pool.take((2, 10))
    third[:] = 5.0
    assert np.all(kept == 7.0)
    assert any(np.shares_memory(third, buffer) for buffer in pool._buffers)


def test_results_kept_across_batches_equal_results_copied_as_they_come() -> None:
    scenario = load_scenario("thundering-herd", scaled_overrides(100_000))
    kept = list(Simulation(scenario, keep_history=False).run(400))
    sim = Simulation(scenario, keep_history=False)
    copied = [(r.node_out.copy(), r.connections.copy(), r.bins.copy()) for r in sim.run(400)]
    batches = len({id(r.node_out.base) for r in kept})
    assert batches > 3  # several kernel calls, so that memory could have been reused
    assert len(sim._node_outs._buffers) <= ReusedBuffers.KEPT  # and was: no buffer a batch
    for result, (node_out, connections, bins) in zip(kept, copied, strict=True):
        assert np.array_equal(result.node_out, node_out), result.time_s
        assert np.array_equal(result.connections, connections), result.time_s
        assert np.array_equal(result.bins, bins), result.time_s
