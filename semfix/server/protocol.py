"""pygls's protocol, answering where the LSP (and JSON-RPC) ask for an answer and pygls gives
none: a request whose params do not read as its LSP type gets -32602 (pygls only logs it, and
the client's request stays pending for ever), a body that is not JSON -32700, a message that is
no JSON-RPC object -32600, and a request after `shutdown` -32600 (pygls drops it)."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.protocol import LanguageServerProtocol

_ANSWERED = object()  # a message already answered with an error: nothing more to do


class Protocol(LanguageServerProtocol):
    @property
    def shut_down(self) -> bool:
        """Has the client asked to shut down? `exit` then exits 0, else 1 (the spec)."""
        return self._shutdown

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:  # a request's params that are not its LSP type
            if "id" in data and "method" in data:
                self.error(data["id"], error)
            return _ANSWERED  # a notification or a response: logged by pygls, nothing to answer

    def handle_message(self, message: Any) -> None:
        if message is _ANSWERED:
            return
        if not hasattr(message, "jsonrpc"):  # valid JSON, but no JSON-RPC object (`[1, 2]`, `{}`)
            self.invalid(message.get("id") if isinstance(message, dict) else None, "not a JSON-RPC message")
            return
        method = getattr(message, "method", None)
        if self._shutdown and method not in (None, "exit") and hasattr(message, "id"):
            self.invalid(message.id, f"{method}: the server is shut down; only `exit` is taken")
            return
        super().handle_message(message)

    def invalid(self, msg_id: Any, why: str) -> None:
        self.error(msg_id, JsonRpcInvalidRequest(why))

    def unreadable(self, error: Exception) -> None:
        """A body that is not JSON (or not UTF-8): -32700, its id null, as JSON-RPC says."""
        self.error(None, JsonRpcParseError(str(error)))

    def error(self, msg_id: Any, error: JsonRpcException) -> None:
        """An error response; its `id` always there, null where the request's cannot be read
        (pygls's converter would leave a null id out)."""
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": error.code, "message": error.message}})
