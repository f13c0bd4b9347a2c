"""The agent token a process was handed (PROTOCOL §17).

Gaffer hands it over in a file or on a pipe: ``GAFFER_TOKEN_FILE`` names a 0600 file, deleted once
read (a ``long_running`` managed agent gets this); ``GAFFER_TOKEN_FD`` names an inherited file
descriptor, read to its end once and closed. An agent started by hand may still have it in
``GAFFER_TOKEN``. Either
way the variables leave ``os.environ``, so processes started afterwards do not inherit them (the
environment this process was started with stays in /proc/<pid>/environ: Gaffer hands tokens over
on a pipe so that it holds none). Later calls return the same value.
"""

from __future__ import annotations

import os
from typing import Optional

_taken: Optional[str] = None
_done = False


def token_from_environment() -> Optional[str]:
    global _taken, _done
    if _done:
        return _taken
    raw_fd = os.environ.pop("GAFFER_TOKEN_FD", None)
    token_file = os.environ.pop("GAFFER_TOKEN_FILE", None)
    token = os.environ.pop("GAFFER_TOKEN", None)
    if token_file:
        try:
            with open(token_file, "r", encoding="utf-8") as f:
                filed = f.read().rstrip("\r\n")
            os.remove(token_file)
            if filed:
                token = filed
        except OSError:
            pass
    if raw_fd is not None and raw_fd.isdigit() and int(raw_fd) >= 3:
        fd = int(raw_fd)
        chunks = []
        try:
            while True:
                chunk = os.read(fd, 4096)
                if not chunk:
                    break
                chunks.append(chunk)
        except OSError:
            chunks = []
        finally:
            try:
                os.close(fd)
            except OSError:
                pass
        piped = b"".join(chunks).decode("utf-8").rstrip("\r\n")
        if piped:
            token = piped
    if token:
        for name, value in list(os.environ.items()):
            if len(token) >= 8 and token in value:
                del os.environ[name]
    _taken, _done = token or None, True
    return _taken
