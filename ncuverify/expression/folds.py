"""Reading a parsed expression: its metrics, a copy with some replaced, its value and its text. None of
them recurses: a + b + c + ... is as deep as it is long."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

from ncuverify.expression.nodes import BinaryOp, Expr, ExpressionError, MetricRef, Negate, Number


def references(expr: Expr) -> Iterator[MetricRef]:
    """Every metric the expression reads, in order of appearance."""
    pending = [expr]
    while pending:
        node = pending.pop()
        if isinstance(node, MetricRef):
            yield node
        elif isinstance(node, Negate):
            pending.append(node.operand)
        elif isinstance(node, BinaryOp):
            pending += [node.right, node.left]


T = TypeVar("T")


def _fold(
    expr: Expr,
    leaf: Callable[[Number | MetricRef], T],
    negate: Callable[[Negate, T], T],
    binary: Callable[[BinaryOp, T, T], T],
) -> T:
    """Combine the expression bottom-up, left before right, with a stack of its own instead of recursion."""
    done: list[T] = []
    pending: list[tuple[Expr, bool]] = [(expr, False)]
    while pending:
        node, operands_done = pending.pop()
        if isinstance(node, Negate):
            if operands_done:
                done.append(negate(node, done.pop()))
            else:
                pending += [(node, True), (node.operand, False)]
        elif isinstance(node, BinaryOp):
            if operands_done:
                right = done.pop()
                done.append(binary(node, done.pop(), right))
            else:
                pending += [(node, True), (node.right, False), (node.left, False)]
        else:
            done.append(leaf(node))
    return done[0]


def map_refs(expr: Expr, replace: Callable[[MetricRef], Expr]) -> Expr:
    """The expression with every metric reference replaced by what replace returns for it."""
    return _fold(
        expr,
        lambda leaf: replace(leaf) if isinstance(leaf, MetricRef) else leaf,
        lambda _, operand: Negate(operand),
        lambda node, left, right: BinaryOp(node.op, left, right),
    )


def evaluate(expr: Expr, lookup: Callable[[MetricRef], float]) -> float:
    """Compute the expression, reading each metric through lookup."""
    return _fold(
        expr,
        lambda leaf: leaf.value if isinstance(leaf, Number) else lookup(leaf),
        lambda _, operand: -operand,
        _arithmetic,
    )


def _arithmetic(node: BinaryOp, left: float, right: float) -> float:
    if node.op == "+":
        return left + right
    if node.op == "-":
        return left - right
    if node.op == "*":
        return left * right
    if right == 0:
        raise ExpressionError(f"division by zero: {render(node.right)} is 0")
    return left / right


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


def render(expr: Expr) -> str:
    """The expression as text, with the parentheses its grouping needs: parse(render(e)) is e again."""
    return _fold(expr, _leaf_text, _negation_text, _binary_text)


def _leaf_text(leaf: Number | MetricRef) -> str:
    if isinstance(leaf, MetricRef):
        return str(leaf)
    short = f"{leaf.value:g}"
    return short if float(short) == leaf.value else repr(leaf.value)


def _negation_text(node: Negate, operand: str) -> str:
    return f"-({operand})" if isinstance(node.operand, BinaryOp) else f"-{operand}"


def _binary_text(node: BinaryOp, left: str, right: str) -> str:
    """Operators group from the left: a - (b - c) needs its parentheses, (a - b) - c does not."""
    precedence = _PRECEDENCE[node.op]
    if isinstance(node.left, BinaryOp) and _PRECEDENCE[node.left.op] < precedence:
        left = f"({left})"
    if isinstance(node.right, BinaryOp) and _PRECEDENCE[node.right.op] <= precedence:
        right = f"({right})"
    return f"{left} {node.op} {right}"
