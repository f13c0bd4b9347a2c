"""``pip install ./sdk/python`` into a fresh venv, then an agent from that venv works a task on the
real Gaffer. The venv gets ``websockets`` from the package index (a recent release, i.e. the new
asyncio client), while the rest of the suite runs on whatever the system has (Debian: 10.4, the
legacy client): between them both client APIs meet a real server."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from conftest import Gaffer

PACKAGE = Path(__file__).resolve().parent.parent

# pip's words when it cannot reach an index or find a distribution there (the only reason to skip).
NO_INDEX = re.compile(r"No matching distribution found|Could not find a version that satisfies|Failed to establish a new connection|Network is unreachable|Temporary failure in name resolution")

AGENT = textwrap.dedent(
    """
    import asyncio, json, os, sys
    import gaffer_agent, websockets
    from gaffer_agent import _ws

    async def main():
        async with gaffer_agent.connect(os.environ["GAFFER_URL"], token=os.environ["GAFFER_TOKEN"], role=os.environ["ROLE"], name="venv") as agent:
            async def handle(task):
                return {"from": "venv", "websockets": websockets.__version__}
            worked = await agent.work(handle, max_tasks=1)
        print(json.dumps({"worked": worked, "new_api": _ws.NEW_API, "module": gaffer_agent.__file__}))

    asyncio.run(main())
    """
)


def test_pip_install_into_a_fresh_venv_and_work_a_task(gaffer: Gaffer, role: str) -> None:
    with tempfile.TemporaryDirectory(prefix="gaffer-venv-") as tmp:
        venv = Path(tmp) / "venv"
        made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
        if made.returncode != 0:
            pytest.skip(f"this Python cannot make a venv (Debian: apt-get install python3-venv): {made.stderr.strip()[-300:]}")
        python = str(venv / "bin" / "python")
        # A copy, so the build leaves nothing (build/, *.egg-info) in the source tree.
        source = Path(tmp) / "python"
        shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__", ".pytest_cache"))
        # pip as this machine configures it; an index it cannot reach is not retried (no waiting on it).
        pip_env = {**os.environ, "PIP_RETRIES": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        installed = subprocess.run([python, "-m", "pip", "install", "-q", str(source)], capture_output=True, text=True, timeout=300, env=pip_env)
        if installed.returncode != 0 and NO_INDEX.search(installed.stdout + installed.stderr):
            pytest.skip("pip cannot reach a package index with websockets and setuptools here: " + (installed.stderr.strip().splitlines() or ["?"])[-1])
        assert installed.returncode == 0, installed.stdout + installed.stderr

        created = gaffer.create_task("from the venv", role)
        env = {**os.environ, "GAFFER_URL": gaffer.agent_url, "GAFFER_TOKEN": gaffer.token(role), "ROLE": role}
        out = subprocess.run([python, "-c", AGENT], capture_output=True, text=True, timeout=60, env=env, cwd=tmp)
        assert out.returncode == 0, out.stderr
        result = __import__("json").loads(out.stdout.strip().splitlines()[-1])
        assert result["worked"] == 1
        assert result["module"].startswith(str(venv))  # the installed copy, not the source tree
        task = gaffer.task(created["id"])
        assert task["status"] == "done" and task["output"]["from"] == "venv"
        major = int(task["output"]["websockets"].split(".")[0])
        assert result["new_api"] is (major >= 13)
