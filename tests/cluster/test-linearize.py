#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Unit tests of the linearizability checker (tests/cluster/linearize.py):
known non-linearizable histories of a compare-and-set register are caught,
known linearizable ones accepted, and a history of 2 000 operations gets
an answer within a time bound. Pure Python, no etcd. TAP output.
"""
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from linearize import (aliasing, check_history, check_key,  # noqa: E402
                       op, stream_problems)

K = "k"
INIT = ("0", 1)


def R(t0, t1, value, rev, status="ok"):
    return op(K, "read", t0, t1, status, value, rev)


def W(t0, t1, value, rev=None, status="ok"):
    return op(K, "write", t0, t1, status, value, rev)


def C(t0, t1, expect, value, rev=None, status="ok"):
    return op(K, "cas", t0, t1, status, value, rev, expect)


def valid(ops, init=INIT):
    r = check_key(ops, init, key=K)
    return r.valid, r


# ---- not linearizable ---------------------------------------------------


def t_stale_read():
    """a read that starts after a write completed and sees the old value"""
    v, r = valid([W(0, 1, "a", 2), R(2, 3, "0", 1)])
    assert v is False, r
    assert "read -> '0'" in r.why, r.why


def t_two_cas_same_revision():
    """two CAS from the same expected revision both succeed"""
    v, r = valid([C(0, 1, 1, "a", 2), C(2, 3, 1, "b", 3)])
    assert v is False, r
    # even when they overlap: one must see the other's revision
    v, r = valid([C(0, 3, 1, "a", 2), C(1, 4, 1, "b", 3)])
    assert v is False, r


def t_read_never_written():
    """a read of a value no write wrote"""
    v, r = valid([W(0, 1, "a", 2), R(0.5, 3, "zz", 2)])
    assert v is False, r


def t_dirty_read():
    """a read of a write that then failed (refused: it never happened)"""
    v, r = valid([R(1, 2, "a", 2), C(0, 3, 1, "a", status="fail")])
    assert v is False, r
    # the case: ETag "N" of a value that was never committed; a CAS
    # naming it succeeds over another value, which thus was never read
    hist = [W(0, 2, "x", None, "fail"),  # its commit lost the race
            R(1, 1.5, "x", 5),           # but a reader saw it as rev 5
            W(1.2, 3, "y", 5),           # another value won revision 5
            C(4, 5, 5, "z", 6)]          # CAS on "5", thinking it is "x"
    v, r = valid(hist)
    assert v is False, r
    assert aliasing([o for o in hist if o.status == "ok"]) == [
        (K, 5, ["x", "y"])]


def t_read_own_future():
    """a read that sees a write invoked only after the read answered"""
    v, r = valid([R(0, 1, "a", 2), W(2, 3, "a", 2)])
    assert v is False, r


def t_cas_refused_without_reason():
    """a CAS refused although nothing changed the revision it named"""
    v, r = valid([R(0, 1, "0", 1), C(2, 3, 1, "a", status="fail"),
                  R(4, 5, "0", 1)])
    assert v is False, r


def t_revision_goes_back():
    """a write answered with a revision older than one already read"""
    v, r = valid([W(0, 1, "a", 5), W(2, 3, "b", 4)])
    assert v is False, r


# ---- linearizable -------------------------------------------------------


def t_overlapping_any_order():
    """concurrent overlapping ops in an order the answers allow"""
    # the read overlaps both writes and sees the first: w(a) < r < w(b)
    assert valid([W(0, 5, "a", 2), W(1, 6, "b", 3), R(2, 7, "a", 2)])[0]
    # b's answer names rev 2, so b went first, then a
    assert valid([W(0, 5, "a", 3), W(1, 6, "b", 2), R(7, 8, "a", 3)])[0]
    # two CAS from one revision, one refused
    assert valid([C(0, 2, 1, "a", 2), C(0, 2, 1, "b", status="fail"),
                  R(3, 4, "a", 2)])[0]
    # the refused one may also be taken first (then it must be refused
    # because someone else changed the revision — not the case here)
    v, r = valid([C(0, 2, 1, "a", status="fail"), R(3, 4, "0", 1)])
    assert v is False, r


def t_indeterminate_happened():
    """an indeterminate write that did happen (seen later)"""
    assert valid([W(0, 1, "a", status="info"), R(2, 3, "a", 2),
                  C(4, 5, 2, "b", 3), R(6, 7, "b", 3)])[0]
    # ... possibly long after it was sent
    assert valid([W(0, 1, "a", status="info"), R(2, 3, "0", 1),
                  R(4, 5, "a", 7)])[0]
    # an indeterminate CAS that happened
    assert valid([C(0, 1, 1, "a", status="info"), R(2, 3, "a", 2)])[0]


def t_indeterminate_not_happened():
    """an indeterminate write or CAS that never happened"""
    assert valid([W(0, 1, "a", status="info"), R(2, 3, "0", 1),
                  W(4, 5, "b", 3), R(6, 7, "b", 3)])[0]
    # an indeterminate CAS may explain a refusal, or be absent
    assert valid([C(0, 1, 1, "a", status="info"),
                  C(2, 3, 1, "b", status="fail"), R(4, 5, "0", 9)])[0] \
        is False  # rev changed with no value change: "a" never read
    assert valid([C(0, 1, 1, "a", status="info"),
                  C(2, 3, 1, "b", status="fail"), R(4, 5, "a", 2)])[0]
    assert valid([C(0, 1, 1, "a", status="info"), R(2, 3, "0", 1)])[0]


def t_unknown_revision_bound_later():
    """a blind write answered without an ETag: its revision is learnt
    from the read that sees it"""
    assert valid([W(0, 1, "a"), R(2, 3, "a", 4), C(4, 5, 4, "b", 6)])[0]
    assert valid([W(0, 1, "a"), R(2, 3, "a", 4), R(4, 5, "a", 6)])[0] \
        is False


def t_per_key():
    """each key is checked on its own, each from its own initial state"""
    ops = [op("x", "write", 0, 1, "ok", "a", 2),
           op("y", "read", 2, 3, "ok", "0", 1),
           op("x", "read", 2, 3, "ok", "a", 2)]
    res = check_history(ops, {"x": ("0", 1), "y": ("0", 1)})
    assert all(r.valid for r in res.values()), res
    ops.append(op("y", "read", 4, 5, "ok", "a", 2))
    res = check_history(ops, {"x": ("0", 1), "y": ("0", 1)})
    assert res["x"].valid and res["y"].valid is False, res


def random_history(seed, n, keys, clients, bug=False):
    """A history of @n ops by @clients on a true linearizable register
    (each op takes effect at a random instant inside its interval); with
    @bug, the first read past the middle returns the initial value, long
    overwritten."""
    rnd = random.Random(seed)
    state = {k: ("0", 1) for k in keys}
    rev = [1]
    t = [0.0] * clients
    events = []
    for i in range(n):
        c = i % clients
        t0 = t[c] + rnd.random()
        t1 = t0 + rnd.random() * 3
        t[c] = t1
        at = rnd.uniform(t0, t1)
        events.append((at, c, t0, t1, rnd.choice(keys), rnd.random(), i))
    events.sort()
    out = []
    stale = [bug]
    for at, c, t0, t1, k, x, i in events:
        v, r = state[k]
        if x < 0.4:
            if stale[0] and i >= n // 2 and r > 1:
                stale[0] = False
                v, r = "0", 1
            out.append(op(k, "read", t0, t1, "ok", v, r, client=c))
        elif x < 0.6:
            rev[0] += 1
            state[k] = ("v%d" % i, rev[0])
            st = "info" if x < 0.45 else "ok"
            out.append(op(k, "write", t0, t1, st, "v%d" % i, rev[0],
                          client=c))
        else:
            expect = r if x < 0.8 else r - 1
            if expect == r:
                rev[0] += 1
                state[k] = ("v%d" % i, rev[0])
                out.append(op(k, "cas", t0, t1, "ok", "v%d" % i, rev[0],
                              expect, client=c))
            else:
                out.append(op(k, "cas", t0, t1, "fail", "v%d" % i, None,
                              expect, client=c))
    return out


def t_random_valid():
    """random histories of a true register (with concurrency and
    indeterminate writes) are accepted"""
    for seed in range(30):
        h = random_history(seed, 120, ["a", "b"], 5)
        res = check_history(h, {"a": ("0", 1), "b": ("0", 1)})
        assert all(r.valid for r in res.values()), (seed, res)


def t_big_history_in_time():
    """2 000 ops over 4 keys by 6 clients: an answer within 20 s, both for
    a valid history and one with a stale read"""
    keys = ["a", "b", "c", "d"]
    init = {k: ("0", 1) for k in keys}
    t0 = time.monotonic()
    res = check_history(random_history(7, 2000, keys, 6), init)
    took = time.monotonic() - t0
    assert all(r.valid for r in res.values()), res
    assert took < 20, took
    t0 = time.monotonic()
    res = check_history(random_history(7, 2000, keys, 6, bug=True), init)
    took2 = time.monotonic() - t0
    assert took2 < 20, took2
    assert any(r.valid is not True for r in res.values()), res
    print("# 2000 ops: %.2f s valid, %.2f s with a stale read" % (took,
                                                                   took2))


def t_budget():
    """a search past its budget answers unknown, it does not run on"""
    # 40 concurrent indeterminate writes, read one after the other: any
    # subset of them may come before each read, and a final read of a
    # value nobody wrote makes the search try them all
    ops = [W(0, 100, "w%d" % i, status="info") for i in range(40)]
    ops += [R(101 + i, 101.5 + i, "w%d" % i, 2 + i) for i in range(40)]
    ops.append(R(200, 201, "nobody", 99))
    t0 = time.monotonic()
    r = check_key(ops, INIT, budget=5000, key=K)
    assert r.valid is None and time.monotonic() - t0 < 10, r


def t_event_streams():
    """event streams: a skipped revision, an event without a name and a
    revision going back are caught; records of one revision and a reset
    are accepted"""
    ok = [(11, "store"), (12, "mkdir"), (12, "store"), (13, "store"),
          (20, "reset"), (21, "rmdir")]
    assert stream_problems(ok, 10) == [], stream_problems(ok, 10)
    assert stream_problems([(11, "store"), (13, "store")], 10) == [
        "events went from 11 to 13, no reset"]
    assert stream_problems([(11, "")], 10) == ["event 11 has no name"]
    assert stream_problems([(11, "store"), (10, "store")], 10) != []
    assert stream_problems([(12, "store")], 10) != []  # the first skipped


TESTS = [t_stale_read, t_two_cas_same_revision, t_read_never_written,
         t_dirty_read, t_read_own_future, t_cas_refused_without_reason,
         t_revision_goes_back, t_overlapping_any_order,
         t_indeterminate_happened, t_indeterminate_not_happened,
         t_unknown_revision_bound_later, t_per_key, t_random_valid,
         t_big_history_in_time, t_budget, t_event_streams]


def main():
    print("1..%d" % len(TESTS))
    failed = 0
    for i, t in enumerate(TESTS, 1):
        try:
            t()
            print("ok %d - %s" % (i, t.__doc__.split("\n")[0]))
        except Exception as e:  # report and go on
            failed += 1
            print("not ok %d - %s" % (i, t.__name__))
            for line in repr(e).splitlines():
                print("# " + line)
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
