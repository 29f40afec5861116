"""``python -m fakemaster serve`` in a subprocess, its resident memory sampled from /proc."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

__all__ = ["ServeProcess"]

REPO_ROOT = Path(__file__).resolve().parents[2]


class ServeProcess:
    """``python -m fakemaster serve --binlog-dir DIR`` in a subprocess; its RSS sampled."""

    def __init__(
        self, directory: Path, stderr_path: Path, user: str, password: str, *extra: str
    ) -> None:
        self.stderr_path = stderr_path
        self._stderr = open(stderr_path, "w")  # noqa: SIM115 - a file, so the pipe never fills
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fakemaster",
                "serve",
                "--binlog-dir",
                str(directory),
                "--port",
                "0",
                "--user",
                user,
                "--password",
                password,
                *extra,
            ],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        assert found, line + self.stop()
        self.port = int(found.group(1))
        self.peak_rss = 0
        self.peak_anon = 0
        self._sampling = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def rss(self, field: str = "VmRSS") -> int:
        """The server's resident set size (or another ``/proc/PID/status`` field: ``RssAnon``
        is its private memory, without the files it maps), in bytes."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        kilobytes = re.search(rf"^{field}:\s+(\d+) kB", status, re.M)
        assert kilobytes
        return int(kilobytes.group(1)) * 1024

    def _sample(self) -> None:
        while not self._sampling.wait(0.005):
            try:
                self.peak_rss = max(self.peak_rss, self.rss())
                self.peak_anon = max(self.peak_anon, self.rss("RssAnon"))
            except (OSError, AssertionError):
                return

    def stop(self) -> str:
        """SIGTERM, wait; the server's stderr."""
        self._sampling.set()
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate(timeout=30)
        self._stderr.close()
        return self.stderr_path.read_text()
