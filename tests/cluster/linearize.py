# SPDX-License-Identifier: MIT
"""A linearizability checker for a compare-and-set register (docs/cluster.md).

The register is one configfs attribute as the REST API shows it: its state
is (value, revision), where the revision is the one the attribute's ETag
names. Operations, each with the monotonic times of its invocation and of
its answer:

  read         answered (value, revision)
  write        a blind PUT of a unique value; answered the new revision
  cas          PUT with If-Match: "expected"; succeeds iff the current
               revision is the expected one, answered the new revision,
               or refused (412) because it is not

An answer is "ok" (it happened, with that result), "fail" (it certainly did
not happen: 412 or another definite refusal) or "info" (indeterminate: a
timeout, a lost connection, a 5xx that may or may not have been applied).
An indeterminate write or CAS may take effect at any point after its
invocation, or never; an indeterminate read tells nothing and is dropped.

The search is Wing & Gong's with Lowe's memoization, as in Knossos and
Porcupine: take, in real-time order, any pending operation invoked before
the earliest answer of those still pending, apply it to the model, recurse;
remember every (set of linearized operations, state) already explored, so
that no such pair is explored twice. Each key is checked on its own
(P-compositionality). Reads and refused CAS that match the state exactly
are linearized greedily (they change nothing; taking them as early as they
may be taken never loses a linearization). The search is bounded: past
@budget explored states it answers "unknown" rather than run on.

check_history() returns a Result per key; a failure carries a small
explanation: the deepest point the search reached (the state there, the
last operations it could place, and those it could not place next).
stream_problems() checks an event stream the same way: every revision
once, in order, named, or a reset. Pure Python standard library; no etcd
needed (its tests: tests/cluster/test-linearize.py).
"""
import collections

INF = float("inf")

Op = collections.namedtuple(
    "Op", "key kind invoke complete status value rev expect client node")
Op.__doc__ = """One operation of a history.
key      which register (an attribute path)
kind     "read", "write" or "cas"
invoke   monotonic time the request was sent
complete monotonic time its answer came (ignored unless status is "ok"/"fail")
status   "ok", "fail" or "info"
value    read: the value read; write/cas: the value written
rev      read: the revision read; write/cas ok: the revision answered
         (None if the answer named none)
expect   cas: the revision named by If-Match
client, node  who sent it where (for explanations only)"""


def op(key, kind, invoke, complete, status="ok", value=None, rev=None,
       expect=None, client=None, node=None):
    return Op(key, kind, invoke, complete, status, value, rev, expect,
              client, node)


def describe(o):
    who = "%s@%s " % (o.client, o.node) if o.client is not None else ""
    if o.kind == "read":
        what = "read -> %r rev %s" % (o.value, o.rev)
    elif o.kind == "write":
        what = "write %r -> rev %s" % (o.value, o.rev)
    else:
        what = "cas if-match %s := %r -> %s" % (
            o.expect, o.value, "rev %s" % o.rev if o.status == "ok" else
            "refused" if o.status == "fail" else "?")
    end = "..." if o.status == "info" else "%.4f" % o.complete
    return "%s%s [%s, %.4f..%s]" % (who, what, o.status, o.invoke, end)


class Result:
    """valid: True, False or None (unknown: the budget ran out)."""

    def __init__(self, key, valid, explored, why="", ops=0):
        self.key, self.valid, self.explored = key, valid, explored
        self.why, self.ops = why, ops

    def __repr__(self):
        v = {True: "linearizable", False: "NOT linearizable",
             None: "unknown"}[self.valid]
        return "%s: %s (%d ops, %d states)%s" % (
            self.key, v, self.ops, self.explored,
            "\n" + self.why if self.why else "")


