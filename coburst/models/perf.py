"""Performance models of jobs that change size: ElastiSim-style expressions and speedup models.

An **expression** is a text such as ``"2e9 * iteration / num_nodes + 0.5"``, parsed once with
:mod:`ast` and evaluated by walking the tree with a whitelist: numbers, variables, ``+ - * /
// % **`` (``^`` is ``**``, a power as in ElastiSim's exprtk expressions), comparisons, ``and``,
``or``, ``not``, ``a if c else b`` and the functions of :data:`FUNCTIONS`.  Nothing else is
accepted (no attribute, no subscript, no lambda, no call of anything not listed): no ``eval``.

The variables are ``num_nodes`` (the job's current number of nodes), ``iteration`` (0-based
iteration of the running phase), ``iterations`` (iterations of that phase), ``old_num_nodes``
(in reconfiguration costs) and the job's ``arguments``.

The built-in **speedup models** give a time from the time on one node ``t1``:

* Amdahl (1967): ``t1 * (s + (1 - s) / n)``, ``s`` the serial fraction;
* Downey (1997, "A model for speedup of parallel programs", UCB/CSD-97-933): the speedup
  ``S(n)`` of a program of average parallelism ``A`` and variance of parallelism ``sigma``,
  time ``t1 / S(n)``.

>>> Expression("2 * num_nodes ^ 2 + max(iteration, 1)").evaluate({"num_nodes": 3, "iteration": 0})
19.0
>>> round(amdahl(100.0, 4, 0.1), 6)
32.5
>>> downey_speedup(4, 8.0, 0.0)
4.0
"""

from __future__ import annotations

import ast
import math
import operator
from typing import Any, Mapping

__all__ = ["Expression", "ExpressionError", "FUNCTIONS", "amdahl", "downey_speedup", "downey"]


class ExpressionError(ValueError):
    """An expression that cannot be parsed or evaluated (the caller names the file and place)."""


def _checked_pow(a: float, b: float) -> float:
    if abs(b) > 1024 or (abs(a) > 1e6 and abs(b) > 64):
        raise ExpressionError(f"power {a!r} ** {b!r} is too large")
    try:
        return float(a) ** float(b)
    except (OverflowError, ZeroDivisionError) as exc:
        raise ExpressionError(f"power {a!r} ** {b!r}: {exc}") from None


def _div(a: float, b: float) -> float:
    if b == 0:
        raise ExpressionError("division by zero")
    return a / b


def _floordiv(a: float, b: float) -> float:
    if b == 0:
        raise ExpressionError("division by zero")
    return float(a // b)


def _mod(a: float, b: float) -> float:
    if b == 0:
        raise ExpressionError("modulo by zero")
    return float(a % b)


def _log(x: float, base: float | None = None) -> float:
    if x <= 0 or (base is not None and (base <= 0 or base == 1)):
        raise ExpressionError(f"log of {x!r}" + (f" in base {base!r}" if base is not None else ""))
    return math.log(x) if base is None else math.log(x, base)


def _sqrt(x: float) -> float:
    if x < 0:
        raise ExpressionError(f"sqrt of {x!r}")
    return math.sqrt(x)


#: the functions an expression may call, with their numbers of arguments (min, max)
FUNCTIONS: dict[str, tuple[Any, int, int]] = {
    "min": (min, 1, 64), "max": (max, 1, 64), "abs": (abs, 1, 1), "sqrt": (_sqrt, 1, 1),
    "log": (_log, 1, 2), "log2": (lambda x: _log(x, 2), 1, 1), "log10": (lambda x: _log(x, 10), 1, 1),
    "exp": (lambda x: math.exp(min(x, 700.0)), 1, 1), "ceil": (lambda x: float(math.ceil(x)), 1, 1),
    "floor": (lambda x: float(math.floor(x)), 1, 1), "round": (lambda x: float(round(x)), 1, 1),
    "pow": (_checked_pow, 2, 2),
}

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: _div,
           ast.FloorDiv: _floordiv, ast.Mod: _mod, ast.Pow: _checked_pow}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}
_MAX_LENGTH = 2000


