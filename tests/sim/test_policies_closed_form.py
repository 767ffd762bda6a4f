"""Every backoff policy draws from its closed form (issue #2, section 5 "Fidelity").

Statistical tests use fixed seeds, so they are deterministic; the significance level says how unlikely a
correct policy would be to fail with a fresh seed. Hard bounds (ranges, points) are checked on every draw
and as hypothesis properties.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from console.errors import InputError
from console.policies import (
    POLICIES,
    Backoff,
    Decorrelated,
    EqualJitter,
    Exponential,
    Fixed,
    FullJitter,
    Grpc,
    Phoenix,
    SocketIO,
    make_policy,
)
from console.sim import kernel as k
from console.sim.engine import Simulation
from console.sim.scenario_loader import build_scenario

#: Significance level of every distribution test: a correct policy fails one in a thousand fresh seeds.
ALPHA = 1e-3
DRAWS = 20_000
PROPERTY = settings(max_examples=150, deadline=None, derandomize=True)


def draws(policy, state: int, n: int = DRAWS, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([policy.next_delay_ms(state, rng) for _ in range(n)])


def assert_uniform(sample: np.ndarray, low: float, high: float) -> None:
    assert sample.min() >= low and sample.max() < high + 1e-9
    result = stats.kstest(sample, stats.uniform(loc=low, scale=high - low).cdf)
    assert result.pvalue > ALPHA, (low, high, result)


# --- full jitter -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("state", [0, 1, 3, 5, 9])
def test_full_jitter_is_uniform_up_to_the_capped_exponential(state: int) -> None:
    policy = FullJitter()
    assert_uniform(draws(policy, state), 0.0, min(policy.max_ms, policy.base_ms * 2.0**state))


@PROPERTY
@given(
    base=st.floats(1, 5000),
    cap=st.floats(1, 120_000),
    state=st.integers(0, 40),
    seed=st.integers(0, 2**32),
)
def test_full_jitter_never_leaves_its_window(base: float, cap: float, state: int, seed: int) -> None:
    policy = make_policy("full_jitter", {"base_ms": min(base, cap), "max_ms": cap})
    delays = draws(policy, state, n=50, seed=seed)
    assert (delays >= 0).all() and (delays <= min(cap, policy.base_ms * 2.0**state) + 1e-9).all()


# --- Socket.IO (backo2) ----------------------------------------------------------------------------------


def backo2_band(rand: float, ms: float, jitter: float) -> tuple[float, float]:
    """The band backo2 puts a draw in, straight from its source: one rand used for size and sign."""
    decile = math.floor(rand * 10)
    lo_dev = math.floor(decile / 10 * jitter * ms)
    hi_dev = math.floor((decile + 1) / 10 * jitter * ms)
    return (ms - hi_dev, ms - lo_dev) if decile % 2 == 0 else (ms + lo_dev, ms + hi_dev)


def test_socketio_first_reconnect_falls_in_ten_50ms_bands_with_50ms_gaps() -> None:
    delays = draws(SocketIO(), 0)
    bands = [(550.0 + 100 * j, 600.0 + 100 * j) for j in range(10)]
    assert sorted({backo2_band(r / 10 + 0.05, 1000.0, 0.5) for r in range(10)}) == bands
    band_of = np.floor((delays - 500.0) / 100.0).astype(int)
    assert ((band_of >= 0) & (band_of <= 9)).all()
    offset = delays - 500.0 - 100.0 * band_of
    # Inside a band (50..100 ms past its century), never in the 50 ms gap before it.
    assert (offset >= 50.0).all() and (offset <= 100.0).all()
    counts = np.bincount(band_of, minlength=10)
    assert stats.chisquare(counts).pvalue > ALPHA, counts  # each band holds a tenth
    # Within a band: uniform (the deviation is floor(rand × 500), rand uniform inside its decile).
    assert stats.kstest((offset - 50.0) / 50.0, "uniform").pvalue > ALPHA


def test_socketio_waits_exactly_the_cap_from_attempt_four() -> None:
    policy = SocketIO()
    at_cap = {n: float(np.mean(draws(policy, n, n=5000) == policy.max_ms)) for n in range(7)}
    assert at_cap[4] == at_cap[5] == at_cap[6] == 1.0
    # Attempt 3: ms = 8 s and deviations step 400 ms a decile, so only decile 8 (subtracting 3.2–3.6 s)
    # falls below the cap; the other nine tenths wait exactly 5 s.
    share = 0.9
    assert at_cap[3] < 1.0
    assert stats.binomtest(round(at_cap[3] * 5000), 5000, share).pvalue > ALPHA
    assert at_cap[0] == at_cap[1] == 0.0


@PROPERTY
@given(rand=st.floats(0, 1, exclude_max=True), state=st.integers(0, 6))
def test_socketio_segments_cover_backo2s_bands(rand: float, state: int) -> None:
    """Every backo2 outcome min(band, cap) lies inside a segment that the policy gives positive weight."""
    policy = SocketIO()
    ms = policy.base_ms * policy.factor**state
    low, high = backo2_band(rand, ms, policy.randomization)
    deviation = math.floor(rand * policy.randomization * ms)
    uncapped = ms - deviation if math.floor(rand * 10) % 2 == 0 else ms + deviation
    assert low <= uncapped <= high
    exact = min(uncapped, policy.max_ms)
    covering = [
        s for s in policy.segments(state) if s.weight > 0 and s.low_ms - 1e-9 <= exact <= s.high_ms + 1e-9
    ]
    assert covering, (rand, state, exact)


# --- Phoenix ---------------------------------------------------------------------------------------------


def test_phoenix_has_no_spread_and_follows_its_schedule() -> None:
    policy = Phoenix()
    schedule = [10, 50, 100, 150, 200, 250, 500, 1000, 2000] + [5000] * 5
    for state, expected in enumerate(schedule):
        delays = {policy.next_delay_ms(state, np.random.default_rng(seed)) for seed in range(200)}
        assert delays == {expected}, state
    backoff = Backoff(policy)
    assert [backoff.next_delay_ms() for _ in range(len(schedule))] == schedule


# --- gRPC ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("state", [0, 1, 4, 10, 11, 20])
def test_grpc_is_within_20_percent_of_the_capped_exponential(state: int) -> None:
    target = min(1000.0 * 1.6**state, 120_000.0)
    assert_uniform(draws(Grpc(), state), 0.8 * target, 1.2 * target)


@PROPERTY
@given(state=st.integers(0, 60), seed=st.integers(0, 2**32))
def test_grpc_never_leaves_plus_minus_20_percent(state: int, seed: int) -> None:
    target = min(1000.0 * 1.6**state, 120_000.0)
    delays = draws(Grpc(), state, n=50, seed=seed)
    assert (np.abs(delays / target - 1.0) <= 0.2 + 1e-12).all()


# --- decorrelated ----------------------------------------------------------------------------------------


def test_decorrelated_chain_stays_within_base_and_three_times_last() -> None:
    policy = Decorrelated()
    edges = policy._bin_edges()
    # The state remembers the last delay to within half a bin (geometric), so "3 × last" holds exactly
    # for the remembered value and within that factor for the true one.
    half_bin = math.sqrt(edges[1] / edges[0])
    rng = np.random.default_rng(3)
    for _ in range(200):
        state, last = 0, policy.base_ms
        for _ in range(15):
            delay = policy.next_delay_ms(state, rng)
            remembered = policy.last_ms(state)
            assert policy.base_ms <= delay <= min(policy.max_ms, 3.0 * remembered) + 1e-9
            assert delay <= min(policy.max_ms, 3.0 * last * half_bin) + 1e-9
            assert remembered / half_bin - 1e-9 <= last <= remembered * half_bin + 1e-9
            state, last = policy.state_after(state, delay), delay


@pytest.mark.parametrize("state", [0, 1, 10, 20, 32])
def test_decorrelated_is_uniform_between_base_and_three_times_last(state: int) -> None:
    policy = Decorrelated()
    high = min(policy.max_ms, 3.0 * policy.last_ms(state))
    assert_uniform(draws(policy, state), policy.base_ms, high)


@PROPERTY
@given(fraction=st.floats(0, 1), bins=st.integers(1, 64))
def test_decorrelated_state_bin_contains_its_delay(fraction: float, bins: int) -> None:
    policy = make_policy("decorrelated", {"state_bins": bins})
    assert isinstance(policy, Decorrelated)
    edges = policy._bin_edges()
    delay = policy.base_ms * (policy.max_ms / policy.base_ms) ** fraction
    state = policy.state_after(0, delay)
    assert 1 <= state <= policy.max_state
    assert edges[state - 1] * (1 - 1e-9) <= delay <= edges[state] * (1 + 1e-9)
    assert edges[state - 1] <= policy.last_ms(state) <= edges[state]


def test_decorrelated_state_does_not_depend_on_the_previous_state() -> None:
    policy = Decorrelated()
    assert {policy.state_after(s, 1234.0) for s in range(policy.max_state + 1)} == {
        policy.state_after(0, 1234.0)
    }
    assert policy.last_ms(0) == policy.base_ms


# --- exponential, fixed, equal jitter --------------------------------------------------------------------


@pytest.mark.parametrize("state", [0, 3, 7, 12])
def test_exponential_is_the_capped_exponential_plus_additive_jitter(state: int) -> None:
    policy = Exponential()
    floor_ms = min(250.0 * 2.0**state, 30_000.0)
    assert_uniform(draws(policy, state), floor_ms, floor_ms + 100.0)


def test_fixed_is_one_point_or_its_jitter_window() -> None:
    assert set(draws(Fixed(), 0, n=100)) == {1000.0}
    assert_uniform(draws(make_policy("fixed", {"delay_ms": 500, "jitter_ms": 200}), 4), 500.0, 700.0)


@pytest.mark.parametrize("state", [0, 2, 5, 9])
def test_equal_jitter_keeps_half_and_spreads_half(state: int) -> None:
    c = min(1000.0 * 2.0**state, 30_000.0)
    assert_uniform(draws(EqualJitter(), state), c / 2.0, c)


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_max_state_is_where_the_distribution_stops_changing(name: str) -> None:
    policy = make_policy(name)
    last = policy.max_state
    # States beyond max_state are clamped by next_delay_ms (segments() itself takes 0..max_state).
    assert list(draws(policy, last, n=200)) == list(draws(policy, last + 5, n=200))
    if name not in ("fixed", "decorrelated"):
        assert policy.segments(last - 1) != policy.segments(last)
        assert policy.state_after(last, 0.0) == last


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_segment_weights_form_a_distribution(name: str) -> None:
    policy = make_policy(name)
    for state in range(policy.max_state + 1):
        segments = policy.segments(state)
        assert 1 <= len(segments) <= 12
        assert math.isclose(sum(s.weight for s in segments), 1.0, abs_tol=1e-9)
        assert all(s.weight >= 0 and s.low_ms >= 0 for s in segments)


# --- make_policy rejects bad input, naming the field ----------------------------------------------------


@PROPERTY
@given(name=st.text(min_size=1, max_size=20).filter(lambda n: n not in POLICIES))
def test_unknown_policy_names_are_rejected(name: str) -> None:
    with pytest.raises(InputError) as error:
        make_policy(name)
    assert error.value.field == "policy" and error.value.value == name


@PROPERTY
@given(name=st.sampled_from(sorted(POLICIES)), key=st.text(min_size=1, max_size=12), value=st.integers())
def test_unknown_parameters_are_rejected(name: str, key: str, value: int) -> None:
    if key in {f for f in make_policy(name).describe() if f != "policy"}:
        return
    with pytest.raises(InputError) as error:
        make_policy(name, {key: value})
    assert error.value.field == f"policy.{key}"


NUMERIC = [
    (name, key)
    for name in sorted(POLICIES)
    for key, v in make_policy(name).describe().items()
    if key != "policy" and isinstance(v, float)
]


@PROPERTY
@given(
    pair=st.sampled_from(NUMERIC),
    value=st.floats(max_value=-1e-9, allow_infinity=False) | st.booleans() | st.text(max_size=3),
)
def test_negative_or_non_numbers_are_rejected(pair: tuple[str, str], value: object) -> None:
    name, key = pair
    with pytest.raises(InputError) as error:
        make_policy(name, {key: value})
    assert error.value.field == f"policy.{key}"


@PROPERTY
@given(
    case=st.sampled_from(
        [
            ("exponential", "multiplier", st.floats(0, 1, exclude_max=True)),
            ("grpc", "multiplier", st.floats(0, 1, exclude_max=True)),
            ("socketio", "factor", st.floats(0, 1, exclude_max=True)),
            ("grpc", "jitter", st.floats(1, 1e6)),
            ("socketio", "randomization", st.floats(1, 1e6)),
            ("decorrelated", "state_bins", st.integers(257, 10**6) | st.integers(-(10**6), 0)),
        ]
    ),
    data=st.data(),
)
def test_out_of_range_values_are_rejected(case: tuple, data: st.DataObject) -> None:
    name, key, values = case
    value = data.draw(values)
    with pytest.raises(InputError) as error:
        make_policy(name, {key: value})
    assert error.value.field == f"policy.{key}"


@PROPERTY
@given(
    name=st.sampled_from(["exponential", "full_jitter", "equal_jitter", "decorrelated"]),
    excess=st.floats(1e-3, 1e6),
)
def test_a_base_above_the_cap_is_rejected(name: str, excess: float) -> None:
    with pytest.raises(InputError) as error:
        make_policy(name, {"base_ms": 1000.0 + excess, "max_ms": 1000.0})
    assert error.value.field == "policy.base_ms"


def test_a_decorrelated_base_at_its_cap_is_rejected_not_a_crash() -> None:
    """Its states are log-spaced bins between base_ms and max_ms: with the two equal there is no range to
    bin, and `--set clients.policy=decorrelated --set clients.populations.0.params.base_ms=30000` ended in
    a ZeroDivisionError traceback (state_after divided by log(max_ms / base_ms) = 0)."""
    with pytest.raises(InputError) as error:
        make_policy("decorrelated", {"base_ms": 30_000})
    assert error.value.field == "policy.base_ms" and "below max_ms (30000" in error.value.allowed


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("exponential", "base_ms"),
        ("full_jitter", "base_ms"),
        ("equal_jitter", "base_ms"),
        ("grpc", "initial_ms"),
        ("socketio", "base_ms"),
    ],
)
def test_a_counter_policy_with_a_base_of_0_never_grows_and_does_not_crash(name: str, key: str) -> None:
    """A base of 0 (allowed: "a finite number ≥ 0") never reaches the cap, so every state draws alike:
    `--set clients.populations.0.params.base_ms=0` on demo ended in a ZeroDivisionError traceback (the cap
    state took log(max_ms / 0))."""
    policy = make_policy(name, {key: 0})
    assert policy.max_state == 0
    assert policy.next_delay_ms(5, random.Random(1)) == policy.next_delay_ms(0, random.Random(1))


def test_phoenix_schedule_must_be_a_list_of_delays() -> None:
    for bad in ([], [10, -1], "fast", [10, "x"]):
        with pytest.raises(InputError) as error:
            make_policy("phoenix", {"schedule_ms": bad})
        assert error.value.field == "policy.schedule_ms"
    assert make_policy("phoenix", {"schedule_ms": [5, 10]}).segments(1)[0].low_ms == 10.0


# --- full jitter on the real engine: first attempts per 100 ms bin ---------------------------------------


def test_engine_spreads_a_full_jitter_herd_binomially_over_its_window() -> None:
    """N clients dropped at once come back over W = base: each 100 ms bin holds Binomial(N, dt/W).

    The bins of one run are multinomial (they sum to N), so Pearson's statistic over a run's B bins is
    χ²(B − 1); summed over independent seeds it is χ²(runs × (B − 1)). Both tails are tested: too little
    spread (lockstep) fails as surely as too much.
    """
    clients, window_ms, runs = 20_000, 10_000.0, 4
    bins_per_run = round(window_ms / 100.0)
    p = 100.0 / window_ms
    scenario = build_scenario(
        {
            "duration_s": 30,
            "clients": {
                "count": clients,
                "populations": [
                    {"policy": "full_jitter", "params": {"base_ms": window_ms, "max_ms": window_ms}}
                ],
            },
            "nodes": {"count": 4},
            "events": [{"at_s": 0, "action": "disconnect_fraction", "fraction": 1.0}],
        }
    )
    pearson, counts = 0.0, []
    for seed in range(runs):
        sim = Simulation(scenario, seed=seed)
        seconds = [sim.step() for _ in range(round(window_ms / 1000.0) + 2)]
        bins = np.concatenate([s.bins for s in seconds])
        assert sum(s.node_out[k.ON_TIMEOUTS].sum() + s.node_out[k.ON_REJECTS].sum() for s in seconds) == 0
        first = bins[:bins_per_run]
        assert first.sum() == clients and bins[bins_per_run:].sum() == 0  # nobody needed a retry
        pearson += float(((first - clients * p) ** 2 / (clients * p)).sum())
        counts.append(first)
    dof = runs * (bins_per_run - 1)
    tail = stats.chi2.sf(pearson, dof)
    assert ALPHA / 2 < tail < 1 - ALPHA / 2, (pearson, dof)
    pooled = np.concatenate(counts)
    assert pooled.mean() == clients * p
    # Variance of a bin count: N p (1 − p); the χ² interval above bounds the ratio, this reads it out.
    ratio = pooled.var(ddof=1) / (clients * p * (1 - p))
    low, high = stats.chi2.ppf([ALPHA / 2, 1 - ALPHA / 2], dof) / dof
    assert low < ratio < high, ratio


BOOLEANS_PASS_AS_INTEGERS = (
    "make_policy checks integer parameters with isinstance(value, int), which True/False satisfy, and "
    "schedule entries with isinstance(v, int | float): state_bins=True becomes 1 bin, schedule_ms=[True] "
    "a 1 ms delay. The float parameters already reject booleans."
)


@pytest.mark.parametrize(
    ("name", "key", "value"), [("decorrelated", "state_bins", True), ("phoenix", "schedule_ms", [True, 10])]
)
def test_booleans_are_not_numbers(name: str, key: str, value: object) -> None:
    with pytest.raises(InputError) as error:
        make_policy(name, {key: value})
    assert error.value.field == f"policy.{key}"


def test_engine_tables_keep_the_decorrelated_bins() -> None:
    """The engine's tick tables: a delay of d ticks enters the bin holding d's middle; segments in ticks."""
    scenario = build_scenario({"clients": {"count": 100, "populations": [{"policy": "decorrelated"}]}})
    sim = Simulation(scenario, seed=0)
    policy = sim.policies[0]
    assert isinstance(policy, Decorrelated)
    edges = policy._bin_edges()
    tick_ms = sim.tick_ms
    for d in range(round(policy.max_ms / tick_ms)):
        middle_ms = (d + 0.5) * tick_ms
        state = int(sim.policy_tables.state_of_delay[0, d])
        if middle_ms <= policy.base_ms:
            assert state == 1
        else:
            assert edges[state - 1] * (1 - 1e-9) <= middle_ms <= edges[state] * (1 + 1e-9), d
    for state in range(policy.max_state + 1):
        (segment,) = policy.segments(state)
        assert sim.policy_tables.seg_a[0, state, 0] == round(segment.low_ms / tick_ms)
        assert sim.policy_tables.seg_b[0, state, 0] == max(
            sim.policy_tables.seg_a[0, state, 0] + 1, round(segment.high_ms / tick_ms)
        )


def test_engine_tables_keep_socketio_bands_and_lockstep() -> None:
    scenario = build_scenario({"clients": {"count": 100, "populations": [{"policy": "socketio"}]}})
    sim = Simulation(scenario, seed=0)
    ticks = round(1000.0 / sim.tick_ms)  # ticks per second
    first = sorted(
        (
            int(sim.policy_tables.seg_a[0, 0, j]),
            int(sim.policy_tables.seg_b[0, 0, j]),
            float(sim.policy_tables.seg_w[0, 0, j]),
        )
        for j in range(sim.policy_tables.seg_n[0, 0])
    )
    assert first == [
        (ticks * (550 + 100 * j) // 1000, ticks * (600 + 100 * j) // 1000, 0.1) for j in range(10)
    ]
    top = sim.policies[0].max_state  # 4: the engine clamps every later attempt to it
    # The engine counts each state twice: free clients, and clients bound to the hot nodes (same tables).
    assert top == 4 and sim.policy_tables.seg_n.shape[1] == 2 * (top + 1)
    assert np.array_equal(sim.policy_tables.seg_a[0, : top + 1], sim.policy_tables.seg_a[0, top + 1 :])
    assert sim.policy_tables.seg_n[0, top] == 1 and sim.policy_tables.seg_w[0, top, 0] == pytest.approx(
        1.0
    )  # one point, the cap
    assert (sim.policy_tables.seg_a[0, top, 0], sim.policy_tables.seg_b[0, top, 0]) == (
        5 * ticks,
        5 * ticks + 1,
    )
    assert sim.policy_tables.seg_n[0, 3] == 2  # attempt 3: decile 8 below the cap, everyone else at it