def _step(o, state):
    """The states @o may leave the register in from @state; [] if @o
    cannot take effect there. state = (value, revision, floor): the
    revision is None when an indeterminate write set the value and nobody
    has seen its revision yet, and then it is above floor, the last
    revision known (revisions only grow)."""
    value, rev, floor = state
    low = rev if rev is not None else floor
    if o.kind == "read":
        if o.value == value and (rev == o.rev or
                                 (rev is None and o.rev > floor)):
            return [(value, o.rev, o.rev)]
        return []
    if o.kind == "write":
        if o.status == "ok":
            if o.rev is None:
                return [(o.value, None, low)]
            return [(o.value, o.rev, o.rev)] if o.rev > low else []
        return [(o.value, None, low)]  # info
    # cas
    if o.status == "fail":
        return [state] if rev is None or rev != o.expect else []
    if rev is None and o.expect <= floor or \
            rev is not None and rev != o.expect:
        return []
    if o.status == "ok":
        if o.rev is None:
            return [(o.value, None, o.expect)]
        return [(o.value, o.rev, o.rev)] if o.rev > o.expect else []
    return [(o.value, None, o.expect)]  # info: it may happen here


def _noop(o, state):
    """@o certainly changes nothing in @state and fits it."""
    value, rev, _ = state
    if rev is None:
        return False
    if o.kind == "read":
        return o.value == value and o.rev == rev
    return o.kind == "cas" and o.status == "fail" and o.expect != rev


class _Ghost:
    def __repr__(self):
        return "<the value of an indeterminate write nobody read>"


GHOST = _Ghost()  # the value of a write nobody saw


def check_key(ops, init, budget=200000, key=None, seconds=20.0):
    """Whether the operations @ops of one register, starting in state
    @init = (value, revision), are linearizable: a Result (unknown past
    @budget explored states or @seconds)."""
    ops = [o for o in ops if not (o.status == "info" and o.kind == "read")
           and not (o.status == "fail" and o.kind != "cas")]
    # An indeterminate write whose value no answer shows ("a ghost") can
    # only matter by changing the revision (a refused CAS); ghosts are
    # interchangeable, so they are not placed one by one (2^k subsets)
    # but as one move "some ghost invoked by now took effect" -> state
    # (GHOST, None). Lenient in one way only: a ghost may be used twice.
    shown = {o.value for o in ops if o.status == "ok" and o.kind == "read"}
    ghosts = sorted(o.invoke for o in ops
                    if o.status == "info" and o.value not in shown)
    ghost_cas = {}  # invoke time -> expected revision, for ghost CAS
    for o in ops:
        if o.status == "info" and o.value not in shown and o.kind == "cas":
            ghost_cas.setdefault(o.invoke, set()).add(o.expect)
    ghost_write = sorted(o.invoke for o in ops if o.status == "info"
                         and o.value not in shown and o.kind == "write")
    ops = [o for o in ops if not (o.status == "info"
                                  and o.value not in shown)]
    ops.sort(key=lambda o: o.invoke)
    n = len(ops)
    inv = [o.invoke for o in ops]
    ret = [o.complete if o.status != "info" else INF for o in ops]
    must = 0  # determinate ops: all of them must be linearized
    for i, o in enumerate(ops):
        if o.status != "info":
            must |= 1 << i
    init = (init[0], init[1], init[1])
    seen = set()
    best = [(-1, 0, init)]  # (placed, mask, state) at the deepest point

    def window(mask):
        """(indices of pending ops invoked before the earliest pending
        answer, in invocation order; that earliest answer). Ops are in
        invocation order and answer after their invocation, so the scan
        stops at the first op invoked after the earliest answer so far."""
        i = (~mask & (mask + 1)).bit_length() - 1
        lo = INF
        out = []
        while i < n and inv[i] < lo:
            if not mask >> i & 1:
                out.append(i)
                if ret[i] < lo:
                    lo = ret[i]
            i += 1
        return [j for j in out if inv[j] < lo], lo

    def candidates(mask):
        return window(mask)[0]

    def ghost_moves(state, lo):
        """The state a ghost invoked before @lo may leave."""
        low = state[1] if state[1] is not None else state[2]
        if ghost_write and ghost_write[0] < lo:
            return [(GHOST, None, low)]
        for t, exp in ghost_cas.items():
            if t < lo and (state[1] is None or state[1] in exp):
                return [(GHOST, None, low)]
        return []

    def settle(mask, state):
        """Linearize greedily what changes nothing."""
        while True:
            more = 0
            for i in candidates(mask):
                if ops[i].status != "info" and _noop(ops[i], state):
                    more |= 1 << i
            if not more:
                return mask
            mask |= more

    import time
    end = time.monotonic() + seconds
    mask0 = settle(0, init)
    stack = [(mask0, init)]
    seen.add((mask0, init))
    while stack:
        mask, state = stack.pop()
        if mask & must == must:
            return Result(key, True, len(seen), ops=n)
        placed = bin(mask & must).count("1")
        if placed > best[0][0]:
            best[0] = (placed, mask, state)
        if len(seen) > budget or (len(seen) % 512 == 0
                                  and time.monotonic() > end):
            return Result(key, None, len(seen),
                          "search budget exceeded (%d states or %g s)"
                          % (budget, seconds), n)
        cands, lo = window(mask)
        if state[0] is not GHOST:
            for nxt in ghost_moves(state, lo):
                if (mask, nxt) not in seen:
                    seen.add((mask, nxt))
                    stack.append((mask, nxt))
        for i in reversed(cands):
            for nxt in _step(ops[i], state):
                m = settle(mask | 1 << i, nxt)
                if (m, nxt) not in seen:
                    seen.add((m, nxt))
                    stack.append((m, nxt))
    return Result(key, False, len(seen), _explain(ops, best[0], candidates),
                  n)