class Expression:
    """A parsed arithmetic expression (see the module's docstring); a number is one too."""

    __slots__ = ("text", "tree", "names", "constant")

    def __init__(self, text: str | int | float):
        if isinstance(text, bool) or not isinstance(text, (str, int, float)):
            raise ExpressionError(f"expected a number or an expression string, got {text!r}")
        self.text = str(text)
        if not isinstance(text, str):
            if not math.isfinite(text):
                raise ExpressionError(f"not a finite number: {text!r}")
            self.tree, self.names, self.constant = None, frozenset(), float(text)
            return
        if len(text) > _MAX_LENGTH:
            raise ExpressionError(f"expression longer than {_MAX_LENGTH} characters")
        try:
            tree = ast.parse(text.strip().replace("^", "**"), mode="eval")  # (exprtk's power, its precedence)
        except SyntaxError as exc:
            raise ExpressionError(f"invalid expression {text!r}: {exc.msg}") from None
        names: set[str] = set()
        self._check(tree.body, names)
        self.tree, self.names, self.constant = tree.body, frozenset(names), None

    def _check(self, node: ast.AST, names: set[str]) -> None:
        kind = type(node)
        if kind is ast.Constant:
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
                raise ExpressionError(f"in {self.text!r}: only numbers are allowed, not {node.value!r}")
        elif kind is ast.Name:
            if node.id in FUNCTIONS:
                raise ExpressionError(f"in {self.text!r}: function {node.id!r} used without a call")
            names.add(node.id)
        elif kind is ast.BinOp and type(node.op) in _BINARY:
            self._check(node.left, names)
            self._check(node.right, names)
        elif kind is ast.UnaryOp and type(node.op) in (ast.USub, ast.UAdd, ast.Not):
            self._check(node.operand, names)
        elif kind is ast.BoolOp:
            for value in node.values:
                self._check(value, names)
        elif kind is ast.Compare and all(type(op) in _COMPARE for op in node.ops):
            for value in (node.left, *node.comparators):
                self._check(value, names)
        elif kind is ast.IfExp:
            for value in (node.test, node.body, node.orelse):
                self._check(value, names)
        elif kind is ast.Call:
            if type(node.func) is not ast.Name or node.func.id not in FUNCTIONS or node.keywords:
                shown = node.func.id if type(node.func) is ast.Name else ast.unparse(node.func)
                raise ExpressionError(f"in {self.text!r}: unknown function {shown!r} "
                                      f"(known: {', '.join(sorted(FUNCTIONS))})")
            _, lo, hi = FUNCTIONS[node.func.id]
            if not lo <= len(node.args) <= hi:
                raise ExpressionError(f"in {self.text!r}: {node.func.id}() takes {lo}"
                                      + (f" to {hi}" if hi != lo else "") + " argument(s)")
            for arg in node.args:
                self._check(arg, names)
        else:
            raise ExpressionError(f"in {self.text!r}: {ast.unparse(node)!r} is not allowed (numbers, variables, "
                                  "arithmetic, comparisons, 'if else' and the listed functions only)")

    def evaluate(self, variables: Mapping[str, float]) -> float:
        """The value with ``variables``; :class:`ExpressionError` on an unknown variable, a
        division by zero, a value that is not finite."""
        if self.constant is not None:
            return self.constant
        value = float(self._eval(self.tree, variables))
        if not math.isfinite(value):
            raise ExpressionError(f"{self.text!r} is not finite ({value}) with {dict(variables)}")
        return value

    def _eval(self, node: ast.AST, env: Mapping[str, float]) -> Any:
        kind = type(node)
        if kind is ast.Constant:
            return node.value
        if kind is ast.Name:
            try:
                return env[node.id]
            except KeyError:
                raise ExpressionError(f"in {self.text!r}: unknown variable {node.id!r} "
                                      f"(known: {', '.join(sorted(env))})") from None
        if kind is ast.BinOp:
            return _BINARY[type(node.op)](self._eval(node.left, env), self._eval(node.right, env))
        if kind is ast.UnaryOp:
            value = self._eval(node.operand, env)
            op = type(node.op)
            return -value if op is ast.USub else (+value if op is ast.UAdd else float(not value))
        if kind is ast.BoolOp:
            is_and = type(node.op) is ast.And
            value = None
            for sub in node.values:
                value = self._eval(sub, env)
                if bool(value) != is_and:
                    return value
            return value
        if kind is ast.Compare:
            left = self._eval(node.left, env)
            for op, right_node in zip(node.ops, node.comparators):
                right = self._eval(right_node, env)
                if not _COMPARE[type(op)](left, right):
                    return 0.0
                left = right
            return 1.0
        if kind is ast.IfExp:
            return self._eval(node.body if self._eval(node.test, env) else node.orelse, env)
        func = FUNCTIONS[node.func.id][0]
        return func(*(self._eval(arg, env) for arg in node.args))

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"


def amdahl(t1: float, n: int, serial_fraction: float) -> float:
    """Amdahl's law: the time on ``n`` nodes of a program taking ``t1`` on one node."""
    return t1 * (serial_fraction + (1.0 - serial_fraction) / n)


def downey_speedup(n: float, A: float, sigma: float) -> float:
    """Downey's speedup ``S(n)`` (low variance ``sigma <= 1``, high variance ``sigma >= 1``)."""
    if n <= 1:
        return 1.0 if n == 1 else float(n)
    if sigma <= 1:
        if n <= A:
            return A * n / (A + sigma * (n - 1) / 2)
        if n <= 2 * A - 1:
            return A * n / (sigma * (A - 0.5) + n * (1 - sigma / 2))
        return float(A)
    if n <= A + A * sigma - sigma:
        return n * A * (sigma + 1) / (sigma * (n + A - 1) + A)
    return float(A)


def downey(t1: float, n: int, A: float, sigma: float) -> float:
    """The time on ``n`` nodes of a program taking ``t1`` on one node, after Downey's model."""
    return t1 / downey_speedup(n, A, sigma)
