"""token_from_environment: the agent token from Gaffer's hand-off pipe (GAFFER_TOKEN_FD) or from
GAFFER_TOKEN, taken out of os.environ so that processes started afterwards do not inherit it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

PROBE = """
import json, os, subprocess, sys
import gaffer_agent
token = gaffer_agent.token_from_environment()
again = gaffer_agent.token_from_environment()
child = subprocess.run([sys.executable, "-c", "import os, json; print(json.dumps(dict(os.environ)))"], capture_output=True, text=True).stdout
try:
    os.fstat(int(sys.argv[1]))
    fd_open = True
except OSError:
    fd_open = False
print(json.dumps({"token": token, "again": again, "child_env": json.loads(child), "fd_open": fd_open}))
"""


def _run(env_extra, pass_fds=(), probe_fd=-1):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GAFFER_")}
    env.update(env_extra)
    env["PYTHONPATH"] = str(SRC)
    proc = subprocess.Popen([sys.executable, "-c", PROBE, str(probe_fd)], env=env, pass_fds=pass_fds, stdout=subprocess.PIPE, text=True)
    out, _ = proc.communicate(timeout=30)
    return json.loads(out)


def test_reads_the_token_from_the_hand_off_pipe_once_and_closes_it() -> None:
    r, w = os.pipe()
    os.write(w, b"gft_piped-token-0123456789\n")
    os.close(w)
    try:
        got = _run({"GAFFER_TOKEN_FD": str(r)}, pass_fds=(r,), probe_fd=r)
    finally:
        os.close(r)
    assert got["token"] == "gft_piped-token-0123456789"
    assert got["again"] == got["token"]
    assert got["fd_open"] is False
    assert "GAFFER_TOKEN_FD" not in got["child_env"]


def test_takes_gaffer_token_and_copies_of_it_out_of_the_environment() -> None:
    got = _run({"GAFFER_TOKEN": "gft_env-token-0123456789", "COPY": "x-gft_env-token-0123456789-y", "KEEP": "me"})
    assert got["token"] == "gft_env-token-0123456789"
    assert "GAFFER_TOKEN" not in got["child_env"]
    assert "COPY" not in got["child_env"]
    assert got["child_env"]["KEEP"] == "me"


def test_reads_the_hand_off_file_once_and_deletes_it(tmp_path) -> None:
    token_file = tmp_path / "gaffer_token"
    token_file.write_text("gft_filed-token-0123456789")
    token_file.chmod(0o600)
    got = _run({"GAFFER_TOKEN_FILE": str(token_file)})
    assert got["token"] == "gft_filed-token-0123456789"
    assert not token_file.exists()
    assert "GAFFER_TOKEN_FILE" not in got["child_env"]
