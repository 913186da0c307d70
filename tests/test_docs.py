"""The README is the front door to docs/: it links every page there, and each of its relative links
names a file of the repository, as GitHub resolves them. (The pages themselves are checked by MkDocs in
strict mode, `make docs`.)"""

import re

from conftest import ROOT

# [text](target): a Markdown link or image; targets with a scheme (https:) are not the repository's.
LINK = re.compile(r"\]\(([^)\s]+)\)")


def readme_links() -> list[str]:
    text = (ROOT / "README.md").read_text()
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)  # code blocks hold no links
    return [target for target in LINK.findall(text) if not re.match(r"[a-z]+:", target)]


def test_the_readme_links_every_page_of_the_docs():
    linked = {target.split("#")[0] for target in readme_links()}
    pages = {f"docs/{page.name}" for page in (ROOT / "docs").glob("*.md")}
    assert pages and sorted(pages - linked) == []


def test_every_relative_link_of_the_readme_names_a_file_of_the_repository():
    links = readme_links()
    assert links and [target for target in links if not (ROOT / target.split("#")[0]).is_file()] == []