def _explain(ops, best, candidates):
    placed, mask, state = best
    done = [i for i in range(len(ops)) if mask >> i & 1]
    done.sort(key=lambda i: ops[i].complete if ops[i].status != "info"
              else ops[i].invoke)
    lines = ["  deepest point: %d of %d determinate ops placed, register "
             "= %r rev %s" % (placed, sum(o.status != "info" for o in ops),
                              state[0], state[1])]
    lines.append("  last placed:")
    for i in done[-4:]:
        lines.append("    " + describe(ops[i]))
    lines.append("  none of these can come next:")
    for i in candidates(mask)[:8]:
        lines.append("    " + describe(ops[i]))
    return "\n".join(lines)


def aliasing(ops):
    """Revisions that name two values of one key: [(key, rev, values)].
    A revision names one state forever; seeing two values under one ETag
    is a violation whatever the order."""
    by = {}
    for o in ops:
        if o.status == "ok" and o.rev is not None:
            by.setdefault((o.key, o.rev), set()).add(o.value)
    return sorted((k, r, sorted(v)) for (k, r), v in by.items()
                  if len(v) > 1)


def stream_problems(events, since):
    """What is wrong with an event stream followed from revision @since:
    @events are its (id, event name) in order of arrival, across
    reconnections with Last-Event-ID. Every revision once, in order, each
    with a name (the records of one revision share its id), unless a
    "reset" says where it goes on from."""
    out = []
    prev = since
    for k, (rid, name) in enumerate(events):
        if name == "reset":
            prev = rid
            continue
        if not name:
            out.append("event %d has no name" % rid)
        if k > 0 and rid == prev and events[k - 1][0] == rid:
            continue  # another record of the same revision
        if rid != prev + 1:
            out.append("events went from %d to %d, no reset" % (prev, rid))
        prev = rid
    return out


def check_history(ops, init, budget=200000, seconds=20.0):
    """Check every key of @ops from its initial state @init[key]; a dict
    key -> Result."""
    per = {}
    for o in ops:
        per.setdefault(o.key, []).append(o)
    return {k: check_key(v, init[k], budget, k, seconds)
            for k, v in per.items()}


def summary(results):
    """(all linearizable, any unknown, text)"""
    ok = all(r.valid is True for r in results.values())
    unknown = any(r.valid is None for r in results.values())
    return ok, unknown, "\n".join(repr(r) for r in results.values())
