"""The one place that knows which ``websockets`` API is installed.

``websockets`` >= 13 has the new asyncio client (``websockets.asyncio.client.connect``, headers
as ``additional_headers``, a refused upgrade raises ``InvalidStatus`` with the response body);
10.4–12 (Debian 12 ships 10.4) has only the legacy client (``websockets.legacy.client.connect``,
``extra_headers``, ``InvalidStatusCode`` without the body). Both iterate messages with
``async for``, send with ``send``, and expose ``close_code`` / ``close_reason`` after the close.
"""

from __future__ import annotations

import json
from typing import Any, Optional, Tuple

import websockets
import websockets.exceptions as wse

try:  # websockets >= 13
    from websockets.asyncio.client import connect as _connect

    NEW_API = True
except ImportError:  # websockets 10.4 – 12
    from websockets.legacy.client import connect as _connect  # type: ignore[no-redef]

    NEW_API = False

WEBSOCKETS_VERSION: str = getattr(websockets, "__version__", "?")

ConnectionClosed = wse.ConnectionClosed


async def open_socket(url: str, token: str, open_timeout: float) -> Any:
    """Opens the agent socket with the token in the Authorization header (never in the URL)."""
    headers = {"Authorization": f"Bearer {token}"}
    options = dict(
        open_timeout=open_timeout,
        max_size=16 * 1024 * 1024,
        compression=None,  # Gaffer does not offer permessage-deflate
        ping_interval=20,  # a pong (and any ping) counts as a heartbeat
        ping_timeout=20,
        close_timeout=2,
    )
    if NEW_API:
        return await _connect(url, additional_headers=headers, **options)
    return await _connect(url, extra_headers=headers, **options)


def refusal(e: BaseException) -> Optional[Tuple[int, str, str]]:
    """For a refused upgrade: ``(status, code, message)`` from the HTTP response; else None."""
    status: Optional[int] = None
    body = b""
    invalid_status = getattr(wse, "InvalidStatus", None)
    invalid_status_code = getattr(wse, "InvalidStatusCode", None)
    if invalid_status is not None and isinstance(e, invalid_status) and getattr(e, "response", None) is not None:
        status = e.response.status_code
        body = e.response.body or b""
    elif invalid_status_code is not None and isinstance(e, invalid_status_code):
        status = e.status_code
    if status is None:
        return None
    code = {401: "unauthorized", 403: "forbidden", 503: "unavailable"}.get(status, "bad_request")
    message = f"the server refused the connection (HTTP {status})"
    try:
        err = json.loads(body.decode("utf-8")).get("error", {})
        code = err.get("code", code)
        message = err.get("message", message)
    except (ValueError, AttributeError, UnicodeDecodeError):
        pass
    return status, code, message


def close_info(ws: Any) -> Tuple[int, str]:
    """The close code and reason once the socket is closed (1006 when there was no close frame)."""
    code = getattr(ws, "close_code", None)
    reason = getattr(ws, "close_reason", None)
    return (code if isinstance(code, int) else 1006, reason if isinstance(reason, str) else "")


def abort(ws: Any) -> None:
    """Drops the TCP connection at once, without a close handshake."""
    transport = getattr(ws, "transport", None)
    if transport is not None:
        transport.abort()
