"""``AgentHandle``: the agent as a handler sees it (``WorkTask.agent``, ``JobContext.agent``).

The contexts (contexts.py) and the job runner (jobs.py) hold the agent they belong to, and agent.py
builds them: naming ``Agent`` there would make the modules import each other (type-only imports
count). They name this port instead; ``Agent`` satisfies it structurally (a test keeps the
signatures equal), and the package's imports stay one way: agent → jobs → contexts → ports.

It lists what a handler may call while it works: plain requests and listeners. The work loop,
``on_job`` and ``close`` are left out: they are for the code that owns the agent, not for a handler
it runs (a handler awaiting ``close()`` would wait for itself).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Protocol

from .models import ClaimedTask, HelloResult, Task


class AgentHandle(Protocol):
    @property
    def instance_id(self) -> str: ...

    @property
    def role(self) -> str: ...

    @property
    def lock_window_s(self) -> float: ...

    @property
    def connected(self) -> bool: ...

    @property
    def closed(self) -> bool: ...

    @property
    def hello(self) -> Optional[HelloResult]: ...

    def on(self, event: str, fn: Callable[[Dict[str, Any]], None]) -> Callable[[], None]: ...

    async def request(self, type_: str, **fields: Any) -> Any: ...

    async def claim(self, role: Optional[str] = None) -> Optional[ClaimedTask]: ...

    async def renew(self, task_id: int, fence: int) -> str: ...

    async def report(self, task_id: int, fence: int, status: str, *, note: Optional[str] = None, output: Any = None, claim_next: bool = False) -> Dict[str, Any]: ...

    async def create_task(
        self,
        title: str,
        *,
        role: Optional[str] = None,
        priority: Optional[int] = None,
        payload: Any = None,
        depends_on: Optional[List[int]] = None,
        budget: Optional[Dict[str, float]] = None,
        idempotency_key: Optional[str] = None,
    ) -> tuple[Task, bool]: ...

    async def heartbeat(self) -> str: ...
