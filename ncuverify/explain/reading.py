"""The rows of ncu's pages of free text (the details page with its rules, the source page), read by the
one page reader; a page that cannot be read is an InputError saying which page and why."""

from __future__ import annotations

from ncuverify.errors import InputError
from ncuverify.ncu.pages import Quoting, UnreadablePage, read_page


def page_rows(text: str, page: str, header: str | None = None) -> list[list[str]]:
    """The rows of the page named page (from the first that starts with header, if given)."""
    try:
        return read_page(text, Quoting.TEXT, header)
    except UnreadablePage as error:
        raise InputError(f"the ncu {page} page could not be read ({error})") from None
