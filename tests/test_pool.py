"""The worker pool: order, a dead worker costs one item, and stopping early never races the executor."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import Future

import pytest

from pt2lint.pool import ordered_map


def _square(n: int) -> int:
    return n * n


def _slow_square(n: int) -> int:
    time.sleep(0.02)
    return n * n


def _die_on_seven(n: int) -> int:
    if n == 7:
        os._exit(3)
    return n * n


def test_results_come_in_input_order_with_two_workers():
    items = list(range(200))
    assert list(ordered_map(_slow_square, items, jobs=2, dead=lambda n: -1)) == [n * n for n in items]


def test_an_item_that_kills_its_worker_gets_the_dead_result_and_the_rest_their_own():
    items = list(range(20))
    got = list(ordered_map(_die_on_seven, items, jobs=2, dead=lambda n: -1))
    assert got == [-1 if n == 7 else n * n for n in items]


def test_stopping_early_cancels_no_future_from_the_consumer_thread(monkeypatch):
    """CPython 3.11's manager thread raised InvalidStateError (printed on stderr) when it
    marked a future broken that another thread had cancelled; ``Executor.map`` cancels its
    futures when its iterator is closed, which Ctrl-C and an early stop both do."""
    cancelled_by = []
    real_cancel = Future.cancel

    def recording_cancel(self):
        cancelled_by.append(threading.get_ident())
        return real_cancel(self)

    monkeypatch.setattr(Future, "cancel", recording_cancel)
    errors = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))
    results = ordered_map(_slow_square, list(range(400)), jobs=2, dead=lambda n: -1)
    assert [next(results) for _ in range(3)] == [0, 1, 4]
    results.close()  # what a KeyboardInterrupt in the consumer does to the generator
    assert threading.get_ident() not in cancelled_by
    assert errors == []


@pytest.mark.parametrize("jobs", [1, 2])
def test_few_items_or_one_job_run_in_this_process(jobs):
    assert list(ordered_map(_square, [1, 2, 3], jobs=jobs, dead=lambda n: -1)) == [1, 4, 9]
