"""Compiled kernel of the execution plans (Kopański 2020, §3.4, Alg. 8), used by
:class:`coburst.core.plan.PlanEvaluator`.

An availability profile is a set of rows, one per breakpoint: ``times[r]`` (start of the
segment), ``free[r]`` (free compute nodes as ``W`` 64-bit words, bit ``i`` = compute index
``i``), ``cnt[r]`` (their number), ``bbr[r]`` (free bytes of every BB node) and ``tot[r]``
(their sum).  A plan places the jobs of a permutation one after the other at their
earliest start (:func:`earliest`), with the node choice of
:func:`coburst.core.placement.select_nodes` (:func:`select_nodes`) and the BB placement of
:func:`coburst.core.placement.place_bb` (:func:`place_bb`), and keeps the profile after
every position (a snapshot) so that a later permutation is re-planned only from its first
changed position.

Snapshots live in two buffers (``S_*[2, n + 1, ...]``); ``refslot[p]`` says which buffer
holds the reference (last accepted) plan's snapshot before position ``p``; a candidate
writes its snapshots into the other buffer, and accepting it flips ``refslot`` from its
first changed position on (no copy).

Everything here is plain integer and float arithmetic in the order the Python reference
uses (``tests/opt_support.py``), so plans and scores are identical bit for bit.  Compiled
with numba (``cache=True``: the first use on a machine compiles for a few seconds, later
processes load the cached machine code).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

INF = math.inf
_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)

#: objective codes (coburst.core.plan.OBJECTIVES)
SUM, SQUARE, CUBE, START = 0, 1, 2, 3


@njit(cache=True)
def _popcount(x):
    x = x - ((x >> _ONE) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


@njit(cache=True)
def _bisect(a, lo, hi, x):
    """``bisect.bisect_left(a, x, lo, hi)``."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _count(m):
    c = 0
    for w in range(m.shape[0]):
        c += _popcount(m[w])
    return c


@njit(cache=True)
def _bit(m, i):
    return (m[i >> 6] >> np.uint64(i & 63)) & _ONE


@njit(cache=True)
def _set_run(out, s, length):
    for i in range(s, s + length):
        out[i >> 6] |= _ONE << np.uint64(i & 63)


@njit(cache=True)
def select_nodes(m, res, n, out):
    """:func:`coburst.core.placement.select_nodes` over the words ``m`` (``n`` nodes):
    the smallest run of consecutive free indices that fits, lowest index first; else the
    longest runs first, lowest index on ties, the last one cut.  Writes ``out``."""
    W = m.shape[0]
    if _count(m) == res:
        for w in range(W):
            out[w] = m[w]
        return
    for w in range(W):
        out[w] = _ZERO
    run_s = np.empty(n, np.int64)
    run_l = np.empty(n, np.int64)
    nr = 0
    best_s = -1
    best_l = -1
    i = 0
    while i < n:
        if _bit(m, i):
            s = i
            while i < n and _bit(m, i):
                i += 1
            ln = i - s
            run_s[nr] = s
            run_l[nr] = ln
            nr += 1
            if ln >= res and (best_l < 0 or ln < best_l):
                best_s = s
                best_l = ln
        else:
            i += 1
    if best_l >= 0:
        _set_run(out, best_s, res)
        return
    # longest first, lowest start on ties (runs are in start order: a stable insertion
    # sort by decreasing length)
    order = np.empty(nr, np.int64)
    for t in range(nr):
        u = t
        while u > 0 and run_l[order[u - 1]] < run_l[t]:
            order[u] = order[u - 1]
            u -= 1
        order[u] = t
    left = res
    for t in range(nr):
        r = order[t]
        take = run_l[r] if run_l[r] < left else left
        _set_run(out, run_s[r], take)
        left -= take
        if left == 0:
            break


@njit(cache=True)
def place_bb(nmask, bb, avail, seg_start, seg_end, seg_pref, seg_plen, use):
    """:func:`coburst.core.placement.place_bb`: bytes ``use`` taken on every BB node when
    each chosen node (``nmask``), in index order, takes ``bb`` bytes on the first BB node
    of its preference list with room (runs of nodes sharing one list served together)."""
    nbb = avail.shape[0]
    slots = np.empty(nbb, np.int64)
    for b in range(nbb):
        slots[b] = avail[b] // bb
        use[b] = 0
    for g in range(seg_start.shape[0]):
        need = 0
        for i in range(seg_start[g], seg_end[g]):
            if _bit(nmask, i):
                need += 1
        if need == 0:
            continue
        for t in range(seg_plen[g]):
            b = seg_pref[g, t]
            sb = slots[b]
            if sb:
                take = sb if sb < need else need
                use[b] += take * bb
                slots[b] = sb - take
                need -= take
                if need == 0:
                    break


