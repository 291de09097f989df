"""Compiled kernel of the execution plans (Kopański 2020, §3.4, Alg. 8), used by
:class:`coburst.core.plan.PlanEvaluator`.

An availability profile is a set of rows, one per breakpoint: ``times[r]`` (start of the
segment), ``free[r]`` (free compute nodes as ``W`` 64-bit words, bit ``i`` = compute index
``i``), ``cnt[r]`` (their number), ``bbr[r]`` (free bytes of every BB node) and ``tot[r]``
(their sum).  A plan places the jobs of a permutation one after the other at their
earliest start (:func:`earliest`), with the node choice of
:func:`coburst.core.placement.select_nodes` (:func:`select_nodes`) and the BB placement of
:func:`coburst.core.placement.place_bb` (:func:`place_bb`), and keeps the profile before
every ``B``-th position (a snapshot) so that a later permutation is re-planned only from its
first changed position: the snapshot before it, plus the reference's placements up to it
replayed in place (:func:`occupy_inplace`); placements then occupy the work profile in place
(inserting rows after the start shifts only the later rows: plans place jobs later and
later, so this is cheap, where copying the whole profile at every position cost
O(rows x (node words + BB nodes)) per job -- most of a decision on 1000 nodes).

Snapshots live in two buffers (``S_*[2, n // B + 1, ...]``); ``refslot[b]`` says which
buffer holds the reference (last accepted) plan's snapshot ``b`` (before position ``b B``);
a candidate writes its snapshots into the other buffer, and accepting it flips ``refslot``
after its first changed position (no copy).

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
def _runs(m, n, run_s, run_l):
    """Maximal runs of set bits of the words ``m`` (``n`` nodes) in index order: starts
    and lengths into ``run_s``/``run_l``; returns their number.  Whole empty or full
    words are stepped over at once."""
    W = m.shape[0]
    nr = 0
    cur = -1   # start of the open run, -1: none
    for w in range(W):
        x = m[w]
        base = w << 6
        if x == _ZERO:
            if cur >= 0:
                run_s[nr] = cur
                run_l[nr] = base - cur
                nr += 1
                cur = -1
            continue
        if x == _ALL and base + 64 <= n:
            if cur < 0:
                cur = base
            continue
        top = n - base if n - base < 64 else 64
        for b in range(top):
            if (x >> np.uint64(b)) & _ONE:
                if cur < 0:
                    cur = base + b
            elif cur >= 0:
                run_s[nr] = cur
                run_l[nr] = base + b - cur
                nr += 1
                cur = -1
    if cur >= 0:
        run_s[nr] = cur
        run_l[nr] = n - cur
        nr += 1
    return nr


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
    cap = n // 2 + 1
    run_s = np.empty(cap, np.int64)
    run_l = np.empty(cap, np.int64)
    nr = _runs(m, n, run_s, run_l)
    best_s = -1
    best_l = -1
    for t in range(nr):
        ln = run_l[t]
        if ln >= res and (best_l < 0 or ln < best_l):
            best_s = run_s[t]
            best_l = ln
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
def _count_range(m, a, b):
    """Set bits of the words ``m`` at indices ``a..b-1``."""
    c = 0
    while a < b:
        w = a >> 6
        lo = a & 63
        hi = b - (w << 6)
        if hi > 64:
            hi = 64
        x = m[w] >> np.uint64(lo)
        width = hi - lo
        if width < 64:
            x &= (_ONE << np.uint64(width)) - _ONE
        c += _popcount(x)
        a = (w << 6) + hi
    return c


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
        need = _count_range(nmask, seg_start[g], seg_end[g])
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
                out_avail[b] = bbr[k, b]
            for r in range(k + 1, last + 1):
                for b in range(nbb):
                    if bbr[r, b] < out_avail[b]:
                        out_avail[b] = bbr[r, b]
            slots = 0
            for b in range(nbb):   # stopped once enough (free bytes are never negative)
                slots += out_avail[b] // bb
                if slots >= res:
                    break
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
    _take_rows(df, dc, db, do, first, stop, mask, res, use, has_bb)
    return o


@njit(cache=True)
def _take_rows(free, cnt, bbr, tot, first, stop, mask, res, use, has_bb):
    """Rows ``first..stop-1`` lose the ``mask`` nodes (``res`` of them) and ``use`` BB bytes."""
    W = mask.shape[0]
    usum = 0
    if has_bb:
        for b in range(use.shape[0]):
            usum += use[b]
    for r in range(first, stop):
        for w in range(W):
            free[r, w] &= ~mask[w]
        cnt[r] -= res
        if has_bb:
            for b in range(use.shape[0]):
                bbr[r, b] -= use[b]
            tot[r] -= usum


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
def _shift_down(times, free, cnt, bbr, tot, a, T):
    """Rows ``a..T-1`` moved to ``a+1..T`` (row ``a`` keeps its content)."""
    for r in range(T - 1, a - 1, -1):
        times[r + 1] = times[r]
        free[r + 1] = free[r]
        cnt[r + 1] = cnt[r]
        bbr[r + 1] = bbr[r]
        tot[r + 1] = tot[r]


@njit(cache=True)
def occupy_inplace(times, free, cnt, bbr, tot, T, s, e, mask, res, use, has_bb):
    """:func:`copy_occupy` in place: ``mask``/``res`` nodes and ``use`` bytes taken during
    ``[s, e)`` (new breakpoints inserted as copies of the rows they split); returns the
    new number of rows."""
    ks = _bisect(times, 0, T, s)
    if not (ks < T and times[ks] == s):
        _shift_down(times, free, cnt, bbr, tot, ks, T)
        times[ks] = s
        T += 1
    first = ks
    if e == INF:
        stop = T
    else:
        ke = _bisect(times, 0, T, e)
        if not (ke < T and times[ke] == e):
            _shift_down(times, free, cnt, bbr, tot, ke, T)
            free[ke] = free[ke - 1]
            cnt[ke] = cnt[ke - 1]
            bbr[ke] = bbr[ke - 1]
            tot[ke] = tot[ke - 1]
            times[ke] = e
            T += 1
        stop = ke
    _take_rows(free, cnt, bbr, tot, first, stop, mask, res, use, has_bb)
    return T


@njit(cache=True)
def evaluate(perm, k, bound, objective, now, n_nodes, B, refslot, S_times, S_free, S_cnt, S_bb, S_tot, S_T,
             Wt, Wf, Wc, Wb, Wo, R_start, R_mask, R_use, R_score, C_start, C_score, C_mask, C_avail, C_use,
             res, wall, bbq, sub, est0, dom_ptr, dom_idx, seg_start, seg_end, seg_pref, seg_plen, keep_going):
    """Plan of ``perm`` from position ``k`` (positions before ``k`` are the reference's):
    returns ``(score, placed)``; score inf when a job never fits or as soon as the partial
    score reaches ``bound``.  The profile is built in the work arrays ``W*`` from the
    reference's snapshot before position ``B * (k // B)`` (snapshots are kept every ``B``
    positions, in two buffers: ``refslot[b]`` holds the reference's snapshot ``b``) and the
    reference's placements up to ``k``; then every job is placed and occupied in place,
    and the snapshots after ``k`` are written to the other buffer.  Each earliest-start
    search starts at the latest of two lower bounds (both hold in every plan): the job's
    earliest start on the base profile (``est0``) and the start of every job it dominates
    (no more nodes, walltime or BB per node: ``dom``) already placed in this plan.
    ``keep_going`` (whole plans only): a job that never fits gets start inf and the next
    ones are still placed."""
    n = perm.shape[0]
    cst = np.empty(res.shape[0])
    cst[:] = -INF
    for p in range(k):
        cst[perm[p]] = R_start[p]
        C_start[p] = R_start[p]
    kb = k // B
    src = refslot[kb]
    T = S_T[src, kb]
    Wt[:T] = S_times[src, kb, :T]
    Wf[:T] = S_free[src, kb, :T]
    Wc[:T] = S_cnt[src, kb, :T]
    Wb[:T] = S_bb[src, kb, :T]
    Wo[:T] = S_tot[src, kb, :T]
    for p in range(kb * B, k):
        i = perm[p]
        T = occupy_inplace(Wt, Wf, Wc, Wb, Wo, T, R_start[p], R_start[p] + wall[i], R_mask[p], res[i], R_use[p],
                           bbq[i] > 0)
    score = R_score[k]
    placed = 0
    for pos in range(k, n):
        if pos > k and pos % B == 0:
            b = pos // B
            dst = 1 - refslot[b]
            S_times[dst, b, :T] = Wt[:T]
            S_free[dst, b, :T] = Wf[:T]
            S_cnt[dst, b, :T] = Wc[:T]
            S_bb[dst, b, :T] = Wb[:T]
            S_tot[dst, b, :T] = Wo[:T]
            S_T[dst, b] = T
        i = perm[pos]
        e0 = est0[i]
        for t in range(dom_ptr[i], dom_ptr[i + 1]):
            sy = cst[dom_idx[t]]
            if sy > e0:
                e0 = sy
        lo = _bisect(Wt, 0, T, e0) if e0 > now else 0
        s = earliest(Wt, Wf, Wc, Wb, Wo, T, res[i], wall[i], bbq[i], lo, n_nodes, seg_start, seg_end, seg_pref,
                     seg_plen, C_mask[pos], C_avail[pos], C_use[pos])
        placed += 1
        if s == INF:
            if not keep_going:
                return INF, placed
            C_start[pos] = INF
            score = INF
            C_score[pos + 1] = score
            continue
        C_start[pos] = s
        cst[i] = s
        score = _step(objective, score, s - sub[i], s)
        C_score[pos + 1] = score
        if score >= bound and not keep_going:
            return INF, placed
        if pos + 1 < n:
            T = occupy_inplace(Wt, Wf, Wc, Wb, Wo, T, s, s + wall[i], C_mask[pos], res[i], C_use[pos], bbq[i] > 0)
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


# ---------------------------------------------------------------------- filling at now
@njit(cache=True)
def _copy_starts(src_mask, src_used, src_use, src_end, src_av, dst_mask, dst_used, dst_use, dst_end, dst_av, a, b, o):
    """Rows ``a..b-1`` of the per-start arrays of one buffer into rows ``a+o..b-1+o`` of the other."""
    for s in range(a, b):
        dst_mask[s + o] = src_mask[s]
        dst_used[s + o] = src_used[s]
        dst_use[s + o] = src_use[s]
        dst_end[s + o] = src_end[s]
        dst_av[s + o] = src_av[s]


@njit(cache=True)
def now_fill(perm, k, m, mono, CF, free_now, min_res, res, bbq, kr, endr, bbrows, av0, n_nodes,
             R_cnt, R_flag, R_mask, R_used, R_use, R_end, R_av, C_cnt, C_flag, C_mask, C_used, C_use, C_end, C_av,
             seg_start, seg_end, seg_pref, seg_plen, out):
    """Greedy filling (Kopański 2020, Alg. 2) of ``perm`` at now, from position ``k`` on
    (positions before ``k`` are the reference's), as :class:`coburst.core.plan.NowFiller`
    describes it.  Buffers ``R_*`` hold the reference (last accepted) filling, ``C_*``
    receive this one: ``cnt[p]`` jobs started before position ``p``, ``flag[p]`` = 1 when the
    job at ``p`` starts; per start ``s`` (1-based; row 0 = nothing started) the used
    compute words ``mask[s]`` and BB bytes ``used[s]`` after it, its BB use ``use[s]``, end
    row ``end[s]`` and the free BB bytes it was placed in ``av[s]``.  From position ``m`` on the permutation holds the reference's jobs:
    once the state there equals the reference's (free BB never decreasing from now: the
    state is the used nodes and bytes), the rest is the reference's.  Writes the started
    job indices, in order, to ``out``; returns their number."""
    n = perm.shape[0]
    W = free_now.shape[0]
    nbb = av0.shape[0]
    c = R_cnt[k]
    _copy_starts(R_mask, R_used, R_use, R_end, R_av, C_mask, C_used, C_use, C_end, C_av, 0, c + 1, 0)
    for p in range(k + 1):
        C_cnt[p] = R_cnt[p]
    for p in range(k):
        C_flag[p] = R_flag[p]
    mask = C_mask[c].copy()
    used = C_used[c].copy()
    avail = np.empty(W, np.uint64)
    nm = np.empty(W, np.uint64)
    av = np.empty(nbb, np.int64)
    use = np.empty(nbb, np.int64)
    if mono:   # every job sees the free BB of now minus the started jobs' use
        for b in range(nbb):
            av[b] = av0[b] - used[b]

    free_left = 0
    for w in range(W):
        free_left += _popcount(free_now[w] & ~mask[w])
    full = free_left < min_res
    pos = k
    while pos < n:
        if full:
            for p in range(pos, n):
                C_flag[p] = 0
                C_cnt[p + 1] = c
            break
        if mono and pos >= m:
            cr = R_cnt[pos]
            same = True
            for w in range(W):
                if mask[w] != R_mask[cr, w]:
                    same = False
                    break
            if same:
                for b in range(nbb):
                    if used[b] != R_used[cr, b]:
                        same = False
                        break
            if same:
                ce = R_cnt[n]
                _copy_starts(R_mask, R_used, R_use, R_end, R_av, C_mask, C_used, C_use, C_end, C_av, cr + 1, ce + 1,
                             c - cr)
                for p in range(pos, n):
                    C_flag[p] = R_flag[p]
                    C_cnt[p + 1] = c + R_cnt[p + 1] - cr
                c += ce - cr
                break
        j = perm[pos]
        r = res[j]
        cnt = 0
        for w in range(W):
            avail[w] = CF[j, w] & ~mask[w]
            cnt += _popcount(avail[w])
        fits = cnt >= r
        bb = bbq[j]
        if fits and bb:
            if not mono:
                for b in range(nbb):
                    lo = bbrows[0, b]
                    for s in range(1, c + 1):
                        if C_end[s] > 0:
                            lo -= C_use[s, b]
                    av[b] = lo
                for row in range(1, kr[j] + 1):
                    for b in range(nbb):
                        v = bbrows[row, b]
                        for s in range(1, c + 1):
                            if C_end[s] > row:
                                v -= C_use[s, b]
                        if v < av[b]:
                            av[b] = v
            # sum(av // bb) >= r, stopped once reached (free bytes are never negative)
            slots = 0
            for b in range(nbb):
                slots += av[b] // bb
                if slots >= r:
                    break
            fits = slots >= r
        if fits:
            select_nodes(avail, r, n_nodes, nm)
            if bb:
                place_bb(nm, bb, av, seg_start, seg_end, seg_pref, seg_plen, use)
            else:
                for b in range(nbb):
                    use[b] = 0
            c += 1
            for w in range(W):
                mask[w] |= nm[w]
                C_mask[c, w] = mask[w]
            for b in range(nbb):
                C_av[c, b] = av[b]
                used[b] += use[b]
                C_used[c, b] = used[b]
                C_use[c, b] = use[b]
            if mono:
                for b in range(nbb):
                    av[b] -= use[b]
            C_end[c] = endr[j]
            C_flag[pos] = 1
            free_left = 0
            for w in range(W):
                free_left += _popcount(free_now[w] & ~mask[w])
            full = free_left < min_res
        else:
            C_flag[pos] = 0
        C_cnt[pos + 1] = c
        pos += 1
    t = 0
    for p in range(n):
        if C_flag[p]:
            out[t] = perm[p]
            t += 1
    return t
