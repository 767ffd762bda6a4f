"""Fixed-size numeric history: the newest `capacity` samples, oldest first, in O(1) per append."""

from __future__ import annotations

import numpy as np


class Ring:
    """A ring of float64 samples. NaN marks a gap (a span with no data), which charts draw as a break."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, capacity)
        self._data = np.full(self.capacity, np.nan)
        self._next = 0
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def append(self, value: float) -> None:
        self._data[self._next] = value
        self._next = (self._next + 1) % self.capacity
        self._size = min(self._size + 1, self.capacity)

    def extend(self, values: np.ndarray | list[float]) -> None:
        array = np.asarray(values, dtype=np.float64)[-self.capacity :]
        n = array.size
        if n == 0:
            return
        end = self._next + n
        if end <= self.capacity:
            self._data[self._next : end] = array
        else:
            split = self.capacity - self._next
            self._data[self._next :] = array[:split]
            self._data[: n - split] = array[split:]
        self._next = end % self.capacity
        self._size = min(self._size + n, self.capacity)

    def values(self) -> np.ndarray:
        """Oldest first; a copy."""
        if self._size < self.capacity:
            return self._data[: self._size].copy()
        return np.concatenate((self._data[self._next :], self._data[: self._next]))

    def last(self, default: float = float("nan")) -> float:
        if self._size == 0:
            return default
        return float(self._data[(self._next - 1) % self.capacity])


class RingTable:
    """One ring per row, stored as a 2-D array so a whole frame's column is written in one step.

    Used for per-node history: 2000 nodes × 300 samples × a few metrics stays a few MB (issue #3 bench:
    rss ≤ 250 MB after an hour).
    """

    def __init__(self, capacity: int, rows: int = 0) -> None:
        self.capacity = max(1, capacity)
        self._data = np.full((max(rows, 16), self.capacity), np.nan, dtype=np.float32)
        self._next = 0
        self._size = 0

    def _ensure_rows(self, rows: int) -> None:
        if rows > self._data.shape[0]:
            grown = np.full((max(rows, self._data.shape[0] * 2), self.capacity), np.nan, dtype=np.float32)
            grown[: self._data.shape[0]] = self._data
            self._data = grown

    def append_column(self, column: np.ndarray) -> None:
        """Write one sample for every row; rows beyond `column` get NaN (the node sent nothing)."""
        self._ensure_rows(column.size)
        self._data[:, self._next] = np.nan
        self._data[: column.size, self._next] = column
        self._next = (self._next + 1) % self.capacity
        self._size = min(self._size + 1, self.capacity)

    def row(self, index: int) -> np.ndarray:
        """One row's samples, oldest first."""
        if index >= self._data.shape[0]:
            return np.empty(0, dtype=np.float32)
        data = self._data[index]
        if self._size < self.capacity:
            return data[: self._size].copy()
        return np.concatenate((data[self._next :], data[: self._next]))
