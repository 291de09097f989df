"""Fit candidate distributions to per-processor memory requests (Kopański 2020, §2.5, Table 2.2).

The thesis fitted five distributions — exponential, lognormal, logistic, half-logistic
and beta — to METACENTRUM-2013-3 memory requests (KB per processor, jobs with -1 or 0
removed) with 5-fold cross-validation: each fold is left out once, the distribution is
fitted (maximum likelihood, ``scipy.stats.<dist>.fit``) on the four others and the
Kolmogorov-Smirnov D statistic is computed on the left-out fold.  The table reports the
mean and standard deviation of D over the folds; the model's parameters are the means of
the parameters fitted on the folds.  The lowest mean D wins.

The beta distribution is fitted on the support ``[min, max]`` of the training folds
(widened by 0.1 % of the range on each side) with ``loc`` and ``scale`` held there; a
four-parameter free fit is numerically fragile and the thesis does not say how its
support was chosen.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from coburst.errors import InputError

#: display name -> scipy distribution name, in Table 2.2's order
CANDIDATES = {
    "Exponential": "expon",
    "Log-normal": "lognorm",
    "Logistic": "logistic",
    "Half-logistic": "halflogistic",
    "Beta": "beta",
}


@dataclass
class FitResult:
    name: str
    scipy_name: str
    ks: list[float] = field(default_factory=list)  # one D per fold
    params: list[tuple[float, ...]] = field(default_factory=list)  # one tuple per fold

    @property
    def ks_mean(self) -> float:
        return float(np.mean(self.ks))

    @property
    def ks_std(self) -> float:
        return float(np.std(self.ks))

    @property
    def param_names(self) -> list[str]:
        dist = getattr(stats, self.scipy_name)
        shapes = [s.strip() for s in dist.shapes.split(",")] if dist.shapes else []
        return shapes + ["loc", "scale"]

    @property
    def mean_params(self) -> dict[str, float]:
        arr = np.asarray(self.params, dtype=float)
        return dict(zip(self.param_names, arr.mean(axis=0).tolist()))

    @property
    def std_params(self) -> dict[str, float]:
        arr = np.asarray(self.params, dtype=float)
        return dict(zip(self.param_names, arr.std(axis=0).tolist()))

    def frozen(self):
        """The distribution with the averaged parameters."""
        return getattr(stats, self.scipy_name)(**self.mean_params)


def fit_one(scipy_name: str, train: np.ndarray) -> tuple[float, ...]:
    """Maximum-likelihood parameters of one distribution on ``train``."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return _fit_one(scipy_name, train)


def _fit_one(scipy_name: str, train: np.ndarray) -> tuple[float, ...]:
    dist = getattr(stats, scipy_name)
    if scipy_name == "beta":
        lo, hi = float(train.min()), float(train.max())
        pad = (hi - lo) * 1e-3 or 1.0
        return tuple(float(x) for x in dist.fit(train, floc=lo - pad, fscale=(hi - lo) + 2 * pad))
    if scipy_name == "lognorm":
        # a good start for (s, loc, scale): log-moments of the data shifted below its minimum
        shift = float(train.min()) - 1e-3 * (float(np.ptp(train)) or 1.0)
        logs = np.log(train - shift)
        guess = (float(logs.std()) or 1.0,)
        params = dist.fit(train, *guess, loc=shift, scale=float(np.exp(logs.mean())))
        return tuple(float(x) for x in params)
    return tuple(float(x) for x in dist.fit(train))


def cross_validate(values, folds: int = 5, seed: int = 0, candidates: dict[str, str] | None = None,
                   source: str | None = None, where: str | None = None) -> list[FitResult]:
    """Fit every candidate with ``folds``-fold cross-validation; results in candidate order.

    ``source`` and ``where`` (the file and the field the values come from) name them in errors.
    """
    data = np.asarray(values, dtype=float)
    data = data[np.isfinite(data)]
    if folds < 2:
        raise InputError("--folds", None, f"need at least 2 folds, got {folds}")
    if data.size < folds * 5:
        raise InputError(source, where, f"too few values to fit: {data.size} positive value(s), need at least "
                         f"{folds * 5} (5 per fold with {folds} folds)")
    rng = np.random.default_rng(seed)
    order = rng.permutation(data.size)
    parts = np.array_split(order, folds)
    results = []
    for name, scipy_name in (candidates or CANDIDATES).items():
        res = FitResult(name, scipy_name)
        for k in range(folds):
            test = data[parts[k]]
            train = data[np.concatenate([parts[j] for j in range(folds) if j != k])]
            params = fit_one(scipy_name, train)
            res.params.append(params)
            res.ks.append(float(stats.kstest(test, getattr(stats, scipy_name)(*params).cdf).statistic))
        results.append(res)
    return results


def best(results: list[FitResult]) -> FitResult:
    """The candidate with the lowest mean KS statistic."""
    return min(results, key=lambda r: r.ks_mean)


def memory_per_processor(jobs, field_name: str = "requested_memory") -> np.ndarray:
    """Positive memory values (KB per processor) of SWF jobs; -1 (unknown) and 0 are dropped."""
    values = np.array([getattr(j, field_name) for j in jobs], dtype=float)
    return values[values > 0]
