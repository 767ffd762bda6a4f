"""The container: members round-trip, and any prefix of a file yields exactly its complete members."""

from __future__ import annotations

import gzip
import io
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from console.record import container
from console.record.container import RecordKind

records = st.lists(
    st.tuples(
        st.sampled_from(list(RecordKind)),
        st.binary(max_size=2000),
        st.integers(-1, 2**62),
        st.floats(-1e9, 1e9, allow_nan=False),
    ),
    min_size=1,
    max_size=8,
)


def _file(items: list[tuple[RecordKind, bytes, int, float]]) -> bytes:
    return b"".join(
        container.encode(kind, payload, seq=seq, time_s=t, wall_unix_s=1.8e9, level=6)
        for kind, payload, seq, t in items
    )


@given(records)
@settings(max_examples=60, deadline=None)
def test_members_round_trip_and_are_plain_gzip(items: list[tuple[RecordKind, bytes, int, float]]) -> None:
    data = _file(items)
    assert gzip.decompress(data) == b"".join(payload for _, payload, _, _ in items)
    with io.BytesIO(data) as file:
        entries = _scan_bytes(data)
        assert [(e.kind, e.seq, e.time_s) for e in entries] == [(k, s, t) for k, _, s, t in items]
        assert [container.read_member(file, e) for e in entries] == [p for _, p, _, _ in items]


@given(records, st.data())
@settings(max_examples=60, deadline=None)
def test_any_prefix_yields_exactly_its_complete_members(
    items: list[tuple[RecordKind, bytes, int, float]], data: st.DataObject
) -> None:
    whole = _file(items)
    cut = data.draw(st.integers(0, len(whole)))
    ends = [e.offset + e.size for e in _scan_bytes(whole)]
    complete = sum(end <= cut for end in ends)
    assert len(_scan_bytes(whole[:cut])) == complete


@given(records, st.data())
@settings(max_examples=60, deadline=None)
def test_a_damaged_last_member_is_dropped_never_misread(
    items: list[tuple[RecordKind, bytes, int, float]], data: st.DataObject
) -> None:
    whole = bytearray(_file(items))
    last = _scan_bytes(bytes(whole))[-1]
    # Inside the deflate body or trailer: the header still parses, the CRC or the stream must fail.
    where = data.draw(st.integers(last.offset + container.HEADER_BYTES, last.offset + last.size - 1))
    whole[where] ^= data.draw(st.integers(1, 255))
    kept = _verified_bytes(bytes(whole))
    if len(kept) == len(items):
        # Only a flip in the deflate stream's unused padding bits leaves the payload intact.
        with tempfile.TemporaryFile() as file:
            file.write(whole)
            assert container.read_member(file, kept[-1]) == items[-1][1]
    else:
        assert len(kept) == len(items) - 1


def _scan_bytes(data: bytes) -> list[container.Entry]:
    with tempfile.TemporaryFile() as file:  # scan maps the file: it needs a real one
        file.write(data)
        file.flush()
        return list(container.scan(file, len(data)))


def _verified_bytes(data: bytes) -> list[container.Entry]:
    with tempfile.TemporaryFile() as file:
        file.write(data)
        file.flush()
        return container.verified_entries(file, len(data))


def test_a_member_inflating_past_any_record_is_not_inflated() -> None:
    # Found in the security review: members were inflated with no bound, so a crafted recording (a few KiB
    # of zeros inflating to gigabytes) filled a replay's memory. It now reads as a damaged member.
    bomb = bytes(container.MAX_PAYLOAD_BYTES + 1)
    member = container.encode(RecordKind.EVENT, bomb, seq=1, time_s=1.0, wall_unix_s=0.0, level=9)
    assert len(member) < 200_000  # what a crafted file would carry
    assert container.decode(member) is None
    fits = container.encode(RecordKind.EVENT, b"{}\n", seq=1, time_s=1.0, wall_unix_s=0.0, level=9)
    assert container.decode(fits) == b"{}\n"
