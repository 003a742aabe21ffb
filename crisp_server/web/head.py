"""HEAD answered wherever GET is: the same status and headers, no body (uptime monitors check with HEAD).

FastAPI routes declared with ``@app.get`` answer only GET (HEAD gets 405 or 404). This middleware serves a
HEAD request as the GET it stands for and drops the body on the way out, Content-Length included as GET
would send it (RFC 9110, 9.3.2).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def send_head(message: Message) -> None:
            if message["type"] == "http.response.body":
                if not message.get("more_body", False):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_head)
