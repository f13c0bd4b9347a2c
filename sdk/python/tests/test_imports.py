"""The package's own imports go one way (type-only imports under ``TYPE_CHECKING`` count), and
``Agent`` is what the handlers' port (ports.py) promises them."""

from __future__ import annotations

import ast
import inspect
import typing
from pathlib import Path
from typing import Dict, List, Optional, Set

import gaffer_agent
from gaffer_agent import Agent, AgentHandle

PACKAGE = Path(gaffer_agent.__file__).resolve().parent


def _package_imports(path: Path) -> Set[str]:
    """The package modules `path` imports anywhere in it (also inside ``if TYPE_CHECKING:``)."""
    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("gaffer_agent."):
            found.add(node.module.split(".")[1])  # type: ignore[union-attr]
    return found


def _cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    state: Dict[str, str] = {}
    path: List[str] = []

    def visit(m: str) -> Optional[List[str]]:
        state[m] = "open"
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == "open":
                return path[path.index(n) :] + [n]
            if n not in state:
                c = visit(n)
                if c:
                    return c
        path.pop()
        state[m] = "done"
        return None

    for m in sorted(graph):
        if m not in state:
            c = visit(m)
            if c:
                return c
    return None


def test_the_package_has_no_import_cycle_not_even_a_type_only_one() -> None:
    modules = {p.stem: p for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    graph = {name: _package_imports(path) & set(modules) for name, path in modules.items()}
    assert graph["contexts"] and graph["jobs"], "the import reader found the imports it should"
    assert _cycle(graph) is None, f"import cycle: {' -> '.join(_cycle(graph) or [])}"


def test_the_cycle_finder_finds_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def _members(cls: type) -> List[str]:
    return sorted(n for n, v in vars(cls).items() if not n.startswith("_") and (callable(v) or isinstance(v, property)))


def _shape(cls: type, name: str) -> object:
    """A member's parameters (names, kinds, defaults) and its resolved type hints."""
    v = inspect.getattr_static(cls, name)
    fn = v.fget if isinstance(v, property) else v
    sig = inspect.signature(fn)
    params = [(p.name, p.kind, p.default) for p in sig.parameters.values()]
    return (isinstance(v, property), inspect.iscoroutinefunction(fn), params, typing.get_type_hints(fn))


def test_agent_is_what_the_handlers_port_promises() -> None:
    members = _members(AgentHandle)
    assert "request" in members and "instance_id" in members
    for name in members:
        assert hasattr(Agent, name), f"Agent has no {name}"
        assert _shape(Agent, name) == _shape(AgentHandle, name), f"Agent.{name} differs from AgentHandle.{name}"


def test_the_port_leaves_out_what_only_the_agent_s_owner_calls() -> None:
    assert {"work", "work_one", "on_job", "on_precheck", "close", "start"}.isdisjoint(_members(AgentHandle))