@njit(cache=True)
def earliest(times, free, cnt, bbr, tot, T, res, wall, bb, k, n, seg_start, seg_end, seg_pref, seg_plen,
             out_mask, out_avail, out_use):
    """Earliest start >= breakpoint ``k`` of ``res`` nodes for ``wall`` seconds with ``bb``
    bytes per node (as :meth:`coburst.core.profile.Profile.earliest` with storage): the
    start (inf if never), with the chosen nodes in ``out_mask``, the free BB bytes over
    the window in ``out_avail`` and the bytes taken in ``out_use`` (when ``bb > 0``)."""
    W = free.shape[1]
    nbb = bbr.shape[1]
    need = res * bb
    m = np.empty(W, np.uint64)
    while k < T:
        s = times[k]
        e = s + wall
        if e != INF:
            last = _bisect(times, k, T, e) - 1
        else:
            last = T - 1
        if last < k:
            last = k
        j = last
        while j >= k and cnt[j] >= res and tot[j] >= need:
            j -= 1
        if j >= k:
            k = j + 1
            continue
        for w in range(W):
            m[w] = free[k, w]
        for r in range(k + 1, last + 1):
            for w in range(W):
                m[w] &= free[r, w]
        if _count(m) >= res:
            if bb == 0:
                select_nodes(m, res, n, out_mask)
                return s
            for b in range(nbb):
                a = bbr[k, b]
                for r in range(k + 1, last + 1):
                    if bbr[r, b] < a:
                        a = bbr[r, b]
                out_avail[b] = a
            slots = 0
            for b in range(nbb):
                slots += out_avail[b] // bb
            if slots >= res:
                select_nodes(m, res, n, out_mask)
                place_bb(out_mask, bb, out_avail, seg_start, seg_end, seg_pref, seg_plen, out_use)
                return s
        k += 1
    return INF


@njit(cache=True)
def _copy_rows(st, sf, sc, sb, so, a, b, dt, df, dc, db, do, o):
    ln = b - a
    if ln > 0:
        dt[o:o + ln] = st[a:b]
        df[o:o + ln] = sf[a:b]
        dc[o:o + ln] = sc[a:b]
        db[o:o + ln] = sb[a:b]
        do[o:o + ln] = so[a:b]
    return o + ln


@njit(cache=True)
def _dup_row(t, sf, sc, sb, so, r, dt, df, dc, db, do, o):
    dt[o] = t
    df[o] = sf[r]
    dc[o] = sc[r]
    db[o] = sb[r]
    do[o] = so[r]
    return o + 1


@njit(cache=True)
def copy_occupy(st, sf, sc, sb, so, T, dt, df, dc, db, do, s, e, mask, res, use, has_bb):
    """The source profile (rows ``0..T-1``) with ``mask``/``res`` nodes and ``use`` bytes
    taken during ``[s, e)``, written to the destination; returns its number of rows."""
    ks = _bisect(st, 0, T, s)
    s_new = not (ks < T and st[ks] == s)
    o = _copy_rows(st, sf, sc, sb, so, 0, ks, dt, df, dc, db, do, 0)
    if s_new:
        o = _dup_row(s, sf, sc, sb, so, ks - 1, dt, df, dc, db, do, o)
    first = o - 1 if s_new else o
    if e == INF:
        o = _copy_rows(st, sf, sc, sb, so, ks, T, dt, df, dc, db, do, o)
        stop = o
    else:
        ke = _bisect(st, 0, T, e)
        o = _copy_rows(st, sf, sc, sb, so, ks, ke, dt, df, dc, db, do, o)
        stop = o
        if not (ke < T and st[ke] == e):
            o = _dup_row(e, sf, sc, sb, so, ke - 1, dt, df, dc, db, do, o)
        o = _copy_rows(st, sf, sc, sb, so, ke, T, dt, df, dc, db, do, o)
    W = mask.shape[0]
    usum = 0
    if has_bb:
        for b in range(use.shape[0]):
            usum += use[b]
    for r in range(first, stop):
        for w in range(W):
            df[r, w] &= ~mask[w]
        dc[r] -= res
        if has_bb:
            for b in range(use.shape[0]):
                db[r, b] -= use[b]
            do[r] -= usum
    return o


