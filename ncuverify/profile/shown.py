"""Text from ncu's or the runner's output, made safe to show in a message."""

from __future__ import annotations

from ncuverify.text import one_line


def shown_name(name: str, limit: int = 80) -> str:
    """A name from ncu's or the runner's output, quoted for a message: escapes made visible, cut short."""
    return repr(name if len(name) <= limit else name[: limit - 3] + "...")


def shown_output(text: str, limit: int = 300) -> str:
    """Text from ncu's or the runner's output, made safe to show and cut to a line's length."""
    shown = one_line(text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."
