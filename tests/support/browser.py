"""A page as a real browser renders it: Debian's Chromium, headless, ``--dump-dom`` (the DOM
after load, serialised), parsed into a small tree the tests query.

The flags are the ones this machine needs (no GPU, no sandbox as root, no background network:
the machine's closed network refuses Chromium's own connections). A missing ``chromium`` fails
the test (tests/peers/policy.py) with how to install it.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from tests.peers.policy import require_peer

__all__ = ["Node", "rendered_dom"]

_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
_VOID = {"meta", "link", "br", "hr", "img", "input", "col", "area", "base", "source", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The node's text, its children's included, in document order."""
        return "".join(self.texts)

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            yield from child.walk()

    def find_all(self, tag: str = "", cls: str = "", **attrs: str) -> list[Node]:
        return [
            node
            for node in self.walk()
            if (not tag or node.tag == tag)
            and (not cls or cls in node.attrs.get("class", "").split())
            and all(node.attrs.get(name.replace("_", "-")) == v for name, v in attrs.items())
        ]

    def find(self, tag: str = "", cls: str = "", **attrs: str) -> Node:
        found = self.find_all(tag, cls, **attrs)
        assert found, f"no <{tag or '*'} class={cls!r} {attrs}> in <{self.tag}>"
        return found[0]


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {name: value or "" for name, value in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        for node in self.stack:
            node.texts.append(data)


def rendered_dom(page: Path) -> Node:
    """``page`` (a local file) loaded in headless Chromium; the DOM it built, as a tree."""
    binary = shutil.which("chromium")
    require_peer("chromium", binary is not None, "apt-get install chromium")
    assert binary is not None
    with tempfile.TemporaryDirectory(prefix="fakemaster-chromium-") as profile:
        done = subprocess.run(
            [binary, *_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.resolve().as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "<html" in done.stdout, f"chromium printed no DOM: {done.stderr[-2000:]}"
    builder = _TreeBuilder()
    builder.feed(done.stdout)
    builder.close()
    return builder.root