@njit(cache=True)
def _step(objective, score, wait, start):
    if objective == SUM:
        return score + wait
    if objective == SQUARE:
        return score + wait * wait
    if objective == CUBE:
        return score + wait * wait * wait
    return start if start > score else score


@njit(cache=True)
def evaluate(perm, k, bound, objective, now, n_nodes, refslot, S_times, S_free, S_cnt, S_bb, S_tot, S_T, S_score,
             R_start, C_start, C_mask, C_avail, C_use, res, wall, bbq, sub, est0, dom_ptr, dom_idx,
             seg_start, seg_end, seg_pref, seg_plen, keep_going):
    """Plan of ``perm`` from position ``k`` (positions before ``k`` are the reference's):
    returns ``(score, placed)``; score inf when a job never fits or as soon as the partial
    score reaches ``bound``.  Each earliest-start search starts at the latest of two lower
    bounds (both hold in every plan): the job's earliest start on the base profile
    (``est0``) and the start of every job it dominates (no more nodes, walltime or BB per
    node: ``dom``) already placed in this plan.  ``keep_going`` (whole plans only): a job
    that never fits gets start inf and the next ones are still placed."""
    n = perm.shape[0]
    cst = np.empty(res.shape[0])
    cst[:] = -INF
    for p in range(k):
        cst[perm[p]] = R_start[p]
        C_start[p] = R_start[p]
    src = refslot[k]
    score = S_score[src, k]
    placed = 0
    for pos in range(k, n):
        i = perm[pos]
        T = S_T[src, pos]
        times = S_times[src, pos]
        e0 = est0[i]
        for t in range(dom_ptr[i], dom_ptr[i + 1]):
            sy = cst[dom_idx[t]]
            if sy > e0:
                e0 = sy
        lo = _bisect(times, 0, T, e0) if e0 > now else 0
        has_bb = bbq[i] > 0
        s = earliest(times, S_free[src, pos], S_cnt[src, pos], S_bb[src, pos], S_tot[src, pos], T, res[i], wall[i],
                     bbq[i], lo, n_nodes, seg_start, seg_end, seg_pref, seg_plen, C_mask[pos], C_avail[pos],
                     C_use[pos])
        placed += 1
        if s == INF:
            if not keep_going:
                return INF, placed
            C_start[pos] = INF
            score = INF
            if pos + 1 < n:
                dst = 1 - refslot[pos + 1]
                S_T[dst, pos + 1] = _copy_rows(times, S_free[src, pos], S_cnt[src, pos], S_bb[src, pos],
                                               S_tot[src, pos], 0, T, S_times[dst, pos + 1], S_free[dst, pos + 1],
                                               S_cnt[dst, pos + 1], S_bb[dst, pos + 1], S_tot[dst, pos + 1], 0)
                src = dst
            continue
        C_start[pos] = s
        cst[i] = s
        score = _step(objective, score, s - sub[i], s)
        if score >= bound and not keep_going:
            return INF, placed
        if pos + 1 < n:
            dst = 1 - refslot[pos + 1]
            S_T[dst, pos + 1] = copy_occupy(times, S_free[src, pos], S_cnt[src, pos], S_bb[src, pos],
                                            S_tot[src, pos], T, S_times[dst, pos + 1], S_free[dst, pos + 1],
                                            S_cnt[dst, pos + 1], S_bb[dst, pos + 1], S_tot[dst, pos + 1], s,
                                            s + wall[i], C_mask[pos], res[i], C_use[pos], has_bb)
            S_score[dst, pos + 1] = score
            src = dst
    return score, placed


@njit(cache=True)
def base_earliest(times, free, cnt, bbr, tot, T, res, wall, bbq, n_nodes, seg_start, seg_end, seg_pref, seg_plen):
    """Earliest start of every job on the base profile (inf: never)."""
    W = free.shape[1]
    nbb = bbr.shape[1]
    out = np.empty(res.shape[0])
    m = np.empty(W, np.uint64)
    av = np.empty(nbb, np.int64)
    us = np.empty(nbb, np.int64)
    for i in range(res.shape[0]):
        out[i] = earliest(times, free, cnt, bbr, tot, T, res[i], wall[i], bbq[i], 0, n_nodes, seg_start, seg_end,
                          seg_pref, seg_plen, m, av, us)
    return out
